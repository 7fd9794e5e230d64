/*
 * bcast.c - many sdsm_bcast rounds in one program, each checked on every
 * rank: the root changes from round to round, another rank writes the range
 * just before (writes the broadcast must override), and the root sends
 * either what it last saw (zeros at first) or its own new writes.  Copies of
 * the pages are spread over the ranks (each rank reads the range before
 * some rounds), so the broadcast meets copies that are stale, fresh, being
 * written or being refreshed by the barrier.  A lost or stale update shows
 * as a wrong value on some rank in some round.
 */
#define PT_NAME "bcast"
#include "pt.h"

#define ROUNDS 150
#define NELEM  2048 /* 4 pages of 4 KiB: homes on up to 4 ranks */

static long value(long base, int i) { return base ? base + i : 0; }

static void check(volatile long *a, long base, int round, int root)
{
    for (int i = 0; i < NELEM; i++)
        if (a[i] != value(base, i))
            sdsm_abort(1, "%s: rank %d: round %d (root %d): a[%d] after sdsm_bcast: expected %ld, got %ld",
                       PT_NAME, sdsm_rank(), round, root, i, value(base, i), a[i]);
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    if (n < 2)
        sdsm_abort(2, "bcast needs 2 ranks or more");
    volatile long *a = sdsm_calloc(NELEM, sizeof(long), SDSM_HOME_BLOCK);
    long cur = 0; /* base of the contents every rank agrees on (0: zeros) */
    for (int r = 0; r < ROUNDS; r++) {
        int root = (r * 5 + r / n) % n;
        int writer = (root + 1 + r % (n - 1)) % n; /* never the root */
        int fresh = (r / 2) % 2;                   /* root sends its own new writes */
        long sum = 0;
        /* The root holds copies of the current contents (a page it does
         * not hold it would read from its home, where the home's own
         * concurrent writes may show); of the others some do, some not. */
        if (me == root || (r + me) % 3 != 0)
            for (int i = 0; i < NELEM; i += 64)
                sum += a[i];
        sdsm_barrier();
        if (me == writer)
            for (int i = 0; i < NELEM; i++)
                a[i] = 1000000L * (r + 1) + 500000 + i; /* to be overridden */
        long next = fresh ? (r % 5 == 0 ? 0 : 1000000L * (r + 1)) : cur;
        if (me == root && fresh)
            for (int i = 0; i < NELEM; i++)
                a[i] = value(next, i);
        sdsm_bcast((void *)a, NELEM * sizeof(long), root);
        check(a, next, r, root);
        cur = next;
        sdsm_barrier(); /* everyone has checked before the next round writes */
        (void)sum;
    }
    sdsm_free((void *)a);
    pt_ok();
    return 0;
}
