/*
 * sync.c - critical, atomic regions, single (and copyprivate), tasks, the
 * error directive and cancellation points.
 *
 * A critical region is an sdsm lock held through it: the lock's release
 * makes the region's writes visible to the next holder under every
 * protocol (under ibec they travel with that very lock).  Outside a
 * parallel region nothing runs concurrently, so the locks are skipped there.
 * A named critical's argument is the program's own global (the same
 * address in every rank); the registry in the control block gives each
 * name its own lock, so nested criticals of different names never share one.
 *
 * single goes to the team's thread 0 (any one thread is allowed): no
 * message is needed to elect it, and copyprivate's block, on thread 0's
 * stack (the shared master stack), is readable by every rank after a barrier.
 * Tasks run at once on the thread that creates them (undeferred, which the
 * spec allows for every task), so taskwait and taskgroup have nothing to wait for.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp_rt.h"
#include "sdsm.h"

static int in_team(void) { return rt_self()->active_level > 0; }

void GOMP_critical_start(void)
{
    if (in_team())
        rt_check(rt_lock(RT_LK_CRITICAL), "critical: sdsm_lock");
}

void GOMP_critical_end(void)
{
    if (in_team())
        rt_check(sdsm_unlock(RT_LK_CRITICAL), "critical: sdsm_unlock");
}

void GOMP_atomic_start(void)
{
    if (in_team())
        rt_check(rt_lock(RT_LK_ATOMIC), "atomic: sdsm_lock");
}

void GOMP_atomic_end(void)
{
    if (in_team())
        rt_check(sdsm_unlock(RT_LK_ATOMIC), "atomic: sdsm_unlock");
}

/* This rank's memo of the registry: name address -> lock index. */
static struct {
    const void *key;
    int idx;
} named_cache[RT_NAMED_MAX];
static int named_cached;
static pthread_mutex_t named_mu = PTHREAD_MUTEX_INITIALIZER;

static int named_lookup(const void *key)
{
    int idx = -1;
    pthread_mutex_lock(&named_mu);
    for (int i = 0; i < named_cached; i++)
        if (named_cache[i].key == key) {
            idx = named_cache[i].idx;
            break;
        }
    pthread_mutex_unlock(&named_mu);
    return idx;
}

int rt_named_lock(void **pptr)
{
    const void *key = pptr;
    int idx = named_lookup(key);
    if (idx >= 0)
        return RT_LK_NAMED + idx;
    rt_check(rt_lock(RT_LK_REGISTRY), "critical: sdsm_lock");
    int n = rt_ctl->named_count;
    if (n < 0 || n > RT_NAMED_MAX)
        rt_fatal("critical", "corrupt registry of named criticals (%d names)", n);
    for (int i = 0; i < n; i++)
        if (rt_ctl->named[i] == key) {
            idx = i;
            break;
        }
    if (idx < 0) {
        if (n == RT_NAMED_MAX)
            rt_fatal("critical", "more than %d differently named critical regions", RT_NAMED_MAX);
        rt_ctl->named[n] = key;
        rt_ctl->named_count = n + 1;
        idx = n;
    }
    rt_check(sdsm_unlock(RT_LK_REGISTRY), "critical: sdsm_unlock");
    pthread_mutex_lock(&named_mu);
    if (named_cached < RT_NAMED_MAX) {
        named_cache[named_cached].key = key;
        named_cache[named_cached++].idx = idx;
    }
    pthread_mutex_unlock(&named_mu);
    return RT_LK_NAMED + idx;
}

void GOMP_critical_name_start(void **pptr)
{
    if (in_team())
        rt_check(rt_lock(rt_named_lock(pptr)), "critical(name): sdsm_lock");
}

void GOMP_critical_name_end(void **pptr)
{
    if (in_team())
        rt_check(sdsm_unlock(rt_named_lock(pptr)), "critical(name): sdsm_unlock");
}

bool GOMP_single_start(void) { return rt_self()->tid == 0; }

void *GOMP_single_copy_start(void)
{
    rt_thread_t *m = rt_self();
    if (m->nthreads == 1 || m->tid == 0)
        return NULL;
    rt_team_barrier(); /* thread 0's GOMP_single_copy_end */
    return rt_ctl->copy_data;
}

