/*
 * flagping.c - two threads of a team pass a token back and forth through
 * plain shared flags and `omp flush` (no runtime call), ROUNDS times, and
 * print the mean round trip.  Under sdsm the two threads are on two ranks:
 * each pass is a flag written on one rank and seen by a thread spinning on
 * the other (SDSM_QUIET_US).  bench/flags runs it.
 *
 *   flagping [ROUNDS]   prints "flagping: R round trips, X us each"
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int ping, pong;

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    double t0 = 0, t1 = 0;
    int team = 0;
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
#pragma omp single
        team = omp_get_num_threads();
        if (team == 2) {
#pragma omp barrier
            if (me == 0)
                t0 = omp_get_wtime();
            for (int r = 1; r <= rounds; r++) {
                if (me == 0) {
                    ping = r;
#pragma omp flush
                    while (pong != r) {
#pragma omp flush
                    }
                } else {
                    while (ping != r) {
#pragma omp flush
                    }
                    pong = r;
#pragma omp flush
                }
            }
            if (me == 0)
                t1 = omp_get_wtime();
        }
    }
    if (team != 2) {
        fprintf(stderr, "flagping: needs a team of 2 threads, got %d\n", team);
        return 2;
    }
    printf("flagping: %d round trips, %.1f us each\n", rounds, (t1 - t0) * 1e6 / rounds);
    return 0;
}
