/*
 * stats.h - per-rank counters, printed by rank 0 at finalize (SDSM_STATS):
 * a summary line per rank, then the counters by group.  Counters are relaxed
 * atomics: they are bumped from the application threads, the fault handler
 * and the service thread.
 */
#ifndef SDSM_CORE_STATS_H
#define SDSM_CORE_STATS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define SDSM_STATS_MAX_TYPES 48 /* at least net/msg.h's SDSM_MSG_NTYPES (checked there) */

typedef enum sdsm_stat {
    SDSM_ST_READ_FAULTS,
    SDSM_ST_WRITE_FAULTS,
    SDSM_ST_PAGES_FETCHED,
    SDSM_ST_BYTES_FETCHED,
    SDSM_ST_PAGES_SERVED,
    SDSM_ST_PAGES_UPDATED,
    SDSM_ST_PAGES_UNMAPPED,
    SDSM_ST_TWINS,
    SDSM_ST_DIFFS_MADE,
    SDSM_ST_DIFF_BYTES_MADE,
    SDSM_ST_DIFF_RUNS_MADE,
    SDSM_ST_DIFF_WIRE_BYTES,
    SDSM_ST_DIFFS_APPLIED,
    SDSM_ST_DIFF_BYTES_APPLIED,
    SDSM_ST_INVALIDATIONS,
    SDSM_ST_LOCK_ACQUIRES,
    SDSM_ST_LOCK_WAIT_NS,
    SDSM_ST_LOCK_HANDOFFS, /* locks passed between threads of this rank, no message */
    SDSM_ST_LOCK_CACHED,   /* locks taken again where they stayed since this rank's unlock, no message */
    SDSM_ST_BARRIERS,
    SDSM_ST_BARRIER_WAIT_NS,
    SDSM_ST_BARRIER_ROUNDS, /* arrivals of this rank (a barrier takes 1 to 3 rounds) */
    SDSM_ST_COND_WAITS,
    SDSM_ST_REJECTED_MSGS,
    SDSM_ST_FAULT_WAIT_NS,  /* time in the fault handler (mostly waiting for pages) */
    SDSM_ST_RUN_MAX,        /* most compute threads holding a run slot at once (max, not sum) */
    SDSM_ST_RUN_YIELDS,     /* run slots given up by compute threads that had to wait */
    SDSM_ST_READY_WAIT_NS,  /* time compute threads waited for a run slot */
    SDSM_ST_PREFETCH_PAGES, /* pages asked for by sdsm_prefetch */
    SDSM_ST_PREFETCH_REQS,  /* the FETCH requests those took */
    SDSM_ST_ZC_PAGES,       /* pages fetched read straight from a same-host home's memory */
    SDSM_ST_ATOMICS_HOME,   /* atomic operations sent to another rank's home page */
    SDSM_ST_RUN_FORCED,     /* run slots taken beyond SDSM_RUN_THREADS: every holder slept outside sdsm */
    SDSM_ST_RUN_HANDED,     /* barrier waiters moved asleep to the run-slot queue (sched.c) */
    SDSM_ST_AHEAD_PAGES,    /* pages asked for ahead of read faults (automatic prefetch) */
    SDSM_ST_AHEAD_USED,     /* ...seen in use: waited for, or gone past by their stream */
    SDSM_ST_AHEAD_WASTED,   /* ...dropped before being seen in use (invalidated, freed, stale) */
    SDSM_ST_WRITE_AHEAD,    /* home pages opened for writing ahead of write faults */
    SDSM_ST_IBEC_OVERLAPS,  /* ibec: critical sections entered while another thread of the rank was in one */
    SDSM_ST_IBEC_HANDOVERS, /* ibec: pages one thread's critical section took from another's */
    SDSM_ST_WBUF_FLUSHES,   /* diffs sent early by the write buffer (SDSM_WRITE_BUFFER) */
    SDSM_ST_HOT_KEPT,       /* home pages announced at a release without a write fault (SDSM_HOME_HOT) */
    SDSM_ST_HOT_CLEAN,      /* ...not announced: the kernel saw no write (mem/wptrack.h) */
    SDSM_ST_WPT_ON,         /* 1: the kernel tracks written pages here (mem/wptrack.h) */
    SDSM_ST_LEAD_WAITS, /* waits slept in the event loop's epoll_wait (net/progress.c, sdsm_net_lead_wait) */
    SDSM_ST_LEAD_KICKS, /* ...woken by another thread's kick, not by their reply */
    SDSM_ST_SERVICE_WAKES, /* the service thread woke with events to handle */
    SDSM_ST_SERVICE_ASIDE, /* ...and stepped aside for a leader that serves (net/progress.c) */
    SDSM_ST_REQ_PINS,   /* requests whose peer's socket the sender took from the service thread (net/pin.c) */
    SDSM_ST_IBEC_KEYED, /* ibec: sections a rank runs at once with memory protection keys (0: one at a time) */
    SDSM_ST_SPIN_WON,   /* waits whose polling saw the answer (core/wait.h) */
    SDSM_ST_SPIN_LOST,  /* ...polled SDSM_SPIN_US in vain, then slept */
    SDSM_ST_SPIN_SKIPPED, /* ...slept at once: polling that word had not been paying */
    SDSM_ST_SPIN_STOLEN,  /* polls that lost their CPU to another job (core/wait.h) */
    SDSM_ST_READY_SLEEPS, /* compute threads that slept waiting for a run slot (sched.c, take) */
    SDSM_ST_RUN_LENT, /* run slots lent beyond SDSM_RUN_THREADS: a holder computed SDSM_RUN_SLICE without a runtime call */
    SDSM_ST_QUIET_PUBLISHES, /* releases of a quiet rank's pending writes (sync/quiet.c) */
    SDSM_ST_QUIET_PAGES,     /* ...pages they announced */
    SDSM_ST_FLUSH_PUBLISHES, /* omp flushes (calls from sdsmcc) that published pending writes (api/omp.c) */
    SDSM_ST_FLUSH_PAGES,     /* ...pages they announced */
    SDSM_ST_ZC_DECLINED, /* pages asked for zero-copy, sent as bytes: one of the run was being written at its home (serve.c) */
    SDSM_ST_TWIN_GUARDS, /* invalidations sent ahead of a page served with unreleased home writes (inval.c) */
    SDSM_ST_DIFFS_EARLY, /* batches of diffs sent eagerly because an invalidation met a written page (copies.c) */
    SDSM_ST_FLAGS_ON,   /* 1: the quiet-rank publisher runs here (sync/quiet.c: plain flags with flush) */
    SDSM_ST_MIGRATIONS, /* pages whose home moved to their single writer (barrier manager: sync/barrier.c) */
    SDSM_ST_REREAD_PAGES, /* pages fetched again as a barrier that dropped them ended (proto/reread.c) */
    SDSM_ST_REREAD_REQS,  /* ...the FETCH requests those took */
    SDSM_ST_REREAD_USED,  /* ...read before the next barrier dropped them */
    SDSM_ST_OMP_REGIONS,  /* OpenMP parallel regions the master started on the whole team (src/omp/team.c) */
    SDSM_ST_LOSS_PROBES, /* heartbeats sent behind a stalled segment on a link to another host (net/heartbeat.c) */
    SDSM_ST_COUNT
} sdsm_stat_t;

