/*
 * thread.c - compute threads (see thread.h).
 *
 * Ids: thread k created by rank r has the job-wide id r * N + k (N =
 * SDSM_THREADS), so the ids are known before any thread exists and every
 * rank can split work by id alone.
 *
 * The barrier of all compute threads is hierarchical, as in seed 001: the
 * threads of a rank meet locally (they share the process's memory, so no
 * coherence action is needed between them); the last to arrive runs the
 * rank barrier, whose release and acquire cover every write of the process;
 * then the rank's threads go on.  A rank barrier counts N arrivals, so a
 * missing thread would hang it: creating more than N threads, ending one
 * while the others wait for it, or waiting in sdsm_thread_join with fewer
 * than N created while the others wait in a barrier stop the job with a
 * message instead (like a collective mismatch: whatever SDSM_ERRORS says).
 */
#include "thread/thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/trace.h"
#include "core/wait.h"
#include "core/blocked.h"
#include "mem/crash.h"
#include "sdsm.h"
#include "thread/sched.h"

enum { CT_FREE, CT_RUNNING, CT_ENDED, CT_JOINED };

typedef struct cthread {
    pthread_t pt;
    int local, group, state;
    void *(*fn)(void *);
    void *arg, *ret;
    int waiting;        /* in the barrier of all compute threads (under mtx) */
    _Atomic int parked; /* handed to the run-slot queue by that barrier's release */
} cthread_t;

typedef struct group {
    int id, members, arrived;
    _Atomic uint32_t gen;
} group_t;

static struct {
    pthread_mutex_t mtx;
    int rank, nprocs, per_rank;
    int created, alive, joiners;
    cthread_t *ct;   /* per_rank entries */
    group_t *groups; /* per_rank entries at most */
    int ngroups;
    int arrived; /* at the barrier of all compute threads */
    _Atomic uint32_t gen;
} cthreads = {.mtx = PTHREAD_MUTEX_INITIALIZER};

static __thread cthread_t *self;

void sdsm_thread_init(int rank, int nprocs, int per_rank, int slots, int ranks_here)
{
    cthreads.rank = rank;
    cthreads.nprocs = nprocs;
    cthreads.per_rank = per_rank > 0 ? per_rank : 1;
    cthreads.ct = calloc((size_t)cthreads.per_rank, sizeof *cthreads.ct);
    cthreads.groups = calloc((size_t)cthreads.per_rank, sizeof *cthreads.groups);
    if (!cthreads.ct || !cthreads.groups)
        sdsm_stop_job(1, "sdsm_init", "out of memory for the compute-thread table");
    if (slots <= 0) { /* the CPUs this rank may use, shared with the ranks that may too */
        slots = sdsm_cpus_here() / (ranks_here > 0 ? ranks_here : 1);
        if (slots < 1)
            slots = 1;
    }
    sdsm_debug("%d run slot(s) for %d compute thread(s); %d CPU(s) here, shared by %d rank(s)", slots,
               per_rank > 0 ? per_rank : 1, sdsm_cpus_here(), ranks_here);
    /* Latency hiding (seed 001): while one thread computes, the others
     * wait for the network.  They poll longer, so that the rank's CPU does
     * not go idle between their replies: waking an idle CPU, and a thread
     * asleep on it, can cost more than the round trip being hidden. */
    atomic_store(&sdsm_wait_hiding, cthreads.per_rank > slots);
    atomic_store(&sdsm_wait_spin_us, cthreads.per_rank > slots ? sdsm_cfg.hide_spin_us : sdsm_cfg.spin_us);
    sdsm_sched_init(slots);
    sdsm_wait_register(-1); /* the main thread (the hang report tells computing from waiting) */
}

int sdsm_thread_is_compute(void) { return self != NULL; }
int sdsm_thread_total(void) { return cthreads.nprocs * cthreads.per_rank; }

int sdsm_thread_alive(void)
{
    pthread_mutex_lock(&cthreads.mtx);
    int n = cthreads.alive;
    pthread_mutex_unlock(&cthreads.mtx);
    return n;
}

