/*
 * loop.c - worksharing loops (GOMP_loop_*, GOMP_loop_ull_*), sections and
 * ordered; a combined construct's loop as its threads enter it
 * (rt_prews_enter; the GOMP_parallel_loop_* entries are in combined.c).
 *
 * A loop is handed out in logical iterations [0, n) and converted back to
 * the program's start/incr.  Static schedules need no message: thread t
 * takes chunks t, t + T, t + 2T... (or the t-th block), the same every time
 * (affinity).  Dynamic and guided loops share a counter in a slot of the
 * control block, advanced by a fetch-and-add at its home (under ibec: under
 * the slot's sdsm lock); a slot serves one loop until every thread is done
 * with it (that part always under the lock), so nowait loops may overlap.
 * Ordered loops pass a turn from chunk to chunk under a second lock, which
 * the thread holds through each ordered region: the region's writes reach
 * the next chunk's thread under every protocol (ibec binds them to it).
 * Sections go round-robin, section i to thread (i-1) mod T.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "omp_rt.h"
#include "sdsm.h"

typedef unsigned long long ull;

static rt_slot_t *slot_of(const rt_ws_t *w) { return &rt_ctl->slot[w->slot]; }

/* Take the slot for workshare w->seq: wait until the loop it served last
 * is over for every thread, then set it up (the first thread to come). */
static void slot_enter(rt_thread_t *m, rt_ws_t *w)
{
    rt_slot_t *s = slot_of(w);
    int lk = RT_LK_SLOT + w->slot;
    rt_check(rt_lock(lk), "loop: sdsm_lock");
    while (s->seq != w->seq) {
        if (s->seq > w->seq)
            rt_fatal("loop", "thread is behind its team: workshare %llu meets %llu in slot %d", (ull)w->seq,
                     (ull)s->seq, w->slot);
        if (s->left <= 0) {
            s->seq = w->seq;
            /* The counter moves by operations at its home: restart it
             * there too (a diff of this rank's copy would miss a 0 that
             * its twin already held). */
            uint64_t old;
            if (rt_home_atomic(&s->next, sizeof(uint64_t), RT_AOP_STORE, 0, 0, &old) < 0)
                s->next = 0;
            s->n = w->n;
            s->left = m->nthreads;
            break;
        }
        s->waiters++;
        rt_check(rt_cond_wait(lk, lk), "loop: sdsm_cond_wait");
        s->waiters--;
    }
    if (s->n != w->n)
        rt_fatal("loop", "the team's threads disagree on the loop's trip count (%llu and %llu)", (ull)s->n,
                 (ull)w->n);
}

/* This thread is done with the slot's loop (slot lock held). */
static void slot_done(rt_slot_t *s, int lk)
{
    if (--s->left == 0 && s->waiters)
        rt_check(sdsm_cond_broadcast(lk), "loop: sdsm_cond_broadcast");
}

static void ws_begin(rt_thread_t *m, int kind, uint64_t n, long chunk, int ordered)
{
    rt_ws_t *w = &m->ws;
    if (kind == RT_SCHED_AUTO) {
        kind = RT_SCHED_STATIC;
        chunk = 0;
    }
    if (kind != RT_SCHED_STATIC && kind != RT_SCHED_DYNAMIC && kind != RT_SCHED_GUIDED)
        rt_fatal("loop", "unknown schedule kind %d", kind);
    memset(w, 0, sizeof *w);
    w->active = 1;
    w->kind = kind;
    w->n = n;
    w->chunk =
        kind == RT_SCHED_STATIC ? (chunk > 0 ? (uint64_t)chunk : 0) : (chunk > 0 ? (uint64_t)chunk : 1);
    w->ordered = ordered;
    w->slot = -1;
    w->local = m->nthreads == 1;
    if (w->local) { /* the whole loop at once */
        w->chunk = 0;
        return;
    }
    w->seq = ++m->ws_seq;
    if (kind == RT_SCHED_STATIC && !ordered)
        return;
    w->slot = (int)(w->seq % RT_SLOTS);
    slot_enter(m, w);
    rt_check(sdsm_unlock(RT_LK_SLOT + w->slot), "loop: sdsm_unlock");
}

