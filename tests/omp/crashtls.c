/*
 * crashtls.c - the last thread of the team (at rank 1 in a 2-rank job)
 * follows a pointer into the master's threadprivate variable.  That used
 * to be private memory of rank 0 (a crash, reported as rank 0's
 * thread-local storage); the master's thread-local storage now lives in
 * shared memory, so the read returns the master's value (3).
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
            printf("crashtls: thread %d of %d read %d\n", omp_get_thread_num(), omp_get_num_threads(),
                   *master_tls);
    }
    printf("OK crashtls\n");
    return 0;
}
