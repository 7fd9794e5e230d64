/*
 * team.c - parallel regions: the master publishes a region in the control
 * block, and every compute thread of every rank runs it between two
 * sdsm_barrier() calls (each a full memory barrier over all of them: the
 * start barrier publishes the descriptor and the master's writes, the end
 * barrier is the region's implicit barrier).  Between regions the workers
 * wait in the start barrier, giving up their run slots.
 *
 * A region met while the team is already active (nested), or asked for
 * with one thread, runs at once on the calling thread as a team of one.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

/* Saved states of GOMP_parallel_start, popped by GOMP_parallel_end. */
static __thread struct {
    rt_thread_t saved;
    int team;
} start_stack[RT_MAX_LEVELS];
static __thread int start_depth;

/* Enter a level of nesting: team `nthreads` with this thread as `tid`. */
static void enter_level(rt_thread_t *m, int nthreads, int tid, int active)
{
    m->level++;
    if (active)
        m->active_level = 1;
    m->nthreads = nthreads;
    m->tid = tid;
    if (m->level <= RT_MAX_LEVELS) {
        m->tids[m->level] = tid;
        m->sizes[m->level] = nthreads;
    }
    memset(&m->ws, 0, sizeof m->ws);
    m->ws.slot = -1;
}

/* Back to the state saved before a region; the count of team workshares
 * goes on (it must stay equal in every thread of the team). */
static void leave_level(rt_thread_t *m, const rt_thread_t *saved)
{
    uint64_t seq = m->ws_seq;
    *m = *saved;
    m->ws_seq = seq;
}

/*
 * The master runs main on a stack in shared memory (mem.c), so its frames
 * inside a region are shared memory too, and on the page where main's frame
 * ends they sat beside main's variables, which every thread of the team
 * reads (a region's shared variables).  Each of the master's writes to its
 * own locals there (a loop counter, a recursion) made that page written at
 * its next release, and every other rank fetched it again: tsp_omp-sdsm at 2
 * ranks took 330,000 read faults for it.  So the master runs the region's
 * function from the next page boundary below its frame down: its locals
 * stay shared memory (copyprivate hands their addresses to the team), but
 * on pages of their own.
 */

static __thread void (*below_fn)(void *);
static __thread void *below_data;
static __thread ucontext_t below_back, below_ctx;

static void below_trampoline(void)
{
    below_fn(below_data);
    /* returns to uc_link: below_back */
}

static void run_fn(void (*fn)(void *), void *data)
{
    size_t len = 0;
    char *base = sdsm_omp_master_stack_bounds(&len), here;
    uintptr_t sp = (uintptr_t)&here, lo = (uintptr_t)base;
    uintptr_t top = ((sp - 512) & ~(uintptr_t)(RT_PAGE - 1)) - RT_PAGE;
    if (!base || sp < lo || sp >= lo + len || top < lo + 16 * RT_PAGE) {
        fn(data); /* a worker (its stack is its own), or too deep to move */
        return;
    }
    below_fn = fn;
    below_data = data;
    if (getcontext(&below_ctx))
        rt_fatal("parallel", "getcontext failed");
    below_ctx.uc_stack.ss_sp = base;
    below_ctx.uc_stack.ss_size = top - lo;
    below_ctx.uc_link = &below_back;
    makecontext(&below_ctx, below_trampoline, 0);
    if (swapcontext(&below_back, &below_ctx))
        rt_fatal("parallel", "swapcontext failed");
}

/* Run the region's function as one of the team's threads. */
static void run_in_team(void (*fn)(void *), void *data, const rt_prews_t *pre, int sched_kind,
                        long sched_chunk)
{
    rt_thread_t *m = &rt_me, saved = *m;
    enter_level(m, rt_team_size, sdsm_thread_id(), 1);
    m->sched_kind = sched_kind;
    m->sched_chunk = sched_chunk;
    if (pre->kind)
        rt_prews_enter(pre);
    run_fn(fn, data);
    leave_level(m, &saved);
}

void sdsm__omp_note_tls(int rank, int tid, uintptr_t lo, uintptr_t hi);
int sdsm__omp_barrier_bcast(const void *in, void *out, size_t len);
int sdsm__omp_barrier_manager(void);
void sdsm__omp_note_region(void);

/*
 * Where rank 0 - the master's - manages barriers, the start barrier's
 * release carries the fork (libsdsm's sdsm__omp_barrier_bcast); otherwise
 * it goes through the control block, whose page every worker then fetches
 * again: one round trip more per region (bench/omp: 6 messages a region at
 * 2 ranks, 4 with the release).
 */
static int fork_in_release(void)
{
    static _Atomic int known; /* 0: not asked yet; 1: yes; 2: no */
    int k = atomic_load(&known);
    if (!k) {
        k = sdsm__omp_barrier_manager() == 0 ? 1 : 2;
        atomic_store(&known, k);
    }
    return k == 1;
}

