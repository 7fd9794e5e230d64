/*
 * ibecmisuse.c - the misuse ibec's check mode (SDSM_IBEC_CHECK=1) reports:
 * data written outside any critical section and read by another rank
 * before the next barrier.
 *
 *   mp_ibecmisuse MODE HOME
 *
 * One block of two pages homed at rank HOME.  Every rank first reads page
 * 0's long x (so every rank holds a copy, as in an iterative program);
 * then, in the epoch under test, rank 0 writes x = 42 and:
 *   misuse  the other ranks read x before the barrier, outside any lock
 *           (under ibec they may see the old value: a report per reader);
 *   lock    rank 0 writes x inside lock 1 and the others read it inside
 *           lock 1 (correct under ibec: no report);
 *   after   the others read x only after a barrier (correct: no report).
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
    MP_ASSERT(!strcmp(mode, "misuse") || !strcmp(mode, "lock") || !strcmp(mode, "after"),
              "unknown MODE '%s'", mode);
    volatile long *p = sdsm_alloc(2 * mp_page_size(), home);
    MP_NONNULL(p);
    volatile long *x = p, *mine = p + pl + 8 * (size_t)me;
    MP_ASSERT(8 * (size_t)n < pl, "too many ranks for one page of longs");
    MP_OK(sdsm_barrier());

    long seen = *x; /* every rank holds page 0 from now on */
    MP_CHECK("x before", 0, 0, seen);
    MP_OK(sdsm_barrier());

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