/* The ordered turn's lock held: reset it for a new loop, wait for `cs`. */
static void ordered_wait(rt_ws_t *w, uint64_t cs)
{
    rt_slot_t *s = slot_of(w);
    int lk = RT_LK_ORDERED + w->slot;
    rt_check(rt_lock(lk), "ordered: sdsm_lock");
    if (s->ord_seq != w->seq) {
        if (s->ord_seq > w->seq)
            rt_fatal("ordered", "thread is behind its team (workshare %llu meets %llu)", (ull)w->seq,
                     (ull)s->ord_seq);
        s->ord_seq = w->seq;
        s->ord_next = 0;
    }
    while (s->ord_next != cs) {
        s->ord_waiters++;
        rt_check(rt_cond_wait(lk, lk), "ordered: sdsm_cond_wait");
        s->ord_waiters--;
    }
}

/* The current chunk is over: give the ordered turn to the next one. */
static void ordered_pass(rt_ws_t *w)
{
    if (w->cs == w->ce)
        return;
    rt_slot_t *s = slot_of(w);
    int lk = RT_LK_ORDERED + w->slot;
    ordered_wait(w, w->cs);
    s->ord_next = w->ce;
    if (s->ord_waiters)
        rt_check(sdsm_cond_broadcast(lk), "ordered: sdsm_cond_broadcast");
    rt_check(sdsm_unlock(lk), "ordered: sdsm_unlock");
}

static bool static_grab(rt_thread_t *m, rt_ws_t *w)
{
    uint64_t nt = (uint64_t)m->nthreads, t = (uint64_t)m->tid;
    if (w->chunk == 0) {
        if (w->static_next++)
            return false;
        uint64_t q = w->n / nt, r = w->n % nt;
        w->cs = t * q + (t < r ? t : r);
        w->ce = w->cs + q + (t < r);
        return w->cs < w->ce;
    }
    uint64_t nchunks = w->n / w->chunk + (w->n % w->chunk != 0);
    uint64_t k = t + w->static_next++ * nt;
    if (k >= nchunks)
        return false;
    w->cs = k * w->chunk;
    w->ce = w->n - w->cs < w->chunk ? w->n : w->cs + w->chunk;
    return true;
}

/* The loop is exhausted for this thread: leave the slot. */
static void slot_leave(rt_ws_t *w)
{
    int lk = RT_LK_SLOT + w->slot;
    rt_check(rt_lock(lk), "loop: sdsm_lock");
    slot_done(slot_of(w), lk);
    rt_check(sdsm_unlock(lk), "loop: sdsm_unlock");
}

/* A chunk by a fetch-and-add at the counter's home: one round trip.
 * Guided sizes come from the remaining count this thread saw last (a
 * little larger than exact, never smaller than the chunk).  Returns SDSM_ENOTSUP
 * when the home cannot take it (ibec): the lock path then serves every
 * thread, as the protocol is the same for all. */
static int home_grab(rt_thread_t *m, rt_ws_t *w)
{
    uint64_t q = w->chunk, old;
    if (w->kind == RT_SCHED_GUIDED) {
        uint64_t left = w->n > w->ce ? w->n - w->ce : 0;
        uint64_t g = (left + (uint64_t)m->nthreads - 1) / (uint64_t)m->nthreads;
        if (g > q)
            q = g;
    }
    if (rt_home_atomic(&slot_of(w)->next, sizeof(uint64_t), RT_AOP_ADD, q, 0, &old) < 0)
        return SDSM_ENOTSUP;
    if (old >= w->n) {
        slot_leave(w);
        return 0;
    }
    w->cs = old;
    w->ce = w->n - old < q ? w->n : old + q;
    return 1;
}

static bool shared_grab(rt_thread_t *m, rt_ws_t *w)
{
    rt_slot_t *s = slot_of(w);
    int lk = RT_LK_SLOT + w->slot;
    bool got = false;
    int rc = home_grab(m, w);
    if (rc >= 0)
        return rc;
    rt_check(rt_lock(lk), "loop: sdsm_lock");
    if (s->seq != w->seq)
        rt_fatal("loop", "slot %d serves workshare %llu, not this thread's %llu", w->slot, (ull)s->seq,
                 (ull)w->seq);
    if (s->next < s->n) {
        uint64_t left = s->n - s->next, q = w->chunk;
        if (w->kind == RT_SCHED_GUIDED) {
            uint64_t g = (left + (uint64_t)m->nthreads - 1) / (uint64_t)m->nthreads;
            if (g > q)
                q = g;
        }
        w->cs = s->next;
        w->ce = left < q ? s->n : s->next + q;
        s->next = w->ce;
        got = true;
    } else {
        slot_done(s, lk);
    }
    rt_check(sdsm_unlock(lk), "loop: sdsm_unlock");
    return got;
}

