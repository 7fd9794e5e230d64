/*
 * ibecmisuse.c - the misuse ibec's check mode (SDSM_IBEC_CHECK=1) reports:
 * data written outside any critical section and read by another rank
 * before the next barrier.
 *
 *   mp_ibecmisuse MODE HOME
 *
 * One block of three pages homed at rank HOME.  Every rank first reads page
 * 0's long x (so every rank holds a copy, as in an iterative program);
 * then, in the epoch under test, rank 0 writes x = 42 and:
 *   misuse  the other ranks read x before the barrier, outside any lock
 *           (under ibec they may see the old value: a report per reader);
 *   lock    rank 0 writes x inside lock 1 and the others read it inside
 *           lock 1 (correct under ibec: no report);
 *   after   the others read x only after a barrier (correct: no report);
 *   lockfetch  (rank 1 must not be HOME) rank 0 writes x inside lock 1, then
 *           y (another long of page 0) outside any lock, then raises a flag
 *           (page 2) under lock 2; rank 1, which does not hold page 0,
 *           waits for the flag, takes lock 1 (whose diffL makes it fetch
 *           page 0) and reads y: one report, by rank 1 (its read must be
 *           seen though the page came with a lock, not with a fault).
 * In the same epoch every rank writes its own long of page 1 and reads none
 * of the others' (multiple writers of one page, correct: no report).  At the
 * end every rank checks x and page 1 exactly.
 */
#define MP_NAME "ibecmisuse"
#include "mp.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "misuse";
    int home = argc > 2 ? atoi(argv[2]) : 0;
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t pl = mp_page_size() / sizeof(long);
    MP_ASSERT(home >= 0 && home < n, "HOME %d is not a rank", home);
    int lockfetch = !strcmp(mode, "lockfetch");
    MP_ASSERT(!strcmp(mode, "misuse") || !strcmp(mode, "lock") || !strcmp(mode, "after") || lockfetch,
              "unknown MODE '%s'", mode);
    MP_ASSERT(!lockfetch || (n >= 2 && home != 1), "lockfetch needs rank 1, not as HOME");
    volatile long *p = sdsm_alloc(3 * mp_page_size(), home);
    MP_NONNULL(p);
    volatile long *x = p, *y = p + 16, *flag = p + 2 * pl, *mine = p + pl + 8 * (size_t)me;
    MP_ASSERT(8 * (size_t)n < pl, "too many ranks for one page of longs");
    MP_OK(sdsm_barrier());

    long seen = 0;
    if (!(lockfetch && me == 1))
        seen = *x; /* every rank holds page 0 from now on */
    MP_CHECK("x before", 0, 0, seen);
    MP_OK(sdsm_barrier());

    if (lockfetch) {
        if (me == 0) {
            MP_OK(sdsm_lock(1));
            *x = 42;
            MP_OK(sdsm_unlock(1));
            *y = 7; /* the misuse */
            MP_OK(sdsm_lock(2));
            *flag = 1;
            MP_OK(sdsm_unlock(2));
        } else if (me == 1) {
            for (long f = 0; !f;) {
                MP_OK(sdsm_lock(2));
                f = *flag;
                MP_OK(sdsm_unlock(2));
            }
            MP_OK(sdsm_lock(1)); /* brings page 0, to apply rank 0's diffL */
            MP_OK(sdsm_unlock(1));
            seen = *y;
        }
        MP_OK(sdsm_barrier());
        MP_CHECK("x", 0, 42, *x);
        MP_CHECK("y", 0, 7, *y);
        MP_OK(sdsm_barrier());
        return mp_finish(mode);
    }

    int in_lock = !strcmp(mode, "lock");
    if (me == 0) {
        if (in_lock)
            MP_OK(sdsm_lock(1));
        *x = 42;
        if (in_lock)
            MP_OK(sdsm_unlock(1));
    } else if (in_lock) {
        MP_OK(sdsm_lock(1));
        seen = *x; /* 0 or 42, by lock order */
        MP_OK(sdsm_unlock(1));
        MP_ASSERT(seen == 0 || seen == 42, "x inside lock 1 is %ld", seen);
    } else if (!strcmp(mode, "misuse")) {
        mp_sleep_ms(20);
        seen = *x; /* the misuse: rank 0's write travels only at the barrier */
    }
    *mine = me + 1;
    MP_OK(sdsm_barrier());

    if (!strcmp(mode, "after") && me != 0)
        MP_CHECK("x after the barrier", 0, 42, *x);
    MP_OK(sdsm_barrier());
    MP_CHECK("x", 0, 42, *x);
    for (int r = 0; r < n; r++)
        MP_CHECK("page 1", r, r + 1, p[pl + 8 * (size_t)r]);
    MP_OK(sdsm_barrier());
    return mp_finish(mode);
}
