/*
 * chain.c - release consistency is transitive through chains of locks and
 * condition variables (the guarantee in sdsm.h: writes before a release are
 * visible after any acquire the release happens-before).
 *
 *   mp_chain [ROUNDS]     (default 3 rounds of each kind)
 *
 * Before each round every rank reads all the data, so everyone holds (soon
 * stale) copies.  Then a token travels 0 -> 1 -> ... -> N-1: rank r waits
 * until rank r-1 has set flag[r-1] (under lock 300+r-1, polled or with
 * sdsm_cond_wait on cond 400+r-1), checks it sees the data of every rank
 * before it (ranks < r-1 only reach it transitively, through r-1), writes
 * its own data with plain stores outside any lock, and passes the token on
 * under its own lock.  Kinds of round:
 *   0  poll the flag with lock/unlock, data on one page per rank (homed at
 *      the next rank);
 *   1  sdsm_cond_wait/broadcast on the flag, same data layout;
 *   2  poll, all ranks' data interleaved on ONE shared page.
 * After each round a barrier, and everyone checks everything.
 */
#define MP_NAME "chain"
#include "mp.h"

#define WORDS 64 /* longs each rank writes per round */

static int n, me;
static size_t ps;
static volatile long *data;  /* kinds 0, 1: rank r's longs at page (r+1) % N */
static volatile long *mixed; /* kind 2: rank r's longs at r + N*j, one page */
static volatile long *flag;  /* flag[r * stride]: last round rank r passed on */
static size_t fstride;

static long val(int round, int r, int j) { return (long)round * 1000003 + r * 1009 + j + 1; }

static volatile long *slot(int kind, int r, int j)
{
    if (kind == 2)
        return &mixed[(size_t)r + (size_t)n * (size_t)j];
    return &data[(size_t)((r + 1) % n) * (ps / sizeof(long)) + (size_t)j];
}

static void check_upto(int kind, int round, int upto, const char *what)
{
    for (int r = 0; r < upto; r++)
        for (int j = 0; j < WORDS; j++) {
            char label[96];
            snprintf(label, sizeof label, "%s: kind %d round %d, data of rank %d, word", what, kind, round,
                     r);
            MP_CHECK(label, j, val(round, r, j), *slot(kind, r, j));
        }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    n = sdsm_nprocs();
    me = sdsm_rank();
    ps = mp_page_size();
    MP_ASSERT((size_t)n * WORDS * sizeof(long) <= ps, "page too small for the mixed layout");
    data = sdsm_alloc((size_t)n * ps, SDSM_HOME_CYCLIC);
    mixed = sdsm_alloc(ps, n - 1);
    fstride = 16; /* flags on distinct cache lines, same page */
    flag = sdsm_calloc((size_t)n * fstride, sizeof(long), 0);
    MP_NONNULL(data);
    MP_NONNULL(mixed);
    MP_NONNULL(flag);

    int round = 0;
    for (int kind = 0; kind < 3; kind++)
        for (int rep = 0; rep < rounds; rep++) {
            round++;
            MP_OK(sdsm_barrier());
            /* Cache everything: the copies go stale during the round. */
            long sink = 0;
            for (int r = 0; r < n; r++)
                for (int j = 0; j < WORDS; j++)
                    sink += *slot(kind, r, j);
            (void)sink;
            MP_OK(sdsm_barrier());

            if (me > 0) {
                int lk = 300 + me - 1, cv = 400 + me - 1;
                MP_OK(sdsm_lock(lk));
                while (flag[(size_t)(me - 1) * fstride] < round) {
                    if (kind == 1) {
                        MP_OK(sdsm_cond_wait(cv, lk));
                    } else {
                        MP_OK(sdsm_unlock(lk));
                        mp_sleep_ms(1);
                        MP_OK(sdsm_lock(lk));
                    }
                }
                MP_CHECK("flag of the previous rank", me - 1, round, flag[(size_t)(me - 1) * fstride]);
                MP_OK(sdsm_unlock(lk));
                check_upto(kind, round, me, "token received");
            }
            for (int j = 0; j < WORDS; j++)
                *slot(kind, me, j) = val(round, me, j);
            MP_OK(sdsm_lock(300 + me));
            flag[(size_t)me * fstride] = round;
            if (kind == 1)
                MP_OK(sdsm_cond_broadcast(400 + me));
            MP_OK(sdsm_unlock(300 + me));

            MP_OK(sdsm_barrier());
            check_upto(kind, round, n, "after the barrier");
        }
    MP_OK(sdsm_barrier());
    return mp_finish("chain");
}
