/*
 * omp_rt.h - the OpenMP runtime proper of libsdsm-omp: the team, the
 * libgomp ABI and the omp_* API (main.c, rt.c, env.c, team.c, loop.c,
 * combined.c, sync.c, atomic.c, api.c, unsupported.c).
 *
 * The team is every compute thread of every rank (SDSM_THREADS per rank):
 * omp_get_thread_num() is sdsm_thread_id(), rank-major.  Rank 0's first
 * thread is the master and runs the program's main; the others wait in
 * sdsm_barrier() for a parallel region.  A region's descriptor (function,
 * data, the run-sched ICV, a combined construct's loop) lives in a control
 * block the ranks allocate with sdsm_alloc at start-up; the master writes it
 * and the start barrier (a full memory barrier) publishes it.  Shared state
 * that changes inside a region (dynamic loop counters, ordered turns, the
 * named-critical and lock registries) is only touched under an sdsm lock, so
 * it is coherent under hlrc, update and ibec alike.
 *
 * Only one level of parallelism is active: a region met inside another (or
 * with num_threads(1), if(0), omp_set_num_threads(1)) runs on the calling
 * thread as a team of one.
 */
#ifndef SDSM_OMP_RT_H
#define SDSM_OMP_RT_H

#include <stdint.h>

#include "sdsm.h"

#pragma GCC visibility push(hidden)

/* sdsm lock and condition-variable ids of the runtime: the top of the id
 * space, [RT_ID_BASE, 2^31), which programs that also call sdsm_lock
 * directly must leave alone (see docs/guide/openmp.md). */
#define RT_ID_BASE     0x70000000
#define RT_LK_REGISTRY (RT_ID_BASE + 0)      /* named criticals, lock ids */
#define RT_LK_ATOMIC   (RT_ID_BASE + 1)      /* GOMP_atomic_start/end */
#define RT_LK_CRITICAL (RT_ID_BASE + 2)      /* the unnamed critical */
#define RT_LK_SLOT     (RT_ID_BASE + 0x100)  /* + slot: a loop's counter */
#define RT_LK_ORDERED  (RT_ID_BASE + 0x200)  /* + slot: its ordered turn */
#define RT_LK_ADDR     (RT_ID_BASE + 0x1000) /* + hash: __atomic_* on shared data */
#define RT_ADDR_LOCKS  4096
#define RT_LK_NAMED    (RT_ID_BASE + 0x10000) /* + n: critical(name) */
#define RT_NAMED_MAX   4096
#define RT_LK_USER     (RT_ID_BASE + 0x100000)  /* + n: omp_lock_t data lock */
#define RT_LK_USERMETA (RT_ID_BASE + 0x4000000) /* + n: its held flag */
#define RT_USER_LOCKS  (1 << 20)                /* omp_init_lock calls per run */

#define RT_SLOTS 16 /* dynamic/guided/ordered loops in flight (nowait) */
#define RT_PAGE  4096

/* Schedule kinds, as gcc passes them (GFS_*) and omp_sched_t. */
enum {
    RT_SCHED_RUNTIME = 0,
    RT_SCHED_STATIC = 1,
    RT_SCHED_DYNAMIC = 2,
    RT_SCHED_GUIDED = 3,
    RT_SCHED_AUTO = 4
};
#define RT_SCHED_MONOTONIC 0x80000000u

/* One dynamic, guided or ordered loop in flight, guarded by RT_LK_SLOT + i.
 * The slot serves workshare number `seq` until all `left` threads are done
 * with it; a thread that reaches a later workshare on the same slot waits
 * for that. */
typedef struct {
    _Alignas(RT_PAGE) uint64_t seq; /* workshare number served (0: never used) */
    uint64_t next;                  /* next logical iteration to hand out */
    uint64_t n;                     /* iteration count */
    int left;                       /* threads not yet done with it */
    int waiters;                    /* threads waiting to reuse the slot */
    /* The ordered turn, guarded by RT_LK_ORDERED + i (held through the
     * ordered region, so under ibec its writes travel with the turn). */
    _Alignas(RT_PAGE) uint64_t ord_seq; /* workshare number the turn belongs to */
    uint64_t ord_next;                  /* first logical iteration of the chunk whose turn it is */
    int ord_waiters;
} rt_slot_t;

