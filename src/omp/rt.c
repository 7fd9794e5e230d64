/*
 * rt.c - what every file of the OpenMP runtime uses: the control block and
 * the team's size (set up at the start, main.c), the calling thread's state
 * and its defaults (rt_thread_init), the team barrier, and the stop with a
 * message that names the construct, rank and thread (rt_fatal).  It calls
 * no other file of the runtime but env.c's defaults, so team.c, loop.c and
 * the rest sit above it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

rt_ctl_t *rt_ctl;
unsigned char *rt_held;
int rt_team_size;
int rt_exit_status;
int pt_mode;

__thread rt_thread_t rt_me;
__thread int rt_is_compute;

void rt_fatal(const char *what, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int tid = rt_is_compute ? sdsm_thread_id() : -1;
    if (pt_mode)
        sdsm_abort(1, "pthreads: %s: %s (rank %d, compute thread %d of %d)", what, msg, sdsm_rank(), tid,
                   rt_team_size);
    sdsm_abort(1, "OpenMP: %s: %s (rank %d, thread %d, team of %d)", what, msg, sdsm_rank(), tid,
               rt_team_size);
}

void rt_check(int rc, const char *call)
{
    if (rc < 0)
        rt_fatal(call, "%s", sdsm_strerror(rc));
}

void rt_thread_init(int nthreads, int tid)
{
    rt_thread_t *m = &rt_me;
    memset(m, 0, sizeof *m);
    m->nthreads = nthreads;
    m->tid = tid;
    m->sizes[0] = 1;
    m->nthreads_var = rt_team_size > 0 ? rt_team_size : 1;
    m->sched_kind = rt_env.sched_kind;
    m->sched_chunk = rt_env.sched_chunk;
    m->dyn_var = rt_env.dyn_var;
    m->nest_var = rt_env.nest_var;
    m->max_active_levels = rt_env.max_active_levels;
    m->ws.slot = -1;
}

__thread unsigned rt_sync_epoch;

void rt_team_barrier(void)
{
    rt_check(sdsm_barrier(), "barrier");
    rt_sync_epoch++;
}

void GOMP_barrier(void)
{
    if (rt_self()->nthreads > 1)
        rt_team_barrier();
}

bool GOMP_barrier_cancel(void)
{
    GOMP_barrier();
    return false;
}
