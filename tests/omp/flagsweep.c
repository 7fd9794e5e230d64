/*
 * flagsweep.c - the shape of NPB LU's SSOR: a forward sweep in which thread
 * t waits for thread t-1 before each plane, and a backward sweep in which
 * it waits for thread t+1, each ended by a barrier, synchronized by plain
 * flags and `omp flush`.  A row of every plane is longer than a page, so
 * the pages a thread writes are shared with the rows before and after
 * them, and a reader checks every word it reads.  Under sdsm the rows of
 * the first thread lie at its home: at 3 ranks its last plane's flag was
 * now and then written at the home while an invalidation of the flag
 * page's last copy was in flight (no twin hid it), taken by the barrier's
 * release, and served as it was while the reader's copy of the plane's
 * first page, written just before, stayed valid: a few stale words at the
 * head of the last row (serve.c, unshared_written; release.c, exposed).
 * Arguments: sweeps (200), planes per sweep (3, at most 30).
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define MAXT   16
#define ROW    900 /* doubles: 7,200 bytes, so rows straddle pages */
#define PLANES 30
#define SWEEPS 200

static int flag[MAXT];
static int planes = 3; /* a barrier every 3 planes: it failed most runs at 3 ranks */
#ifdef FLAGSWEEP_HEAP
/* Built with -DFLAGSWEEP_HEAP, the rows are on the heap, whose pages are
 * homed by first touch unless the program holds a flush (this one does):
 * flags and rows homed at different ranks let a reader see a new flag
 * with its old copy of the row (heap.c, policy_from_env). */
static double (*row)[PLANES][ROW];
#else
static double row[MAXT][PLANES][ROW];
#endif

static void wait_while(int *f, int v)
{
    while (*f == v) {
#pragma omp flush(flag)
    }
}

static double stamp(int sweep, int k, int t, int w, int dir)
{
    return dir * ((double)sweep * 1000 + k * 7 + t + w);
}

/* Thread t's share of one sweep: dir 1 forward (t waits for t - 1),
 * -1 backward (t waits for t + 1).  Returns the stale words seen. */
static long sweep(int s, int t, int n, int dir)
{
    long stale = 0;
    int from = t - dir, to = t + dir;
    int has_from = from >= 0 && from < n, has_to = to >= 0 && to < n;
    for (int i = 0; i < planes; i++) {
        int k = dir > 0 ? i : planes - 1 - i;
        if (has_from) {
            wait_while(&flag[from], 0);
            for (int w = 0; w < ROW; w++)
                stale += row[from][k][w] != stamp(s, k, from, w, dir);
        }
        if (has_to)
            wait_while(&flag[t], 1);
        for (int w = 0; w < ROW; w++)
            row[t][k][w] = stamp(s, k, t, w, dir);
#pragma omp flush
        if (has_from)
            flag[from] = 0;
        if (has_to)
            flag[t] = 1;
#pragma omp flush(flag)
    }
    return stale;
}

int main(int argc, char **argv)
{
    int sweeps = argc > 1 ? atoi(argv[1]) : SWEEPS;
    if (sweeps < 1)
        sweeps = SWEEPS;
    if (argc > 2 && atoi(argv[2]) >= 1 && atoi(argv[2]) <= PLANES)
        planes = atoi(argv[2]);
    long stale = 0;
    int nthreads = 0;
#ifdef FLAGSWEEP_HEAP
    if (!(row = calloc(MAXT, sizeof *row)))
        return 3;
#endif
#pragma omp parallel reduction(+ : stale)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nthreads = n;
        if (n <= MAXT) {
            for (int s = 1; s <= sweeps; s++) {
                stale += sweep(s, t, n, 1);
#pragma omp barrier
                stale += sweep(s, t, n, -1);
#pragma omp barrier
            }
        }
    }
    if (nthreads > MAXT)
        return 2;
    if (stale)
        fprintf(stderr, "flagsweep: %ld stale words\n", stale);
    ot_check(stale == 0, "%d forward and backward sweeps of %d planes behind flags, no stale word", sweeps,
             planes);
    return ot_done();
}
