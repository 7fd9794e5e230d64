/*
 * ownwrites.c - a rank always sees its own writes, while the home of the
 * page keeps writing other bytes of it and releasing (which invalidates the
 * rank's copy and flushes the rank's diff home early).
 *
 *   mp_ownwrites [SECONDS]     (default 1.5)
 *
 * One block of 4 pages homed at rank 0.  For SECONDS, rank 0 repeatedly
 * writes long 0 of every page under lock 1 (each unlock invalidates every
 * other copy).  Meanwhile each rank r >= 1 writes its own long (index 8*r)
 * of every page, last page first, then reads its long of page 0 back 20
 * times: program order says it must read what it just wrote, whatever the
 * invalidations do.  The program is free of data races (different bytes,
 * and rank r >= 1 synchronizes only at the barriers).  At the
 * end every rank writes a final value into its longs, barrier, and
 * everyone checks every rank's longs in every page.
 */
#define MP_NAME "ownwrites"
#include "mp.h"

#define NPAGES 4

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    double secs = argc > 1 ? atof(argv[1]) : 1.5;
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t pl = mp_page_size() / sizeof(long); /* longs per page */
    MP_ASSERT((size_t)8 * n < pl, "too many ranks for one page of longs");
    volatile long *p = sdsm_alloc(NPAGES * mp_page_size(), 0);
    MP_NONNULL(p);
    MP_OK(sdsm_barrier());

    double end = sdsm_wtime() + secs;
    long rounds = 0;
    if (me == 0) {
        for (long k = 1; sdsm_wtime() < end; k++, rounds++) {
            MP_OK(sdsm_lock(1));
            for (int g = 0; g < NPAGES; g++)
                p[(size_t)g * pl] = k;
            MP_OK(sdsm_unlock(1));
        }
    } else {
        size_t mine = (size_t)8 * (size_t)me;
        for (long k = 1; sdsm_wtime() < end; k++, rounds++) {
            for (int g = NPAGES - 1; g >= 0; g--)
                p[(size_t)g * pl + mine] = k;
            for (int i = 0; i < 20; i++) {
                long v = p[mine];
                if (v != k)
                    sdsm_abort(1,
                               "%s: rank %d: own long %zu of page 0 (read %d after writing it, "
                               "round %ld): expected %ld, got %ld",
                               MP_NAME, me, mine, i, k, k, v);
            }
        }
    }

    /* Final values, then everyone checks everything. */
    for (int g = 0; g < NPAGES; g++)
        p[(size_t)g * pl + (size_t)8 * (size_t)me] = -1000 - me;
    MP_OK(sdsm_barrier());
    for (int g = 0; g < NPAGES; g++)
        for (int r = 0; r < n; r++) {
            size_t i = (size_t)g * pl + (size_t)8 * (size_t)r;
            MP_CHECK("final long of rank", i, -1000 - r, p[i]);
        }
    if (me == 0)
        fprintf(stderr, "ownwrites: rank 0 made %ld releases in %.1f s\n", rounds, secs);
    MP_OK(sdsm_barrier());
    return mp_finish("ownwrites");
}
