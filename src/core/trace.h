/*
 * trace.h - per-thread timelines (SDSM_TRACE=dir).
 *
 * Trace points are one-line calls in the layers above.  With tracing off a
 * point costs one load of sdsm_trace_on and a branch predicted not taken;
 * with tracing on it appends a fixed-size record to the calling thread's own
 * buffer (no lock, no allocation, safe in the fault handler).  A full buffer
 * is written out by its own thread with one write(2) (the time it took is
 * itself recorded, as a "trace flush" span); the rest at sdsm_finalize.
 *
 * File DIR/rank-R.sdsmtrace: one JSON header line (rank, host, clocks, the
 * names of kinds, counters and message types), then binary chunks:
 *   SPAN: {magic, slot, os tid, count} + count x sdsm_trace_rec_t
 *   SMPL: {magic, values per sample, count, 0} + count x (1 + values) u64
 *   NAME: {magic, slot, os tid, 16} + 16 bytes of thread name
 *   TEND: {magic, 0, 0, 4} + {realtime, monotonic, dropped, threads untraced}
 * all little-endian u32 / u64 as the machine writes them (tools/sdsm-report
 * reads them).
 */
#ifndef SDSM_CORE_TRACE_H
#define SDSM_CORE_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/stats.h"

/* Span kinds; a, b, c mean what the comment says (tools/sdsm-report knows). */
typedef enum sdsm_trace_kind {
    SDSM_TR_FAULT_READ,   /* a page, b home, c bytes this fault asked its home for (0: none) */
    SDSM_TR_FAULT_WRITE,  /* same */
    SDSM_TR_DIFF_MADE,    /* a page, b bytes changed, c bytes encoded */
    SDSM_TR_DIFF_APPLIED, /* a page, b bytes written */
    SDSM_TR_LOCK_WAIT,    /* a lock id */
    SDSM_TR_LOCK_HOLD,    /* a lock id (from acquired to released or handed on) */
    SDSM_TR_BARRIER,      /* a barrier number (1, 2, ... the same on every rank), b manager */
    SDSM_TR_COND_WAIT,    /* a condition id, b lock id */
    SDSM_TR_ALLOC,        /* a first page, b bytes, c pages */
    SDSM_TR_FLUSH,        /* this thread writing its full trace buffer, b bytes */
    SDSM_TR_COUNT
} sdsm_trace_kind_t;

typedef struct sdsm_trace_rec {
    uint64_t t0, t1; /* CLOCK_MONOTONIC ns */
    uint32_t kind, a;
    uint64_t b, c;
} sdsm_trace_rec_t;

extern _Atomic int sdsm_trace_on;

static inline int sdsm_trace_enabled(void)
{
    return __builtin_expect(atomic_load_explicit(&sdsm_trace_on, memory_order_relaxed), 0);
}

/* Start time of a span, 0 (and no clock read) when tracing is off. */
static inline uint64_t sdsm_trace_t0(void) { return sdsm_trace_enabled() ? sdsm_now_ns() : 0; }

void sdsm_trace_rec(sdsm_trace_kind_t kind, uint64_t t0, uint32_t a, uint64_t b, uint64_t c);

/* One span from t0 to now.  The trace point's whole cost when off. */
#define SDSM_TRACE(kind, t0, a, b, c)                                                                        \
    do {                                                                                                     \
        if (sdsm_trace_enabled())                                                                            \
            sdsm_trace_rec((kind), (t0), (uint32_t)(a), (uint64_t)(b), (uint64_t)(c));                       \
    } while (0)

/* Name the calling thread in the trace ("service", "compute 3"); idx < 0: no number. */
void sdsm_trace_thread_name(const char *name, int idx);

/*
 * Open dir/rank-R.sdsmtrace and start sampling the counters every
 * interval_ms.  type_name names message types.  0, or SDSM_ESYS
 * (SDSM_ENOMEM) logged: the run goes on untraced.
 */
int sdsm_trace_init(const char *dir, int rank, int nprocs, long interval_ms, size_t buf_bytes,
                    const char *(*type_name)(unsigned type));

/* Stop the sampler and take the last sample: call where SDSM_STATS takes its snapshot. */
void sdsm_trace_stop(void);

/* After every other thread of the runtime has stopped: write every buffer and close. */
void sdsm_trace_fini(void);

#endif
