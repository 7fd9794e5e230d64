/*
 * mtlocks.c - several threads per rank, each under its own lock, updating
 * different words of the same pages, while other ranks use some of the
 * same locks.  A data-race-free program: every counter must come out exact.
 *
 *   mp_mtlocks [T K ROUNDS [locked]]   (T threads per rank, K increments each;
 *                                       locked: no lock-free writes)
 *
 * Thread t of rank r uses lock (r + t) % L with L = T locks: so every lock is
 * taken by threads of several ranks, and the threads of one rank hold
 * different locks at once.  Lock l guards counter slot l; slots of all
 * locks share the same pages (one long every 64 bytes, so within a page),
 * and the pages' homes are on another rank than most writers.  Each
 * critical section reads, waits a little (so releases, invalidations and
 * diffs of other threads and ranks land in the middle of it) and writes.
 */
#define MP_NAME "mtlocks"
#include "mp.h"

#include <pthread.h>
#include <sched.h>

static int n, me, T;
static long K;
static int locked_only;
static volatile long *slot; /* slot[l * 8], l < T: counter of lock l */
static volatile long *mine; /* mine[(r * T + t) * 8]: per-thread counter, no lock needed */

static void *worker(void *p)
{
    int t = (int)(intptr_t)p;
    int l = (me + t) % T;
    for (long k = 0; k < K; k++) {
        MP_OK(sdsm_lock(l));
        long v = slot[(size_t)l * 8];
        if ((k & 3) == 0)
            sched_yield();
        slot[(size_t)l * 8] = v + 1;
        MP_OK(sdsm_unlock(l));
        /* A word of the same page written outside any lock by this thread
         * alone: it must survive the other threads' releases too. */
        if (!locked_only)
            mine[(size_t)(me * T + t) * 8] += 1;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MP_OK(sdsm_init(&argc, &argv));
    n = sdsm_nprocs();
    me = sdsm_rank();
    T = argc > 1 ? atoi(argv[1]) : 4;
    K = argc > 2 ? atol(argv[2]) : 300;
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    locked_only = argc > 4 && strcmp(argv[4], "locked") == 0;
    MP_ASSERT(T >= 1 && T <= 64 && K >= 1, "bad arguments");
    for (int round = 0; round < rounds; round++) {
        /* Home on the last rank: most writers are not at the home. */
        long *base = sdsm_calloc((size_t)(T + n * T) * 8, sizeof(long), n - 1);
        MP_ASSERT(base != NULL, "sdsm_calloc failed");
        slot = base;
        mine = base + (size_t)T * 8;
        MP_OK(sdsm_barrier());
        pthread_t th[64];
        for (int t = 0; t < T; t++)
            MP_ASSERT(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
        for (int t = 0; t < T; t++)
            pthread_join(th[t], NULL);
        MP_OK(sdsm_barrier());
        for (int l = 0; l < T; l++)
            MP_CHECK("lock counter", l, (long)n * K, slot[(size_t)l * 8]);
        for (int g = 0; g < n * T; g++)
            MP_CHECK("thread counter", g, locked_only ? 0 : K, mine[(size_t)g * 8]);
        MP_OK(sdsm_barrier());
        MP_OK(sdsm_free(base));
    }
    MP_OK(sdsm_finalize());
    if (me == 0)
        printf("OK " MP_NAME "\n");
    return 0;
}