/* The next chunk of the current loop into w->cs, w->ce; false when done. */
static bool ws_grab(rt_thread_t *m)
{
    rt_ws_t *w = &m->ws;
    if (!w->active)
        return false;
    if (w->have_chunk && w->ordered && !w->local)
        ordered_pass(w);
    bool got;
    if (w->local) { /* a team of one: all at once, or chunk by chunk (sections) */
        uint64_t pos = w->static_next;
        got = pos < w->n;
        w->cs = pos;
        w->ce = w->chunk && w->n - pos > w->chunk ? pos + w->chunk : w->n;
        w->static_next = w->ce;
    } else if (w->kind == RT_SCHED_STATIC) {
        got = static_grab(m, w);
        if (!got && w->slot >= 0)
            slot_leave(w);
    } else {
        got = shared_grab(m, w);
    }
    w->have_chunk = got;
    if (!got)
        w->active = 0;
    return got;
}

/* --- signed loops ------------------------------------------------------ */

static uint64_t count_long(long start, long end, long incr)
{
    if (incr > 0)
        return start < end ? ((unsigned long)end - (unsigned long)start + (unsigned long)incr - 1) /
                                 (unsigned long)incr
                           : 0;
    if (incr < 0)
        return start > end ? ((unsigned long)start - (unsigned long)end - (unsigned long)incr - 1) /
                                 (0ul - (unsigned long)incr)
                           : 0;
    rt_fatal("loop", "loop increment 0");
}

static bool next_long(long *istart, long *iend)
{
    rt_thread_t *m = rt_self();
    rt_ws_t *w = &m->ws;
    if (w->is_ull)
        rt_fatal("loop", "GOMP_loop_*_next on an unsigned long long loop");
    if (!ws_grab(m))
        return false;
    *istart = (long)((unsigned long)w->start + w->cs * (unsigned long)w->incr);
    *iend = w->ce == w->n ? w->end : (long)((unsigned long)w->start + w->ce * (unsigned long)w->incr);
    return true;
}

static void begin_long(int kind, long start, long end, long incr, long chunk, int ordered)
{
    rt_thread_t *m = rt_self();
    ws_begin(m, kind, count_long(start, end, incr), chunk, ordered);
    m->ws.start = start;
    m->ws.end = end;
    m->ws.incr = incr;
}

/* schedule(runtime): the run-sched-var of the current task */
static int runtime_kind(long *chunk)
{
    rt_thread_t *m = rt_self();
    *chunk = m->sched_chunk;
    return (int)((unsigned)m->sched_kind & ~RT_SCHED_MONOTONIC);
}

static bool start_long(int kind, long start, long end, long incr, long chunk, int ordered, long *istart,
                       long *iend)
{
    if (kind == RT_SCHED_RUNTIME)
        kind = runtime_kind(&chunk);
    begin_long(kind, start, end, incr, chunk, ordered);
    return next_long(istart, iend);
}

#define LOOP_LONG(name, kind, ordered)                                                                       \
    bool GOMP_loop_##name##_start(long start, long end, long incr, long chunk, long *istart, long *iend)     \
    {                                                                                                        \
        return start_long(kind, start, end, incr, chunk, ordered, istart, iend);                             \
    }                                                                                                        \
    bool GOMP_loop_##name##_next(long *istart, long *iend) { return next_long(istart, iend); }
#define LOOP_LONG_RT(name, ordered)                                                                          \
    bool GOMP_loop_##name##_start(long start, long end, long incr, long *istart, long *iend)                 \
    {                                                                                                        \
        return start_long(RT_SCHED_RUNTIME, start, end, incr, 0, ordered, istart, iend);                     \
    }                                                                                                        \
    bool GOMP_loop_##name##_next(long *istart, long *iend) { return next_long(istart, iend); }

LOOP_LONG(static, RT_SCHED_STATIC, 0)
LOOP_LONG(dynamic, RT_SCHED_DYNAMIC, 0)
LOOP_LONG(guided, RT_SCHED_GUIDED, 0)
LOOP_LONG(nonmonotonic_dynamic, RT_SCHED_DYNAMIC, 0)
LOOP_LONG(nonmonotonic_guided, RT_SCHED_GUIDED, 0)
LOOP_LONG(ordered_static, RT_SCHED_STATIC, 1)
LOOP_LONG(ordered_dynamic, RT_SCHED_DYNAMIC, 1)
LOOP_LONG(ordered_guided, RT_SCHED_GUIDED, 1)
LOOP_LONG_RT(runtime, 0)
LOOP_LONG_RT(nonmonotonic_runtime, 0)
LOOP_LONG_RT(maybe_nonmonotonic_runtime, 0)
LOOP_LONG_RT(ordered_runtime, 1)

