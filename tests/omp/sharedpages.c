/*
 * sharedpages.c - barriers between threads that write halves of the same
 * pages, one of them late.  Thread t owns half a page of a heap array
 * (first touched by t, so each page's home is one of its two writers) and
 * a row of a global array (homed at the first rank).  In every round the
 * threads of one parity compute for a few milliseconds first, so the
 * others reach the barrier while they still write their halves of pages
 * their partners already released; then every thread checks every half
 * and row.  Under sdsm a barrier arrival whose pages have several homes is
 * held at those homes until the barrier completes (docs/guide/openmp.md,
 * "Flags and flush"): a late writer of such a page waits for the early one's quiet
 * thread to announce the arrival and lift it.  It once waited forever when
 * the arrival's pages written at their home were not announced, so that no
 * lift reached the other page's home.  Arguments: rounds (30), busy
 * milliseconds (3).
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define MAXT 16
#define HALF 256 /* longs: half a 4 KiB page */
#define ROW  512

static long grow[MAXT][ROW];
static long own[MAXT][ROW]; /* read by its writer only */

static void busy(double ms)
{
    double t0 = omp_get_wtime();
    volatile unsigned long x = 0;
    while ((omp_get_wtime() - t0) * 1000 < ms)
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i * 7;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    double ms = argc > 2 ? atof(argv[2]) : 3;
    if (rounds < 1)
        rounds = 30;
    long *halves = aligned_alloc(4096, (size_t)MAXT * HALF * sizeof(long));
    if (!halves)
        return 2;
    long stale = 0, gstale = 0;
    int nthreads = 0;
#pragma omp parallel reduction(+ : stale, gstale)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nthreads = n;
        if (n <= MAXT) {
            long *mine = halves + (size_t)t * HALF;
            /* First touch: the odd thread of each pair touches the page,
             * so its home is the late writer's in odd rounds. */
            if ((t & 1) || t + 1 == n)
                for (int w = (t & 1) ? -HALF : 0; w < HALF; w++)
                    mine[w] = -1;
#pragma omp barrier
            for (int r = 1; r <= rounds; r++) {
                if ((t & 1) == (r & 1))
                    busy(ms);
                for (int w = 0; w < HALF; w++)
                    mine[w] = (long)r * 1000003 + t * HALF + w;
                /* The rows others read change in even rounds only; in odd
                 * ones the first rank's threads write pages at their home
                 * that nobody else holds (own), which are not announced. */
                int g = r & ~1;
                if (g == r)
                    for (int w = 0; w < ROW; w++)
                        grow[t][w] = (long)r * 999983 + t * ROW + w;
                for (int w = 0; w < ROW; w++)
                    own[t][w] = r + w;
#pragma omp barrier
                for (int u = 0; u < n; u++) {
                    for (int w = 0; w < HALF; w++)
                        stale += halves[(size_t)u * HALF + w] != (long)r * 1000003 + u * HALF + w;
                    for (int w = 0; w < ROW && g; w++)
                        gstale += grow[u][w] != (long)g * 999983 + u * ROW + w;
                }
                for (int w = 0; w < ROW; w++)
                    gstale += own[t][w] != r + w;
#pragma omp barrier
            }
        }
    }
    if (nthreads > MAXT)
        return 2;
    if (stale || gstale)
        fprintf(stderr, "sharedpages: %ld stale words in shared pages, %ld in global rows\n", stale, gstale);
    ot_check(stale == 0 && gstale == 0, "%d rounds of half pages written around a late thread, no stale word",
             rounds);
    free(halves);
    return ot_done();
}