static __attribute__((noreturn)) void stop(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static __attribute__((noreturn)) void stop(const char *call, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sdsm_stop_job(1, call, msg);
}

static group_t *group_of(int id)
{
    for (int i = 0; i < cthreads.ngroups; i++)
        if (cthreads.groups[i].id == id)
            return &cthreads.groups[i];
    return NULL;
}

/* Under mtx: threads wait in a barrier for a thread that can no longer come. */
static void check_missing(const char *call)
{
    if (cthreads.joiners > 0 && cthreads.created < cthreads.per_rank && cthreads.arrived > 0)
        stop(call,
             "rank %d created only %d of its SDSM_THREADS=%d compute threads and waits in "
             "sdsm_thread_join, while %d wait in sdsm_barrier for all %d",
             cthreads.rank, cthreads.created, cthreads.per_rank, cthreads.arrived, cthreads.per_rank);
}

/* Under mtx: a group barrier is complete when every member arrived and no
 * member can be added any more (all N threads exist, or their creator waits
 * in sdsm_thread_join). */
static int group_full(const group_t *g)
{
    return g->arrived > 0 && g->arrived >= g->members &&
           (cthreads.created >= cthreads.per_rank || cthreads.joiners > 0);
}

static void open_group(group_t *g)
{
    g->arrived = 0;
    atomic_fetch_add(&g->gen, 1);
    sdsm_wake_all(&g->gen);
}

static void release_full_groups(void)
{
    for (int i = 0; i < cthreads.ngroups; i++)
        if (group_full(&cthreads.groups[i]))
            open_group(&cthreads.groups[i]);
}

static void *trampoline(void *p)
{
    cthread_t *c = p;
    self = c;
    sdsm_trace_thread_name("compute", cthreads.rank * cthreads.per_rank + c->local);
    sdsm_crash_thread_enter(cthreads.rank * cthreads.per_rank + c->local);
    sdsm_sched_enter(cthreads.rank * cthreads.per_rank + c->local);
    void *ret = c->fn(c->arg);
    pthread_mutex_lock(&cthreads.mtx);
    group_t *g = group_of(c->group);
    if (cthreads.arrived > 0)
        stop("sdsm_thread_create",
             "compute thread %d (rank %d) returned while %d compute "
             "thread%s of its rank wait%s for it in sdsm_barrier",
             cthreads.rank * cthreads.per_rank + c->local, cthreads.rank, cthreads.arrived,
             cthreads.arrived == 1 ? "" : "s", cthreads.arrived == 1 ? "s" : "");
    if (g && g->arrived > 0)
        stop("sdsm_thread_create",
             "compute thread %d (rank %d) of group %d returned while %d "
             "of its group wait for it in sdsm_group_barrier",
             cthreads.rank * cthreads.per_rank + c->local, cthreads.rank, g->id, g->arrived);
    if (g)
        g->members--;
    c->ret = ret;
    c->state = CT_ENDED;
    cthreads.alive--;
    pthread_mutex_unlock(&cthreads.mtx);
    sdsm_sched_exit();
    sdsm_crash_thread_leave();
    self = NULL;
    return NULL;
}

/* pthread_create, on `stack` if given. */
static int create_on(pthread_t *pt, void *stack, size_t stack_len, void *(*fn)(void *), void *arg)
{
    if (!stack)
        return pthread_create(pt, NULL, fn, arg);
    pthread_attr_t a;
    int e = pthread_attr_init(&a);
    if (e)
        return e;
    e = pthread_attr_setstack(&a, stack, stack_len);
    if (!e)
        e = pthread_create(pt, &a, fn, arg);
    pthread_attr_destroy(&a);
    return e;
}

int sdsm_thread_start(int *handle, int group, void *(*fn)(void *), void *arg, void *stack, size_t stack_len,
                      char *err, size_t errlen)
{
    if (!handle || !fn) {
        snprintf(err, errlen, "%s is NULL", handle ? "the thread function" : "the handle pointer");
        return SDSM_EINVAL;
    }
    if (group < 0) {
        snprintf(err, errlen, "group %d is negative", group);
        return SDSM_EINVAL;
    }
    pthread_mutex_lock(&cthreads.mtx);
    if (cthreads.created >= cthreads.per_rank) {
        pthread_mutex_unlock(&cthreads.mtx);
        stop("sdsm_thread_create",
             "rank %d creates more than SDSM_THREADS=%d compute threads "
             "(every rank runs exactly that many: sdsm_thread_count() is ranks x SDSM_THREADS)",
             cthreads.rank, cthreads.per_rank);
    }
    cthread_t *c = &cthreads.ct[cthreads.created];
    *c = (cthread_t){.local = cthreads.created, .group = group, .state = CT_RUNNING, .fn = fn, .arg = arg};
    group_t *g = group_of(group);
    if (!g) {
        g = &cthreads.groups[cthreads.ngroups++];
        *g = (group_t){.id = group};
    }
    g->members++;
    cthreads.created++;
    cthreads.alive++;
    sdsm_sched_expect(1);
    int e = create_on(&c->pt, stack, stack_len, trampoline, c);
    if (e) {
        sdsm_sched_expect(-1);
        g->members--;
        cthreads.created--;
        cthreads.alive--;
        c->state = CT_FREE;
        pthread_mutex_unlock(&cthreads.mtx);
        snprintf(err, errlen, "pthread_create%s: %s", stack ? " (on a given stack)" : "", strerror(e));
        return SDSM_ESYS;
    }
    *handle = c->local;
    if (cthreads.created == cthreads.per_rank)
        sdsm_sched_all_created();
    release_full_groups();
    pthread_mutex_unlock(&cthreads.mtx);
    return 0;
}

int sdsm_thread_wait(int handle, void **ret, char *err, size_t errlen)
{
    pthread_mutex_lock(&cthreads.mtx);
    if (handle < 0 || handle >= cthreads.created || cthreads.ct[handle].state == CT_FREE) {
        pthread_mutex_unlock(&cthreads.mtx);
        snprintf(err, errlen, "no compute thread %d on this rank (%d created)", handle, cthreads.created);
        return SDSM_EINVAL;
    }
    cthread_t *c = &cthreads.ct[handle];
    if (c == self) {
        pthread_mutex_unlock(&cthreads.mtx);
        snprintf(err, errlen, "a compute thread cannot join itself");
        return SDSM_EINVAL;
    }
    if (c->state == CT_JOINED) {
        pthread_mutex_unlock(&cthreads.mtx);
        snprintf(err, errlen, "compute thread %d was already joined", handle);
        return SDSM_EINVAL;
    }
    c->state = c->state == CT_ENDED ? CT_JOINED : c->state;
    cthreads.joiners++;
    sdsm_sched_all_created(); /* its creator waits: no more will come for now */
    check_missing("sdsm_thread_join");
    release_full_groups();
    pthread_mutex_unlock(&cthreads.mtx);
    /* A compute thread joining another gives its slot up meanwhile. */
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_GROUP, -2);
    int was = sdsm_sched_is_compute();
    if (was)
        sdsm_sched_block();
    int e = pthread_join(c->pt, NULL);
    sdsm_wait_leave(&sv);
    pthread_mutex_lock(&cthreads.mtx);
    cthreads.joiners--;
    c->state = CT_JOINED;
    if (ret)
        *ret = c->ret;
    pthread_mutex_unlock(&cthreads.mtx);
    if (was)
        sdsm_wait_resume();
    if (e) {
        snprintf(err, errlen, "pthread_join: %s", strerror(e));
        return SDSM_ESYS;
    }
    return 0;
}

