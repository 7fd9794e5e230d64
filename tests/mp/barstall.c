/*
 * barstall.c - a compute thread released from a barrier while the run slot
 * is held by a thread blocked outside sdsm must still get to run.  The
 * release hands the barrier's waiters to the run-slot queue asleep
 * (thread/sched.c, sdsm_sched_hand_over); here the waiter holds a pthread
 * mutex across sdsm_barrier, and the last arrival, which keeps the slot,
 * blocks on that mutex.  Two compute threads per rank, SDSM_RUN_THREADS=1,
 * on every rank: A locks the mutex and arrives first (B parks in
 * sdsm_comp_wait until A blocks), B arrives last and then locks the mutex.
 * Without a way out the job hangs in every round; with it, A wakes by
 * itself, finds the slot's holder asleep outside sdsm and takes a slot
 * beyond the bound (counted as forced).
 *
 *   mp_barstall     (sdsmrun -n 2 --threads 2, SDSM_RUN_THREADS=1)
 */
#define MP_NAME "barstall"
#include "mp.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int a_holds, b_got;

#define ROUNDS 6

static void *thread_a(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        atomic_store(&a_holds, r);
        sdsm_barrier(); /* first to arrive: B waits in comp_wait until now */
        pthread_mutex_unlock(&mu);
        sdsm_group_barrier(0);
    }
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&a_holds) != r)
            sdsm_comp_wait();    /* run once A waits in the barrier */
        sdsm_barrier();          /* last to arrive: keeps the slot */
        pthread_mutex_lock(&mu); /* A holds it: blocks, holding the slot */
        atomic_fetch_add(&b_got, 1);
        pthread_mutex_unlock(&mu);
        sdsm_group_barrier(0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    MP_ASSERT(sdsm_nprocs() == 2 && sdsm_thread_count() == 4, "run with -n 2 --threads 2");
    sdsm_thread_t t[2];
    sdsm_thread_create(&t[0], 0, thread_a, NULL);
    sdsm_thread_create(&t[1], 0, thread_b, NULL);
    sdsm_thread_join(t[0], NULL);
    sdsm_thread_join(t[1], NULL);
    MP_CHECK("rounds", 0, ROUNDS, atomic_load(&b_got));
    sdsm_finalize();
    if (sdsm_rank() == 0)
        printf("OK barstall\n");
    return 0;
}
