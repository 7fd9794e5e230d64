/*
 * migrate.c - home migration to a page's single writer (SDSM_HOME_MIGRATE).
 *
 * The serial code (rank 0) touches two global arrays first, so rank 0 is
 * the home of all their pages.  Then:
 *   - `owned`: every region writes each thread's share again: after two
 *     intervals each page inside the share of a thread of another rank must
 *     be homed at that rank (with SDSM_HOME_MIGRATE=0: still at rank 0);
 *   - `crossed`: regions alternate between writing it by rows and by
 *     columns, so every page has several writers every other interval: its
 *     home must stay at rank 0;
 * and every value, read by the serial code and by every thread, must be
 * what the loops wrote.
 *
 *   omp_migrate_sdsm [moved|stay]   what the homes of `owned` must do
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sdsm.h"

#define PAGE  4096
#define PAGES 64
#define N     (PAGES * PAGE / (int)sizeof(long))
#define ROWS  64
#define COLS  (N / ROWS)
#define ITERS 6

static long owned[N] __attribute__((aligned(PAGE)));
static long crossed[ROWS][COLS] __attribute__((aligned(PAGE)));

/* Pages wholly inside [lo, hi) of a whose home is not `want`. */
static int misplaced(const long *a, long lo, long hi, int want, const char *name)
{
    int bad = 0;
    uintptr_t first = ((uintptr_t)&a[lo] + PAGE - 1) / PAGE, last = (uintptr_t)&a[hi] / PAGE;
    for (uintptr_t pg = first; pg < last; pg++) {
        int home = sdsm_home_of((void *)(pg * PAGE));
        if (home != want) {
            fprintf(stderr, "rank %d: page %lu of %s: home %d, expected %d\n", sdsm_rank(),
                    (unsigned long)(pg - (uintptr_t)a / PAGE), name, home, want);
            fprintf(stderr, "  (at %p)\n", (void *)(pg * PAGE));
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    int moved = !(argc > 1 && !strcmp(argv[1], "stay"));
    for (long i = 0; i < N; i++) /* rank 0 first: the home of every page */
        owned[i] = i;
    memset(crossed, 0, sizeof crossed);
    for (int it = 0; it < ITERS; it++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < N; i++)
            owned[i] += i % 7;
        if (it % 2 == 0) {
#pragma omp parallel for schedule(static)
            for (int r = 0; r < ROWS; r++)
                for (int c = 0; c < COLS; c++)
                    crossed[r][c] += r + c;
        } else {
#pragma omp parallel for schedule(static)
            for (int c = 0; c < COLS; c++)
                for (int r = 0; r < ROWS; r++)
                    crossed[r][c] += r - c;
        }
    }
    int bad = 0;
    long wrong = 0;
#pragma omp parallel reduction(+ : bad, wrong)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(), per = nt / sdsm_nprocs();
        long lo = (long)N * t / nt, hi = (long)N * (t + 1) / nt;
        for (long i = lo; i < hi; i++)
            wrong += owned[i] != i + (long)ITERS * (i % 7);
        if (t % per == 0) { /* one thread per rank checks its rank's share */
            long rlo = (long)N * t / nt, rhi = (long)N * (t + per) / nt;
            bad += misplaced(owned, rlo, rhi, moved ? sdsm_rank() : 0, "owned");
            bad += misplaced(&crossed[0][0], 0, N, 0, "crossed");
        }
    }
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            wrong += crossed[r][c] != (long)(ITERS / 2) * (r + c) + (long)(ITERS / 2) * (r - c);
    for (long i = 0; i < N; i++)
        wrong += owned[i] != i + (long)ITERS * (i % 7);
    if (bad || wrong) {
        printf("FAILED migrate: %d pages homed wrongly, %ld wrong values\n", bad, wrong);
        return 1;
    }
    printf("OK migrate %s over %d ranks\n", moved ? "moved" : "stay", sdsm_nprocs());
    return 0;
}
