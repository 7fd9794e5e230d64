/*
 * lockpass.c - one lock passed between ranks while several threads of
 * each rank take it at moments of their own.
 *
 *   mp_lockpass [T K]     (default 3 threads per rank, K = 60)
 *
 * Every thread adds 1 to a shared counter under lock 7, K times, and
 * pauses 0-2 ms (a pseudo-random length) between its critical sections, so
 * that a rank often releases the lock with none of its threads waiting and
 * passes it on to another rank, and one of its threads asks again soon
 * after.  Run with slow_grant.c preloaded, a rank that passes the lock on
 * stops for a while after the grant, as if preempted: the lock comes back
 * to the rank meanwhile and another of its threads passes it on again.
 * The manager must still see the passes in order (a note it cannot place
 * is rejected and the lock is lost: the job hangs).  The counter must be
 * n * T * K.
 */
#define MP_NAME "lockpass"
#include "mp.h"

#include <pthread.h>

static int T;
static long K;
static volatile long *ctr;

static void *worker(void *p)
{
    long t = (long)(intptr_t)p;
    uint64_t x = mp_mix((uint64_t)(sdsm_rank() * 64 + t));
    for (long k = 0; k < K; k++) {
        MP_OK(sdsm_lock(7));
        *ctr += 1;
        MP_OK(sdsm_unlock(7));
        x = mp_mix(x);
        struct timespec ts = {0, (long)(x % 2000) * 1000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    T = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atol(argv[2]) : 60;
    MP_ASSERT(T >= 1 && T <= 64 && K >= 1, "T = %d must be in 1..64, K = %ld at least 1", T, K);
    int n = sdsm_nprocs();
    ctr = sdsm_alloc(sizeof(long), 0);
    MP_NONNULL(ctr);
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
    MP_OK(sdsm_barrier());
    return mp_finish("lockpass");
}
