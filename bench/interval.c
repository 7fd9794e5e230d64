/*
 * interval.c - the cost of a write interval on pages nobody else holds,
 * under the protocol SDSM_PROTOCOL selects (bench/micro runs it under hlrc
 * and ibec and prints the ratio).  Run under sdsmrun, any number of ranks:
 *
 *   interval PAGES COUNT BATCHES   COUNT intervals per batch: every rank
 *                                  writes one word of each of PAGES pages of
 *                                  its own block (homed at it), then a barrier
 *   interval PAGES COUNT BATCHES shared
 *                                  the same, and after the barrier every rank
 *                                  reads one word of each page of the next
 *                                  rank's block: the pages are held by others,
 *                                  so the home write-protects them at each
 *                                  release (a write fault per page per
 *                                  interval, unless SDSM_WRITE_AHEAD opens a
 *                                  sweep's pages in runs)
 *
 * One warm-up batch (first touch) is run first and not reported.  Rank 0
 * prints per batch, like sdsm_micro:
 *   sample interval <ns per interval>
 *   sample interval_faults <write faults per interval>   (its counters)
 *   sample interval_twins <twins per interval>
 *   sample interval_rounds <barrier arrival messages per interval>
 */
#include <sdsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/stats.h"
#include "net/msg.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t stat(sdsm_stat_t s) { return atomic_load(&sdsm_stats.v[s]); }
static uint64_t arrivals(void) { return stat(SDSM_ST_BARRIER_ROUNDS); }

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    long pages = argc > 1 ? atol(argv[1]) : 64, count = argc > 2 ? atol(argv[2]) : 200;
    long batches = argc > 3 ? atol(argv[3]) : 3;
    int shared = argc > 4 && strcmp(argv[4], "shared") == 0;
    if (pages < 1 || count < 1 || batches < 1)
        sdsm_abort(2, "usage: interval PAGES COUNT BATCHES (all >= 1)");
    long ps = sysconf(_SC_PAGESIZE), words = ps / (long)sizeof(long);
    int me = sdsm_rank(), n = sdsm_nprocs();
    long *a = sdsm_alloc((size_t)(n * pages * ps), SDSM_HOME_BLOCK);
    long *mine = a + (long)me * pages * words;
    volatile long *next = a + (long)((me + 1) % n) * pages * words;
    long sum = 0;
    for (long b = 0; b <= batches; b++) {
        sdsm_barrier();
        uint64_t f0 = stat(SDSM_ST_WRITE_FAULTS), w0 = stat(SDSM_ST_TWINS), r0 = arrivals();
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++) {
            for (long p = 0; p < pages; p++)
                mine[p * words + i % words] = i;
            sdsm_barrier();
            for (long p = 0; shared && p < pages; p++)
                sum += next[p * words];
        }
        uint64_t t1 = now_ns();
        if (b > 0 && me == 0) {
            double c = (double)count;
            printf("sample interval %.1f\n", (double)(t1 - t0) / c);
            printf("sample interval_faults %.2f\n", (double)(stat(SDSM_ST_WRITE_FAULTS) - f0) / c);
            printf("sample interval_twins %.2f\n", (double)(stat(SDSM_ST_TWINS) - w0) / c);
            printf("sample interval_rounds %.2f\n", (double)(arrivals() - r0) / c);
            fflush(stdout);
        }
    }
    sdsm_finalize();
    return sum == -1; /* the reads are not optimized away */
}