int sdsm_thread_self_id(char *err, size_t errlen)
{
    if (self)
        return cthreads.rank * cthreads.per_rank + self->local;
    if (cthreads.per_rank == 1 && cthreads.created == 0)
        return cthreads.rank; /* a program without compute threads: the main thread is one */
    snprintf(err, errlen,
             "called from a thread that is not a compute thread "
             "(create them with sdsm_thread_create)");
    return SDSM_ESTATE;
}

/* Wait until *gen moves past g, giving the run slot up meanwhile.  Only a
 * thread of this rank moves it, so the waiter does not lead in the event
 * loop (core/wait.h, sdsm_wait_change_local): the last arrival of a barrier
 * of all compute threads waits for the rank barrier's release, and that
 * frame should wake it, not a waiter here that would then wake it. */
static void wait_gen(_Atomic uint32_t *gen, uint32_t g, int64_t id)
{
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_GROUP, id);
    /* In naps: a waiter that the release handed to the run-slot queue
     * asleep (sdsm_sched_hand_over) then still looks as often as take()
     * does whether the slot holders are stalled. */
    const struct timespec nap = {0, SDSM_SCHED_NAP_NS};
    while (atomic_load(gen) == g)
        sdsm_wait_change_local(gen, g, &nap);
    sdsm_wait_leave(&sv);
    if (self && atomic_exchange(&self->parked, 0))
        sdsm_sched_unpark();
}

