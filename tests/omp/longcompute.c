/*
 * longcompute.c - a healthy OpenMP program whose parts each compute longer
 * than SDSM_HANG_REPORT without a runtime call: a serial part (the team's
 * other threads wait in the start barrier, the ranks' main threads in
 * sdsm_thread_join), then a parallel region where every thread computes.
 * Run with SDSM_HANG_REPORT=1: no hang report may be printed.
 *
 *   omp_longcompute_sdsm [SECONDS]   each part computes this long (2.5)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy for s seconds, calling nothing of the runtime. */
static void compute(double s)
{
    double until = now() + s;
    volatile unsigned long n = 0;
    while (now() < until)
        n++;
}

int main(int argc, char **argv)
{
    double s = argc > 1 ? atof(argv[1]) : 2.5;
    compute(s);
    int threads = 0, team = 0;
#pragma omp parallel reduction(+ : threads)
    {
        compute(s);
        threads += 1;
#pragma omp master
        team = omp_get_num_threads();
    }
    if (threads != team || team < 1) {
        printf("FAILED longcompute: %d threads counted in a team of %d\n", threads, team);
        return 1;
    }
    printf("OK longcompute\n");
    return 0;
}
