/*
 * lockcache.c - locks that stay with their last holder (hlrc, update) must
 * still carry every write to the next holder, whichever way they move.
 *
 *   mp_lockcache [K] [TURNS]     (defaults 50 and 20)
 *
 * Lock j (j = 0..N-1) guards cnt[j]; all counters are on one page homed at
 * rank 0, and the locks are managed by various ranks.
 *  1. Rounds: in round k rank r takes lock (r + k) % N K times in a row,
 *     adding 1 each time.  The first take moves the lock from the rank
 *     that had it in round k - 1 (kept there since), the others find it
 *     still here.  Each take checks the value is what it must be: K * k
 *     before this round's first addition, then its own additions.
 *  2. Contention: every rank takes lock N (guarding cnt[N]) K times, as fast
 *     as it can, so the lock is passed on while others queue behind it.
 *  3. Turns: a token goes round the ranks TURNS times under lock N + 1: a
 *     rank waits (taking and releasing the lock) until turn == its rank,
 *     then adds 1 to cnt[N + 1] and hands the turn on, with no barrier in
 *     between, so every hand-over is a lock passed between two ranks.
 * After a barrier every rank checks every counter.
 */
#define MP_NAME "lockcache"
#include "mp.h"

static void add(volatile long *c, int lock, long expect, const char *what)
{
    MP_OK(sdsm_lock(lock));
    long v = *c;
    MP_ASSERT(expect < 0 || v == expect, "%s under lock %d reads %ld, expected %ld", what, lock, v, expect);
    *c = v + 1;
    MP_OK(sdsm_unlock(lock));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long K = argc > 1 ? atol(argv[1]) : 50;
    long turns = argc > 2 ? atol(argv[2]) : 20;
    int n = sdsm_nprocs(), me = sdsm_rank();

    volatile long *cnt = sdsm_calloc((size_t)n + 3, sizeof(long), 0);
    MP_NONNULL(cnt);
    MP_OK(sdsm_barrier());

    for (int k = 0; k < n; k++) { /* 1 */
        int j = (me + k) % n;
        for (long i = 0; i < K; i++)
            add(&cnt[j], j, K * k + i, "rounds");
        MP_OK(sdsm_barrier());
    }

    for (long i = 0; i < K; i++) /* 2 */
        add(&cnt[n], n, -1, "contention");

    volatile long *turn = &cnt[n + 2]; /* 3 */
    for (long t = 0; t < turns; t++) {
        for (;;) {
            MP_OK(sdsm_lock(n + 1));
            if (*turn == (long)me)
                break;
            MP_OK(sdsm_unlock(n + 1));
        }
        long v = cnt[n + 1];
        MP_ASSERT(v == t * n + me, "turns: cnt reads %ld at turn %ld of rank %d, expected %ld", v, t, me,
                  t * n + me);
        cnt[n + 1] = v + 1;
        *turn = (me + 1) % n;
        MP_OK(sdsm_unlock(n + 1));
    }
    MP_OK(sdsm_barrier());

    for (int j = 0; j < n; j++)
        MP_CHECK("cnt", j, (long)n * K, cnt[j]);
    MP_CHECK("cnt", n, (long)n * K, cnt[n]);
    MP_CHECK("cnt", n + 1, (long)n * turns, cnt[n + 1]);
    return mp_finish("lockcache");
}