typedef struct sdsm_stats {
    _Atomic uint64_t v[SDSM_ST_COUNT];
    _Atomic uint64_t msgs_sent[SDSM_STATS_MAX_TYPES];
    _Atomic uint64_t bytes_sent[SDSM_STATS_MAX_TYPES]; /* header included */
    _Atomic uint64_t msgs_recv[SDSM_STATS_MAX_TYPES];  /* for the trace's traffic plots */
    _Atomic uint64_t bytes_recv[SDSM_STATS_MAX_TYPES];
} sdsm_stats_t;

/* Plain snapshot, the form that travels to rank 0. */
typedef struct sdsm_stats_snap {
    uint64_t v[SDSM_ST_COUNT];
    uint64_t msgs_sent[SDSM_STATS_MAX_TYPES];
    uint64_t bytes_sent[SDSM_STATS_MAX_TYPES];
    uint64_t msgs_recv[SDSM_STATS_MAX_TYPES];
    uint64_t bytes_recv[SDSM_STATS_MAX_TYPES];
} sdsm_stats_snap_t;

/* SDSM_STATS's values, in the order of its choices (core/config.c). */
typedef enum sdsm_stats_mode {
    SDSM_STATS_OFF,
    SDSM_STATS_SHOWN, /* summary lines and the counters that are not zero */
    SDSM_STATS_ALL,   /* ...and the zeros */
    SDSM_STATS_JSON,  /* one JSON line, every counter in its raw unit */
} sdsm_stats_mode_t;

extern sdsm_stats_t sdsm_stats;

static inline void sdsm_stat_add(sdsm_stat_t s, uint64_t n)
{
    atomic_fetch_add_explicit(&sdsm_stats.v[s], n, memory_order_relaxed);
}

static inline void sdsm_stat_max(sdsm_stat_t s, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(&sdsm_stats.v[s], memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(&sdsm_stats.v[s], &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

static inline void sdsm_stat_msg(unsigned type, uint64_t bytes)
{
    if (type < SDSM_STATS_MAX_TYPES) {
        atomic_fetch_add_explicit(&sdsm_stats.msgs_sent[type], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sdsm_stats.bytes_sent[type], bytes, memory_order_relaxed);
    }
}

static inline void sdsm_stat_recv(unsigned type, uint64_t bytes)
{
    if (type < SDSM_STATS_MAX_TYPES) {
        atomic_fetch_add_explicit(&sdsm_stats.msgs_recv[type], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sdsm_stats.bytes_recv[type], bytes, memory_order_relaxed);
    }
}

void sdsm_stats_snapshot(sdsm_stats_snap_t *out);
const char *sdsm_stats_key(int stat); /* its JSON key, unit included (fault_time_ns) */
uint64_t sdsm_now_ns(void);

/* Said after the header when set (the job's memory is one copy for the host). */
extern const char *sdsm_stats_header_note;
/* Print every rank's counters as mode says; type_name(t) names message types. */
void sdsm_stats_print(FILE *out, const sdsm_stats_snap_t *snaps, int nranks,
                      const char *(*type_name)(unsigned type), sdsm_stats_mode_t mode);

#endif