void GOMP_single_copy_end(void *data)
{
    rt_thread_t *m = rt_self();
    if (m->nthreads == 1)
        return;
    rt_ctl->copy_data = data;
    rt_team_barrier();
}

/* --- tasks --------------------------------------------------------------- */

#define TASK_FLAG_FINAL     (1u << 1)
#define TASK_FLAG_UP        (1u << 8)
#define TASK_FLAG_REDUCTION (1u << 12)
#define TASK_FLAG_DETACH    (1u << 13)

/* Run fn on a private copy of the task's arguments (cpyfn's firstprivate
 * copies, or the block as is), like a deferred task would see them. */
static void run_copied(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                       long arg_align, void (*set)(void *, const void *), const void *range)
{
    if (arg_align < 1)
        arg_align = 1;
    char buf[arg_size + arg_align];
    void *arg = (void *)(((uintptr_t)buf + (uintptr_t)arg_align - 1) & ~((uintptr_t)arg_align - 1));
    if (cpyfn)
        cpyfn(arg, data);
    else
        memcpy(arg, data, (size_t)arg_size);
    if (set)
        set(arg, range);
    fn(arg);
}

void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void **depend, int priority, void *detach)
{
    (void)if_clause, (void)depend, (void)priority, (void)detach;
    if (flags & TASK_FLAG_DETACH)
        rt_fatal("task detach", "detachable tasks are not supported on sdsm (tasks run undeferred)");
    rt_thread_t *m = rt_self();
    int final = m->final;
    if (flags & TASK_FLAG_FINAL)
        m->final = 1;
    /* Undeferred: dependences are met by running in creation order. */
    if (cpyfn)
        run_copied(fn, data, cpyfn, arg_size, arg_align, NULL, NULL);
    else
        fn(data);
    m->final = final;
}

void GOMP_taskwait(void) {}
void GOMP_taskwait_depend(void **depend) { (void)depend; }
void GOMP_taskyield(void) {}
void GOMP_taskgroup_start(void) {}
void GOMP_taskgroup_end(void) {}

static void set_range_long(void *arg, const void *range) { memcpy(arg, range, 2 * sizeof(long)); }

static void set_range_ull(void *arg, const void *range)
{
    memcpy(arg, range, 2 * sizeof(unsigned long long));
}

/* taskloop: one task that runs the whole range (its first two words). */
void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                   long arg_align, unsigned flags, unsigned long num_tasks, int priority, long start,
                   long end, long step)
{
    (void)num_tasks, (void)priority, (void)step;
    if (flags & TASK_FLAG_REDUCTION)
        rt_fatal("taskloop reduction", "task reductions are not supported on sdsm");
    if ((flags & TASK_FLAG_UP) ? start >= end : start <= end)
        return;
    long range[2] = {start, end};
    run_copied(fn, data, cpyfn, arg_size, arg_align, set_range_long, range);
}

void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                       long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                       unsigned long long start, unsigned long long end, unsigned long long step)
{
    (void)num_tasks, (void)priority, (void)step;
    if (flags & TASK_FLAG_REDUCTION)
        rt_fatal("taskloop reduction", "task reductions are not supported on sdsm");
    if ((flags & TASK_FLAG_UP) ? start >= end : start <= end)
        return;
    unsigned long long range[2] = {start, end};
    run_copied(fn, data, cpyfn, arg_size, arg_align, set_range_ull, range);
}

/* --- cancellation (off: OMP_CANCELLATION=true is refused at start) --- */

bool GOMP_cancel(int which, bool do_cancel)
{
    (void)which, (void)do_cancel;
    return false;
}

bool GOMP_cancellation_point(int which)
{
    (void)which;
    return false;
}

/* --- the error directive at execution ---------------------------------- */

static int msg_len(const char *msg, size_t len)
{
    if (!msg)
        return 0;
    size_t n = len == (size_t)-1 ? strlen(msg) : len;
    return n > 4000 ? 4000 : (int)n;
}

void GOMP_error(const char *msg, size_t len)
{
    rt_fatal("error directive", "%.*s", msg_len(msg, len), msg ? msg : "");
}

void GOMP_warning(const char *msg, size_t len)
{
    fprintf(stderr, "sdsm: rank %d: OpenMP: error directive (warning): %.*s\n", sdsm_rank(),
            msg_len(msg, len), msg ? msg : "");
}