static void fork_send(const rt_fork_t *f)
{
    if (f->kind == RT_RUN)
        sdsm__omp_note_region();
    if (fork_in_release()) {
        rt_fork_t got;
        rt_check(sdsm__omp_barrier_bcast(f, &got, sizeof got), "barrier");
        rt_sync_epoch++;
        return;
    }
    rt_ctl->fork = *f;
    rt_team_barrier();
}

static void fork_wait(rt_fork_t *f)
{
    if (fork_in_release()) {
        rt_check(sdsm__omp_barrier_bcast(NULL, f, sizeof *f), "barrier");
        rt_sync_epoch++;
        return;
    }
    rt_team_barrier();
    *f = rt_ctl->fork;
}

void rt_worker_loop(void)
{
    int noted = 0;
    for (;;) {
        rt_fork_t f;
        fork_wait(&f);
        if (!noted && rt_ctl->master_tls[1]) { /* for crash reports: rank 0's master's TLS */
            sdsm__omp_note_tls(0, 0, rt_ctl->master_tls[0], rt_ctl->master_tls[1]);
            noted = 1;
        }
        if (f.kind == RT_EXIT) {
            rt_exit_status = f.status;
            return;
        }
        if (f.kind != RT_RUN || !f.fn)
            rt_fatal("parallel", "corrupt region descriptor (kind %d) at the start barrier", f.kind);
        run_in_team(f.fn, f.data, &f.pre, f.sched_kind, f.sched_chunk);
        rt_team_barrier();
    }
}

void rt_release_workers(int kind, int status)
{
    rt_fork_t f = {.kind = kind, .status = status};
    fork_send(&f);
}

/* Whether a region asking for `num_threads` (0: the default) runs on the
 * whole team; stops the job for a count sdsm cannot give. */
static bool use_team(rt_thread_t *m, unsigned num_threads, const char *what)
{
    int n = num_threads ? (int)num_threads : m->nthreads_var;
    if (pt_mode && n > 1 && rt_team_size > 1)
        rt_fatal(what, "OpenMP parallel regions in a program linked with sdsmcc -pthread and without "
                       "-fopenmp are not supported: link with -fopenmp");
    if (!rt_is_compute || m->active_level > 0 || m->max_active_levels == 0 || n == 1 || rt_team_size == 1)
        return false;
    if (n != rt_team_size)
        rt_fatal(what,
                 "num_threads(%d): the team on sdsm is every compute thread of every rank, "
                 "%d threads (%d ranks x %d); ask for %d, for 1, or give no num_threads clause",
                 n, rt_team_size, sdsm_nprocs(), rt_team_size / sdsm_nprocs(), rt_team_size);
    if (sdsm_thread_id() != 0)
        rt_fatal(what, "a parallel region started by a thread other than the master");
    return true;
}

static void publish(void (*fn)(void *), void *data, const rt_prews_t *pre)
{
    rt_thread_t *m = &rt_me;
    rt_fork_t f = {RT_RUN, 0, fn, data, m->sched_kind, m->sched_chunk, *pre};
    fork_send(&f);
}

static void serial_region(void (*fn)(void *), void *data, const rt_prews_t *pre)
{
    rt_thread_t *m = rt_self(), saved = *m;
    enter_level(m, 1, 0, 0);
    if (pre->kind)
        rt_prews_enter(pre);
    fn(data);
    leave_level(m, &saved);
}

void rt_parallel(void (*fn)(void *), void *data, unsigned num_threads, const rt_prews_t *pre,
                 const char *what)
{
    rt_thread_t *m = rt_self();
    if (!use_team(m, num_threads, what)) {
        serial_region(fn, data, pre);
        return;
    }
    publish(fn, data, pre);
    run_in_team(fn, data, pre, m->sched_kind, m->sched_chunk);
    rt_team_barrier();
}

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    (void)flags; /* proc_bind: threads are placed by sdsm */
    rt_prews_t none = {0};
    rt_parallel(fn, data, num_threads, &none, "parallel");
}

/* The start/end forms (older gcc): the master runs fn between them. */
void rt_parallel_start(void (*fn)(void *), void *data, unsigned num_threads, const rt_prews_t *pre,
                       const char *what)
{
    rt_thread_t *m = rt_self();
    if (start_depth >= RT_MAX_LEVELS)
        rt_fatal(what, "parallel regions nested deeper than %d", RT_MAX_LEVELS);
    start_stack[start_depth].saved = *m;
    int team = use_team(m, num_threads, what);
    start_stack[start_depth++].team = team;
    if (team) {
        publish(fn, data, pre);
        enter_level(m, rt_team_size, 0, 1);
    } else {
        enter_level(m, 1, 0, 0);
    }
    if (pre->kind)
        rt_prews_enter(pre);
}

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads)
{
    rt_prews_t none = {0};
    rt_parallel_start(fn, data, num_threads, &none, "parallel");
}

void GOMP_parallel_end(void)
{
    rt_thread_t *m = rt_self();
    if (start_depth <= 0)
        rt_fatal("GOMP_parallel_end", "no parallel region to end");
    start_depth--;
    if (start_stack[start_depth].team)
        rt_team_barrier();
    leave_level(m, &start_stack[start_depth].saved);
}