static void no_task_reductions(const char *what, uintptr_t *reductions, void *mem)
{
    if (reductions)
        rt_fatal(what, "task reductions (reduction(task, ...) or reduction(inscan, ...)) are not "
                       "supported on sdsm");
    if (mem)
        rt_fatal(what, "lastprivate(conditional: ...) and scan are not supported on sdsm");
}

bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
                     uintptr_t *reductions, void **mem)
{
    no_task_reductions("for", reductions, mem);
    int kind = (int)((unsigned long)sched & ~(unsigned long)RT_SCHED_MONOTONIC);
    if (!istart) {
        if (kind == RT_SCHED_RUNTIME)
            kind = runtime_kind(&chunk);
        begin_long(kind, start, end, incr, chunk, 0);
        return true;
    }
    return start_long(kind, start, end, incr, chunk, 0, istart, iend);
}

bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long *istart,
                             long *iend, uintptr_t *reductions, void **mem)
{
    no_task_reductions("for ordered", reductions, mem);
    int kind = (int)((unsigned long)sched & ~(unsigned long)RT_SCHED_MONOTONIC);
    return start_long(kind, start, end, incr, chunk, 1, istart, iend);
}

/* --- unsigned long long loops ------------------------------------------ */

static uint64_t count_ull(bool up, ull start, ull end, ull incr)
{
    if (incr == 0)
        rt_fatal("loop", "loop increment 0");
    if (up)
        return start < end ? (end - start + incr - 1) / incr : 0;
    return start > end ? (start - end + (0ull - incr) - 1) / (0ull - incr) : 0;
}

static bool next_ull(ull *istart, ull *iend)
{
    rt_thread_t *m = rt_self();
    rt_ws_t *w = &m->ws;
    if (!w->is_ull && w->active)
        rt_fatal("loop", "GOMP_loop_ull_*_next on a long loop");
    if (!ws_grab(m))
        return false;
    *istart = w->ustart + w->cs * w->uincr;
    *iend = w->ce == w->n ? w->uend : w->ustart + w->ce * w->uincr;
    return true;
}

static bool start_ull(int kind, bool up, ull start, ull end, ull incr, ull chunk, int ordered, ull *istart,
                      ull *iend)
{
    long ch = chunk > (ull)(1ul << 62) ? (1l << 62) : (long)chunk;
    if (kind == RT_SCHED_RUNTIME)
        kind = runtime_kind(&ch);
    rt_thread_t *m = rt_self();
    ws_begin(m, kind, count_ull(up, start, end, incr), ch, ordered);
    m->ws.is_ull = 1;
    m->ws.ustart = start;
    m->ws.uend = end;
    m->ws.uincr = incr;
    if (!istart)
        return true;
    return next_ull(istart, iend);
}

#define LOOP_ULL(name, kind, ordered)                                                                        \
    bool GOMP_loop_ull_##name##_start(bool up, ull start, ull end, ull incr, ull chunk, ull *istart,         \
                                      ull *iend)                                                             \
    {                                                                                                        \
        return start_ull(kind, up, start, end, incr, chunk, ordered, istart, iend);                          \
    }                                                                                                        \
    bool GOMP_loop_ull_##name##_next(ull *istart, ull *iend) { return next_ull(istart, iend); }
#define LOOP_ULL_RT(name, ordered)                                                                           \
    bool GOMP_loop_ull_##name##_start(bool up, ull start, ull end, ull incr, ull *istart, ull *iend)         \
    {                                                                                                        \
        return start_ull(RT_SCHED_RUNTIME, up, start, end, incr, 0, ordered, istart, iend);                  \
    }                                                                                                        \
    bool GOMP_loop_ull_##name##_next(ull *istart, ull *iend) { return next_ull(istart, iend); }

LOOP_ULL(static, RT_SCHED_STATIC, 0)
LOOP_ULL(dynamic, RT_SCHED_DYNAMIC, 0)
LOOP_ULL(guided, RT_SCHED_GUIDED, 0)
LOOP_ULL(nonmonotonic_dynamic, RT_SCHED_DYNAMIC, 0)
LOOP_ULL(nonmonotonic_guided, RT_SCHED_GUIDED, 0)
LOOP_ULL(ordered_static, RT_SCHED_STATIC, 1)
LOOP_ULL(ordered_dynamic, RT_SCHED_DYNAMIC, 1)
LOOP_ULL(ordered_guided, RT_SCHED_GUIDED, 1)
LOOP_ULL_RT(runtime, 0)
LOOP_ULL_RT(nonmonotonic_runtime, 0)
LOOP_ULL_RT(maybe_nonmonotonic_runtime, 0)
LOOP_ULL_RT(ordered_runtime, 1)