enum { RT_RUN = 1, RT_EXIT = 2 };

/* A combined construct's loop (GOMP_parallel_loop_*, _sections): each
 * thread enters it before running the outlined function. */
typedef struct {
    int kind; /* 0: none; RT_SCHED_* (resolved); -1: sections */
    long start, end, incr, chunk;
} rt_prews_t;

/* A fork: the region the team runs next (or RT_EXIT), from the master to
 * every thread through the start barrier (team.c). */
typedef struct {
    int kind;   /* RT_RUN or RT_EXIT */
    int status; /* RT_EXIT: the program's exit status */
    void (*fn)(void *);
    void *data;
    int sched_kind; /* the master's run-sched-var */
    long sched_chunk;
    rt_prews_t pre;
} rt_fork_t;

/* The control block (sdsm_alloc'd, home rank 0). */
typedef struct {
    /* Written by the master, read after the start barrier, where the
     * barrier's release does not carry the fork (team.c). */
    rt_fork_t fork;
    void *copy_data;         /* GOMP_single_copy_end's block, read after a barrier */
    uintptr_t master_tls[2]; /* the master's TLS at rank 0, for crash reports */
    /* Registries, guarded by RT_LK_REGISTRY. */
    _Alignas(RT_PAGE) int named_count;
    int user_locks;
    const void *named[RT_NAMED_MAX];
    _Alignas(RT_PAGE) rt_slot_t slot[RT_SLOTS];
} rt_ctl_t;

extern rt_ctl_t *rt_ctl;
extern unsigned char *rt_held; /* [RT_USER_LOCKS]: omp locks' held flags (shared) */
extern int rt_team_size;       /* sdsm_thread_count(): the one team */
extern int rt_exit_status;     /* the master's exit status, as the workers learnt it */

/* The calling thread's current workshare (a loop, or sections). */
typedef struct {
    int active; /* a loop is in progress */
    int kind;   /* RT_SCHED_STATIC / DYNAMIC / GUIDED */
    int local;  /* team of one: no shared state */
    int ordered;
    int is_ull;
    int slot; /* shared slot index, or -1 */
    uint64_t seq;
    uint64_t n, chunk;
    uint64_t static_next; /* static: next chunk number of this thread;
                               team of one: 1 once the range was given */
    uint64_t cs, ce;      /* current chunk [cs, ce), logical */
    int have_chunk;
    int ord_held;                           /* the ordered turn of this chunk was seen */
    long start, end, incr;                  /* signed loops */
    unsigned long long ustart, uend, uincr; /* _ull loops */
} rt_ws_t;

#define RT_MAX_LEVELS 16

/* Per-thread state.  A serialized region saves it on the C stack and
 * restores it at its end. */
typedef struct {
    int nthreads;     /* the current team's size (1: team of one) */
    int tid;          /* omp_get_thread_num() */
    int level;        /* nesting depth of parallel regions */
    int active_level; /* 1 inside the team's region, else 0 */
    int final;        /* inside a final task */
    int tids[RT_MAX_LEVELS + 1], sizes[RT_MAX_LEVELS + 1];
    uint64_t ws_seq; /* team workshares met (same in every thread) */
    rt_ws_t ws;
    /* ICVs (data environment of the current task) */
    int nthreads_var; /* rt_team_size or 1 */
    int sched_kind;
    long sched_chunk;
    int dyn_var, nest_var, max_active_levels;
} rt_thread_t;

extern __thread rt_thread_t rt_me;
extern __thread int rt_is_compute; /* a team thread of this runtime */

/* Counts this thread's acquires (locks, barriers, condition waits): the
 * relaxed atomic loads atomic.c answers from the thread's last value never
 * reach back across one. */
extern __thread unsigned rt_sync_epoch;

static inline int rt_lock(int id)
{
    rt_sync_epoch++;
    return sdsm_lock(id);
}

