/*
 * slotstall.c - a compute thread that faults while holding a lock of its
 * own (a pthread mutex here; stdio's lock when printf reads a shared
 * string) must not wait forever for a run slot held by a thread blocked on
 * that lock.  Two compute threads per rank, SDSM_RUN_THREADS=1: on rank 0,
 * thread A locks a mutex and reads a page homed at rank 1 (a fault: its
 * slot goes to B), B then blocks on the mutex holding the slot; A's page
 * arrives and A needs a slot.  The job must end, with the values right.
 * Whether B gets the slot before A's page arrives is a race, so it runs
 * ROUNDS times, a new page each round (without the forced slot, a run hangs
 * in most cases).
 *
 *   mp_slotstall     (sdsmrun -n 2 --threads 2, SDSM_RUN_THREADS=1)
 */
#define MP_NAME "slotstall"
#include "mp.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int a_holds;
static volatile long *remote;
static long seen;

#define ROUNDS 16
#define STRIDE 512 /* longs: a page apart */

static void *thread_a(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        atomic_store(&a_holds, r);
        seen += remote[r * STRIDE]; /* fault: the page is homed at rank 1 */
        pthread_mutex_unlock(&mu);
        sdsm_group_barrier(0);
    }
    sdsm_barrier();
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        sdsm_comp_wait(); /* run once A waits for its page */
        while (atomic_load(&a_holds) != r)
            nanosleep(&(struct timespec){0, 200000},
                      NULL);     /* sleeping, not spinning: a spinner keeps its slot */
        pthread_mutex_lock(&mu); /* A may hold it: blocks, holding the run slot */
        pthread_mutex_unlock(&mu);
        sdsm_group_barrier(0);
    }
    sdsm_barrier();
    return NULL;
}

static void *idle(void *arg)
{
    (void)arg;
    sdsm_barrier();
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    MP_ASSERT(sdsm_nprocs() == 2 && sdsm_thread_count() == 4, "run with -n 2 --threads 2");
    remote = sdsm_calloc((ROUNDS + 1) * STRIDE, sizeof(long), 1);
    if (sdsm_rank() == 1)
        for (int r = 1; r <= ROUNDS; r++)
            remote[r * STRIDE] = r;
    sdsm_barrier();
    sdsm_thread_t t[2];
    if (sdsm_rank() == 0) {
        sdsm_thread_create(&t[0], 0, thread_a, NULL);
        sdsm_thread_create(&t[1], 0, thread_b, NULL);
    } else {
        sdsm_thread_create(&t[0], 0, idle, NULL);
        sdsm_thread_create(&t[1], 0, idle, NULL);
    }
    sdsm_thread_join(t[0], NULL);
    sdsm_thread_join(t[1], NULL);
    if (sdsm_rank() == 0)
        MP_CHECK("remote", 0, ROUNDS * (ROUNDS + 1) / 2, seen);
    sdsm_finalize();
    if (sdsm_rank() == 0)
        printf("OK slotstall\n");
    return 0;
}