bool GOMP_loop_ull_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull *istart, ull *iend,
                         uintptr_t *reductions, void **mem)
{
    no_task_reductions("for", reductions, mem);
    int kind = (int)((unsigned long)sched & ~(unsigned long)RT_SCHED_MONOTONIC);
    return start_ull(kind, up, start, end, incr, chunk, 0, istart, iend);
}

bool GOMP_loop_ull_ordered_start(bool up, ull start, ull end, ull incr, long sched, ull chunk, ull *istart,
                                 ull *iend, uintptr_t *reductions, void **mem)
{
    no_task_reductions("for ordered", reductions, mem);
    int kind = (int)((unsigned long)sched & ~(unsigned long)RT_SCHED_MONOTONIC);
    return start_ull(kind, up, start, end, incr, chunk, 1, istart, iend);
}

/* --- loop end, ordered ------------------------------------------------- */

/* A loop left before its last chunk was asked for (GOMP_loop_start
 * without istart): pass the ordered turn, leave the slot. */
static void loop_finish(void)
{
    rt_thread_t *m = rt_self();
    rt_ws_t *w = &m->ws;
    if (!w->active)
        return;
    w->active = 0;
    if (w->local || w->slot < 0)
        return;
    if (w->have_chunk && w->ordered)
        ordered_pass(w);
    slot_leave(w);
}

void GOMP_loop_end(void)
{
    loop_finish();
    GOMP_barrier();
}

void GOMP_loop_end_nowait(void) { loop_finish(); }

bool GOMP_loop_end_cancel(void)
{
    GOMP_loop_end();
    return false;
}

void GOMP_ordered_start(void)
{
    rt_thread_t *m = rt_self();
    rt_ws_t *w = &m->ws;
    if (w->local || m->nthreads == 1)
        return;
    if (!w->ordered || !w->have_chunk)
        rt_fatal("ordered", "ordered region outside an ordered loop's iteration");
    ordered_wait(w, w->cs);
}

void GOMP_ordered_end(void)
{
    rt_thread_t *m = rt_self();
    rt_ws_t *w = &m->ws;
    if (w->local || m->nthreads == 1)
        return;
    rt_check(sdsm_unlock(RT_LK_ORDERED + w->slot), "ordered: sdsm_unlock");
}

/* --- a combined construct's loop (combined.c) -------------------------- */

rt_prews_t rt_prews_loop(int sched, long start, long end, long incr, long chunk)
{
    rt_prews_t p = {.kind = sched, .start = start, .end = end, .incr = incr, .chunk = chunk};
    if (p.kind == RT_SCHED_RUNTIME)
        p.kind = runtime_kind(&p.chunk);
    if (p.kind == RT_SCHED_AUTO) {
        p.kind = RT_SCHED_STATIC;
        p.chunk = 0;
    }
    return p;
}

void rt_prews_enter(const rt_prews_t *p)
{
    rt_thread_t *m = rt_self();
    if (p->kind < 0) { /* sections: round-robin */
        ws_begin(m, RT_SCHED_STATIC, (uint64_t)p->end, 1, 0);
        m->ws.chunk = 1; /* one section at a time, also in a team of one */
        m->ws.start = 1;
        m->ws.end = p->end + 1;
        m->ws.incr = 1;
        return;
    }
    begin_long(p->kind, p->start, p->end, p->incr, p->chunk, 0);
}

/* --- sections ---------------------------------------------------------- */

unsigned GOMP_sections_next(void)
{
    long s, e;
    return next_long(&s, &e) ? (unsigned)s : 0;
}

unsigned GOMP_sections_start(unsigned count)
{
    rt_prews_t p = {.kind = -1, .end = count};
    rt_prews_enter(&p);
    return GOMP_sections_next();
}

unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
    no_task_reductions("sections", reductions, mem);
    return GOMP_sections_start(count);
}

void GOMP_sections_end(void) { GOMP_loop_end(); }

void GOMP_sections_end_nowait(void) { GOMP_loop_end_nowait(); }

bool GOMP_sections_end_cancel(void)
{
    GOMP_loop_end();
    return false;
}
