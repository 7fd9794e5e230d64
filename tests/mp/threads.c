/*
 * threads.c - several threads per rank using locks and shared memory at
 * once ("the calls may be made from several threads of a process; locks are
 * held by the calling thread").
 *
 *   mp_threads [T K]     (default 3 threads per rank, K = 50)
 *
 * Phase 1: every thread of every rank adds 1 to a counter under lock 7, K
 * times (threads of one rank compete for the same lock), and under its own
 * lock writes its own longs of an array whose longs are interleaved across
 * all threads of all ranks (so threads of one rank fault on and twin the same
 * pages concurrently).  Join, barrier, the main threads check everything.
 * Phase 2: all threads of every rank read the whole array at the same time
 * (concurrent read faults on invalidated pages) and check it.
 * Phase 3: threads of one rank exchange a value through a condition
 * variable: thread 0 waits for a flag that the last thread sets.
 */
#define MP_NAME "threads"
#include "mp.h"

#include <pthread.h>

static int n, me, T;
static long K;
static size_t nel;
static volatile long *ctr, *arr, *flags;

typedef struct arg {
    int t;
    int phase;
} arg_t;

static long val(size_t i) { return (long)(mp_mix(i) >> 2); }
static long val2(size_t i) { return val(i) + 1 + (long)(i % 3); }

static void *worker(void *p)
{
    arg_t *a = p;
    int t = a->t, gid = me * T + t, G = n * T;
    if (a->phase == 1) {
        for (long k = 0; k < K; k++) {
            MP_OK(sdsm_lock(7));
            *ctr += 1;
            MP_OK(sdsm_unlock(7));
            /* A slice of this thread's longs per iteration. */
            MP_OK(sdsm_lock(1000 + gid));
            for (size_t i = (size_t)gid + (size_t)G * (size_t)k; i < nel; i += (size_t)G * (size_t)K)
                arr[i] = val(i);
            MP_OK(sdsm_unlock(1000 + gid));
        }
    } else if (a->phase == 2) {
        for (size_t x = 0; x < nel; x++) {
            size_t i = (x + (size_t)t * 977) % nel; /* threads start at different pages */
            MP_CHECK("array read by all threads", i, val2(i), arr[i]);
        }
    } else {
        /* Per-rank flag, lock 2000+rank, cond 3000+rank. */
        volatile long *f = &flags[(size_t)me * 8];
        if (t == 0) {
            MP_OK(sdsm_lock(2000 + me));
            while (f[0] == 0)
                MP_OK(sdsm_cond_wait(3000 + me, 2000 + me));
            MP_CHECK("value passed between threads", me, 4242 + me, f[1]);
            MP_OK(sdsm_unlock(2000 + me));
        } else if (t == T - 1) {
            mp_sleep_ms(20);
            MP_OK(sdsm_lock(2000 + me));
            f[1] = 4242 + me;
            f[0] = 1;
            MP_OK(sdsm_cond_signal(3000 + me));
            MP_OK(sdsm_unlock(2000 + me));
        }
    }
    return NULL;
}

static void run_phase(int phase)
{
    pthread_t th[64];
    arg_t args[64];
    for (int t = 0; t < T; t++) {
        args[t] = (arg_t){.t = t, .phase = phase};
        int rc = pthread_create(&th[t], NULL, worker, &args[t]);
        MP_ASSERT(rc == 0, "pthread_create: %d", rc);
    }
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    T = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atol(argv[2]) : 50;
    MP_ASSERT(T >= 2 && T <= 64, "T = %d must be in 2..64", T);
    n = sdsm_nprocs();
    me = sdsm_rank();
    nel = 8 * mp_page_size() / sizeof(long);
    ctr = sdsm_alloc(sizeof(long), 0);
    arr = sdsm_alloc(nel * sizeof(long), SDSM_HOME_CYCLIC);
    flags = sdsm_calloc((size_t)n * 8, sizeof(long), n - 1);
    MP_NONNULL(ctr);
    MP_NONNULL(arr);
    MP_NONNULL(flags);
    MP_OK(sdsm_barrier());

    run_phase(1);
    MP_OK(sdsm_barrier());
    MP_CHECK("counter", 0, (long)n * T * K, *ctr);
    for (size_t i = 0; i < nel; i++)
        MP_CHECK("array", i, val(i), arr[i]);
    MP_OK(sdsm_barrier());

    /* New values from every rank: every cached copy goes stale. */
    for (size_t i = (size_t)me; i < nel; i += (size_t)n)
        arr[i] = val2(i);
    MP_OK(sdsm_barrier());
    run_phase(2);
    MP_OK(sdsm_barrier());

    run_phase(3);
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++) {
        MP_CHECK("flag set by the last thread of rank", r, 1, flags[(size_t)r * 8]);
        MP_CHECK("value set by the last thread of rank", r, 4242 + r, flags[(size_t)r * 8 + 1]);
    }
    MP_OK(sdsm_barrier());
    return mp_finish("threads");
}
