/*
 * flagpipe.c - threads synchronized by a shared flag array read and
 * written with plain accesses and `omp flush`, as NPB LU's pipelined SSOR
 * does (its sync_left / sync_right): thread t waits until thread t-1 has
 * finished plane k, consumes its flag, works, then waits until thread t+1
 * has consumed its own flag and raises it.  The OpenMP memory model makes
 * this program correct; under sdsm a flag written on one rank must reach a
 * thread spinning on another without any runtime call by either (it hung
 * at every multi-rank run before quiet ranks published their writes).
 * Each plane's value depends on the previous thread's value of the same
 * plane, so a value read too early shows in the checksum.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define PLANES 60
#define MAXT   64

static int flag[MAXT];
static long val[PLANES][MAXT];

static void wait_left(int t)
{
    if (t == 0)
        return;
#pragma omp flush(flag)
    while (flag[t - 1] == 0) {
#pragma omp flush(flag)
    }
    flag[t - 1] = 0;
#pragma omp flush(flag)
}

static void signal_right(int t, int n)
{
    if (t == n - 1)
        return;
#pragma omp flush(flag)
    while (flag[t] == 1) {
#pragma omp flush(flag)
    }
    flag[t] = 1;
#pragma omp flush(flag)
}

int main(int argc, char **argv)
{
    int planes = argc > 1 ? atoi(argv[1]) : PLANES;
    if (planes < 1 || planes > PLANES)
        planes = PLANES;
    int bad = 0, nthreads = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nthreads = n;
        if (n <= MAXT) {
            for (int k = 0; k < planes; k++) {
                wait_left(t);
                long left = t ? val[k][t - 1] : k;
                val[k][t] = left * 3 + t + 1;
#pragma omp flush(val)
                signal_right(t, n);
            }
        }
    }
    if (nthreads > MAXT)
        return 2;
    for (int k = 0; k < planes; k++) {
        long v = k;
        for (int t = 0; t < nthreads; t++) {
            v = v * 3 + t + 1;
            bad += val[k][t] != v;
        }
    }
    ot_check(bad == 0, "%d planes passed down the pipeline of threads", planes);
    return ot_done();
}
