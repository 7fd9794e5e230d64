/*
 * crashtls.c - the last thread of the team (at rank 1 in a 2-rank job)
 * follows a pointer into the master's threadprivate variable: private
 * memory of rank 0, unmapped at rank 1.  The crash line must name it as
 * rank 0's thread-local storage (tests/mp/crash_test.sh checks it).
 * Where the address happens to be mapped at the reading rank (another
 * thread's stack there), the read returns garbage and nothing crashes:
 * the 2-rank, 1-thread job is the one that crashes.
 */
#include <omp.h>
#include <stdio.h>

static int tpv;
#pragma omp threadprivate(tpv)
int *volatile master_tls;

int main(void)
{
    tpv = 3;
    master_tls = &tpv;
#pragma omp parallel
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            printf("crashtls: thread %d of %d read %d\n", omp_get_thread_num(),
                   omp_get_num_threads(), *master_tls);
    }
    printf("OK crashtls\n");
    return 0;
}
