/*
 * counter.c - counters incremented under locks.
 *
 *   mp_counter [K]     (default K = 200)
 *
 * Every rank adds 1, K times, to each of:
 *   c0: its own block homed at rank 0, under lock 7;
 *   c1: its own block homed at rank N-1, under a large lock id (2000000000);
 *   c2: its own block (cyclic home), under lock 1: with the runtime's
 *       placement of lock managers (id % N) lock 1 is managed by rank 1,
 *       lock 2000000000 by rank 0 and lock 7 by rank N-1, so the counters'
 *       locks live on different ranks than their data;
 *   pair[0], pair[1]: two longs on ONE page (homed at rank 1 % N), each
 *       under its own lock (INT32_MAX and 3), so two ranks may write the same
 *       page concurrently under different locks.
 * Inside each critical section the value read must be at least the number
 * of increments this rank already made to it.  After a barrier every rank
 * checks every counter equals N*K.
 */
#define MP_NAME "counter"
#include "mp.h"

#include <limits.h>

#define LOCK_C0 7
#define LOCK_C1 2000000000
#define LOCK_C2 1
#define LOCK_P0 INT_MAX
#define LOCK_P1 3

static void bump(volatile long *c, int lock, long mine, const char *what)
{
    MP_OK(sdsm_lock(lock));
    long v = *c;
    MP_ASSERT(v >= mine, "%s under lock %d reads %ld but this rank alone added %ld", what, lock, v, mine);
    *c = v + 1;
    MP_OK(sdsm_unlock(lock));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long K = argc > 1 ? atol(argv[1]) : 200;
    int n = sdsm_nprocs(), me = sdsm_rank();

    volatile long *c0 = sdsm_alloc(sizeof(long), 0);
    volatile long *c1 = sdsm_alloc(sizeof(long), n - 1);
    volatile long *c2 = sdsm_calloc(1, sizeof(long), SDSM_HOME_CYCLIC);
    volatile long *pair = sdsm_alloc(2 * sizeof(long), 1 % n);
    MP_NONNULL(c0);
    MP_NONNULL(c1);
    MP_NONNULL(c2);
    MP_NONNULL(pair);
    MP_CHECK("c0 fresh", 0, 0, *c0);
    MP_CHECK("pair fresh", 1, 0, pair[1]);
    MP_OK(sdsm_barrier());

    for (long k = 0; k < K; k++) {
        bump(c0, LOCK_C0, k, "c0");
        bump(c1, LOCK_C1, k, "c1");
        bump(c2, LOCK_C2, k, "c2");
        /* Start the pair on different locks depending on parity: ranks chase each other. */
        if ((me + k) & 1) {
            bump(&pair[0], LOCK_P0, k, "pair[0]");
            bump(&pair[1], LOCK_P1, k, "pair[1]");
        } else {
            bump(&pair[1], LOCK_P1, k, "pair[1]");
            bump(&pair[0], LOCK_P0, k, "pair[0]");
        }
    }
    MP_OK(sdsm_barrier());

    long want = (long)n * K;
    MP_CHECK("c0", 0, want, *c0);
    MP_CHECK("c1", 0, want, *c1);
    MP_CHECK("c2", 0, want, *c2);
    MP_CHECK("pair", 0, want, pair[0]);
    MP_CHECK("pair", 1, want, pair[1]);

    /* And once more under the locks: an acquire must also see the totals. */
    MP_OK(sdsm_lock(LOCK_C1));
    MP_CHECK("c1 under lock", 0, want, *c1);
    MP_OK(sdsm_unlock(LOCK_C1));
    MP_OK(sdsm_barrier());
    return mp_finish("counter");
}
