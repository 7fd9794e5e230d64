/*
 * relrace.c - a page written again while another thread of its rank is
 * still releasing it.
 *
 *   mp_relrace [T K NP]   (default 3 threads per rank, K = 60, NP = 160)
 *
 * Every thread of every rank adds 1 to a counter under lock 7, K times, and
 * after each addition rewrites one long in each of NP pages of its own slice
 * of a big array under a lock of its own.  The counter's page comes first
 * in the heap and the slices after it, all homed at rank 0, so a release by
 * one thread diffs the counter's page first and then NP more pages before
 * its batch leaves: a long window in which another thread of the rank
 * writes the counter again.  If an invalidation from the home then meets
 * the page dirty, the new diff it sends must not overtake the older one
 * still in the batch (the home would apply the older diff last and lose an
 * addition).  The main threads check the counter and every slice.
 */
#define MP_NAME "relrace"
#include "mp.h"

#include <pthread.h>

static int n, me, T, NP;
static long K;
static size_t ps;
static volatile long *ctr, *big;

static long word(int gid, int j, long k) { return (long)gid * 1000003L + (long)j * 101L + k; }

static volatile long *slot(int gid, int j)
{
    return big + ((size_t)gid * (size_t)NP + (size_t)j) * (ps / sizeof(long));
}

static void *worker(void *p)
{
    int t = (int)(intptr_t)p, gid = me * T + t;
    for (long k = 0; k < K; k++) {
        MP_OK(sdsm_lock(7));
        *ctr += 1;
        MP_OK(sdsm_unlock(7));
        MP_OK(sdsm_lock(100 + gid));
        for (int j = 0; j < NP; j++)
            *slot(gid, j) = word(gid, j, k);
        MP_OK(sdsm_unlock(100 + gid));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    T = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atol(argv[2]) : 60;
    NP = argc > 3 ? atoi(argv[3]) : 160;
    MP_ASSERT(T >= 2 && T <= 64 && K >= 1 && NP >= 1 && NP <= 4096, "T = %d, K = %ld, NP = %d", T, K, NP);
    n = sdsm_nprocs();
    me = sdsm_rank();
    ps = mp_page_size();
    ctr = sdsm_alloc(ps, 0);
    big = sdsm_alloc((size_t)n * (size_t)T * (size_t)NP * ps, 0);
    MP_NONNULL(ctr);
    MP_NONNULL(big);
    MP_ASSERT((uintptr_t)ctr < (uintptr_t)big, "the counter's page must come before the slices");
    MP_OK(sdsm_barrier());

    pthread_t th[64];
    for (int t = 0; t < T; t++) {
        int rc = pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        MP_ASSERT(rc == 0, "pthread_create: %d", rc);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    MP_OK(sdsm_barrier());

    MP_CHECK("counter", 0, (long)n * T * K, *ctr);
    for (int gid = 0; gid < n * T; gid++)
        for (int j = 0; j < NP; j++)
            MP_CHECK("slice word", (long)gid * NP + j, word(gid, j, K - 1), *slot(gid, j));
    MP_OK(sdsm_barrier());
    return mp_finish("relrace");
}
