/*
 * test_sched.c - thread/sched.c, the run slots of compute threads, driven
 * directly (no launcher, no transport): each case builds one interleaving
 * that a job only meets by chance, and checks that nobody waits forever.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/blocked.h"
#include "thread/sched.h"

static _Atomic int done;

static void nap_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL); }

/* Is thread tid asleep (state S in /proc)? */
static int asleep(pid_t tid) { return sdsm_task_state((int)tid) == 'S'; }

static _Atomic pid_t waiter_tid;

static void *comp_waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_tid, gettid());
    sdsm_sched_enter(0);
    sdsm_sched_comp_wait();
    sdsm_sched_exit();
    atomic_store(&done, 1);
    return NULL;
}

/* Wait up to ms for done; 1 if it came. */
static int wait_done(long ms)
{
    for (long t = 0; t < ms && !atomic_load(&done); t += 5)
        nap_ms(5);
    return atomic_load(&done);
}

/*
 * The last compute thread of a rank starts and calls sdsm_comp_wait while
 * every other one waits (here: there is no other), before its creator has
 * noted that all exist.  Its wait may end only by "nobody can run", which
 * holds from the moment all exist: noting that must wake it (it slept
 * forever, the job's time limit ended mp_slotstall now and then).
 */
static void test_all_created_wakes_comp_wait(void)
{
    sdsm_sched_init(1);
    atomic_store(&done, 0);
    pthread_t t;
    sdsm_sched_expect(1); /* as sdsm_thread_create does */
    CHECK_I(pthread_create(&t, NULL, comp_waiter, NULL), ==, 0);
    /* Asleep in comp_wait: nothing else will wake it. */
    int slept = 0;
    for (int i = 0; i < 400 && !slept; i++) {
        nap_ms(5);
        pid_t tid = atomic_load(&waiter_tid);
        slept = tid && asleep(tid);
    }
    CHECK(slept);
    nap_ms(20);
    CHECK(!atomic_load(&done)); /* not all created: it must still wait */
    sdsm_sched_all_created();
    if (!CHECK(wait_done(5000))) {
        fprintf(stderr, "comp_wait did not return once all threads existed; giving up\n");
        _exit(1); /* the waiter cannot be joined */
    }
    pthread_join(t, NULL);
}

int main(void)
{
    RUN(test_all_created_wakes_comp_wait);
    return ck_done("sched");
}