int sdsm_thread_barrier(int (*rank_barrier)(void), char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (cthreads.per_rank == 1) /* the rank's one compute thread (fixed at start): none to meet */
        return rank_barrier();
    pthread_mutex_lock(&cthreads.mtx);
    uint32_t g = atomic_load(&cthreads.gen);
    if (cthreads.created > cthreads.alive)
        stop("sdsm_barrier",
             "compute thread %d (rank %d) called sdsm_barrier after %d compute "
             "thread%s of its rank returned: the barrier of all compute threads needs all %d",
             self ? cthreads.rank * cthreads.per_rank + self->local : -1, cthreads.rank,
             cthreads.created - cthreads.alive, cthreads.created - cthreads.alive == 1 ? "" : "s",
             cthreads.per_rank);
    if (++cthreads.arrived < cthreads.per_rank) {
        check_missing("sdsm_barrier");
        if (self)
            self->waiting = 1;
        pthread_mutex_unlock(&cthreads.mtx);
        wait_gen(&cthreads.gen, g, -1);
        return 0;
    }
    pthread_mutex_unlock(&cthreads.mtx);
    /* The last local arrival: every write of this process is done. */
    int rc = rank_barrier();
    pthread_mutex_lock(&cthreads.mtx);
    cthreads.arrived = 0;
    int n = 0;
    for (int i = 0; i < cthreads.per_rank; i++)
        if (cthreads.ct[i].waiting) {
            cthreads.ct[i].waiting = 0;
            atomic_store(&cthreads.ct[i].parked, 1);
            n++;
        }
    uint32_t now = atomic_fetch_add(&cthreads.gen, 1) + 1;
    pthread_mutex_unlock(&cthreads.mtx);
    /* The waiters go to the run-slot queue asleep, not all awake at once
     * (sched.h). */
    sdsm_sched_hand_over(&cthreads.gen, now, n);
    return rc;
}

int sdsm_thread_group_barrier(int group, char *err, size_t errlen)
{
    pthread_mutex_lock(&cthreads.mtx);
    group_t *gr = group_of(group);
    if (!gr || !self || self->group != group) {
        pthread_mutex_unlock(&cthreads.mtx);
        snprintf(err, errlen, "the calling thread is not a compute thread of group %d", group);
        return SDSM_EINVAL;
    }
    uint32_t g = atomic_load(&gr->gen);
    gr->arrived++;
    if (!group_full(gr)) {
        pthread_mutex_unlock(&cthreads.mtx);
        wait_gen(&gr->gen, g, group);
        return 0;
    }
    open_group(gr);
    pthread_mutex_unlock(&cthreads.mtx);
    return 0;
}

int sdsm_thread_check_finalize(char *err, size_t errlen)
{
    pthread_mutex_lock(&cthreads.mtx);
    int created = cthreads.created, alive = cthreads.alive;
    pthread_mutex_unlock(&cthreads.mtx);
    if (alive > 0) {
        snprintf(err, errlen, "%d compute thread%s still running: join them first", alive,
                 alive == 1 ? " is" : "s are");
        return SDSM_ESTATE;
    }
    if (created > 0 && created != cthreads.per_rank) {
        snprintf(err, errlen, "rank %d created %d compute threads, but SDSM_THREADS=%d", cthreads.rank,
                 created, cthreads.per_rank);
        return SDSM_ESTATE;
    }
    return 0;
}