static inline int rt_cond_wait(int cond, int lock)
{
    int rc = sdsm_cond_wait(cond, lock);
    rt_sync_epoch++;
    return rc;
}

/* rt.c: the calling thread's state; a thread the runtime did not start
 * (the program's own) is a team of one. */
void rt_thread_init(int nthreads, int tid);
static inline rt_thread_t *rt_self(void)
{
    if (__builtin_expect(rt_me.nthreads == 0, 0))
        rt_thread_init(1, 0);
    return &rt_me;
}

/* env.c: ICVs from OMP_* (defaults for every thread) */
typedef struct {
    int sched_kind;
    long sched_chunk;
    int dyn_var, nest_var, max_active_levels, thread_limit, cancellation;
    size_t stacksize;
} rt_env_t;
extern rt_env_t rt_env;
void rt_env_threads(void);                       /* before boot: SDSM_THREADS */
void rt_env_check_team(int nprocs, int threads); /* after boot */
void rt_env_read(void);

/* team.c */
void rt_parallel(void (*fn)(void *), void *data, unsigned num_threads, const rt_prews_t *pre,
                 const char *what);
void rt_parallel_start(void (*fn)(void *), void *data, unsigned num_threads, const rt_prews_t *pre,
                       const char *what);
void rt_worker_loop(void);
void rt_release_workers(int kind, int status);

/* rt.c: sdsm_barrier() over the whole team, an acquire (rt_sync_epoch) */
void rt_team_barrier(void);

/* loop.c */
void rt_prews_enter(const rt_prews_t *p);
/* A combined construct's loop with its schedule resolved (runtime, auto). */
rt_prews_t rt_prews_loop(int sched, long start, long end, long incr, long chunk);

/* Atomic operations at a shared address's home (libsdsm, src/api/omp.c):
 * one round trip.  Ops in libsdsm's order (SDSM_AOP_*). */
enum {
    RT_AOP_LOAD,
    RT_AOP_STORE,
    RT_AOP_XCHG,
    RT_AOP_CAS,
    RT_AOP_ADD,
    RT_AOP_SUB,
    RT_AOP_AND,
    RT_AOP_OR,
    RT_AOP_XOR,
    RT_AOP_NAND
};
/* 1 done, 0 compare failed (*old: the value found), SDSM_ENOTSUP when the home
 * cannot take it (ibec, a misaligned address): use a lock instead. */
int rt_home_atomic(volatile void *p, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                   uint64_t *old);

/* sync.c */
int rt_named_lock(void **pptr);

/* rt.c.  Errors: a message naming the construct, rank and thread, then the
 * job stops. */
__attribute__((noreturn, format(printf, 2, 3))) void rt_fatal(const char *what, const char *fmt, ...);
/* sdsm call failed (errors=return mode): stop with its name */
void rt_check(int rc, const char *call);

#pragma GCC visibility pop

int sdsm__omp_lock_try(int id, long wait_ns); /* libsdsm's: rt_lock_try */
int sdsm__omp_thread_create(sdsm_thread_t *t, void *(*fn)(void *), void *arg, void *stack, size_t len);
int sdsm__omp_atomic(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old);
int sdsm__omp_publish(void); /* libsdsm's: this rank's writes published before a store */

/* Lock id taken if this rank can have it within wait_ns (api/omp.c,
 * sdsm__omp_lock_try, where a bounded acquire can leave its request
 * behind: hlrc and update between ranks); an acquire either way.  1 taken,
 * 0 not (held by a thread of this rank, this one included, or not granted
 * in time). */
#define RT_TRY_NS 2000000l /* what a try waits for a lock another rank may have */
static inline int rt_lock_try(int id, long wait_ns, const char *call)
{
    int rc = sdsm__omp_lock_try(id, wait_ns);
    if (rc < 0 && rc != SDSM_EHELD)
        rt_check(rc, call);
    rt_sync_epoch++;
    return rc == 0;
}

/* The libgomp entry points the runtime also calls itself (exported). */
void GOMP_barrier(void);

#endif
