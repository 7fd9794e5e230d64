/*
 * rowplace.c - where the rows a master thread mallocs one by one are homed.
 *
 * NPB MG allocates each row of its grids (2,064 bytes at class A) with its
 * own malloc on the master, then works on them in static loops.  Under
 * first touch (SDSM_OMP_HOME unset) each page of rows must be homed at the
 * rank whose thread first writes it, not at the rank that allocated the
 * rows: the allocator's own bookkeeping must not touch the rows' pages.
 * The rows of one size come out of the allocator one after the other here
 * (checked: the test fails if not, since then it checks nothing); a
 * thread's share is a run of rows, and every page wholly inside it must be
 * homed at the thread's rank (before the allocator kept its headers apart
 * from small blocks, every one was homed at rank 0).  Then the master reads every row back, and
 * frees and reallocates a few (blocks another rank's thread wrote).
 */
#include <malloc.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdsm.h"

#define PAGE   4096
#define ROWS   384
#define ROWLEN 258 /* doubles: 2,064 bytes, MG.A's rows */

int main(void)
{
    double **row = malloc(ROWS * sizeof *row);
    for (int i = 0; i < ROWS; i++)
        row[i] = malloc(ROWLEN * sizeof(double));
    /* one after the other, a fixed stride apart */
    size_t usable = malloc_usable_size(row[0]);
    uintptr_t stride = (uintptr_t)row[1] - (uintptr_t)row[0];
    int apart = stride < ROWLEN * sizeof(double) || stride > usable + 64;
    for (int i = 1; i < ROWS; i++)
        apart |= (uintptr_t)row[i] - (uintptr_t)row[i - 1] != stride;
    int bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int lo = ROWS * t / nt, hi = ROWS * (t + 1) / nt;
        /* Backwards: a forward sweep claims pages ahead of it (proto/claim.c),
         * which may take a few of the next thread's, a cost the claims accept;
         * backwards each page is claimed alone, by the thread that writes it. */
        for (int i = hi - 1; i >= lo; i--)
            for (int j = ROWLEN - 1; j >= 0; j--)
                row[i][j] = i * 1000.0 + j;
#pragma omp barrier
        /* pages wholly inside this thread's rows [lo, hi) */
        uintptr_t first = ((uintptr_t)row[lo] + PAGE - 1) / PAGE;
        uintptr_t last = ((uintptr_t)row[hi - 1] + ROWLEN * sizeof(double)) / PAGE;
        for (uintptr_t pg = first; pg < last && !apart; pg++) {
            int home = sdsm_home_of((void *)(pg * PAGE));
            if (home != sdsm_rank()) {
                fprintf(stderr, "rows of thread %d: page %lu homed at rank %d, the thread's is %d\n", t,
                        (unsigned long)(pg - first), home, sdsm_rank());
                bad++;
            }
        }
    }
    double sum = 0, want = 0;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < ROWLEN; j++) {
            sum += row[i][j];
            want += i * 1000.0 + j;
        }
    /* free and allocate again: same size, then larger (realloc keeps the data) */
    for (int i = 0; i < ROWS; i += 7) {
        free(row[i]);
        row[i] = calloc(ROWLEN, sizeof(double));
        bad += row[i][ROWLEN - 1] != 0.0;
        row[i][0] = 1.5;
        row[i] = realloc(row[i], 4 * ROWLEN * sizeof(double));
        bad += row[i][0] != 1.5 || malloc_usable_size(row[i]) < 4 * ROWLEN * sizeof(double);
    }
    if (apart || bad || sum != want) {
        printf("FAILED rowplace: rows %s, %d misplaced pages or wrong blocks, sum %.1f (want %.1f)\n",
               apart ? "not one after the other" : "in a run", bad, sum, want);
        return 1;
    }
    printf("OK rowplace over %d ranks\n", sdsm_nprocs());
    return 0;
}
