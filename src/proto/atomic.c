/*
 * atomic.c - atomic operations done at a page's home (for libsdsm-omp: an
 * OpenMP program's atomics and reductions, which gcc emits as __atomic_*
 * calls under sdsmcc).
 *
 * The home's copy is the page's master copy: an operation applied there,
 * under the page lock, is atomic against every other one and costs one
 * round trip, where a lock, a fetch and a diff would cost three or more.
 * The result is then made visible like a write of the caller's:
 *  - the caller's own copy, if it has one, gets the new value (in its twin
 *    too, so its next diff does not carry the old bytes back), so its
 *    later reads see its own operation;
 *  - the page goes on the caller's dirty list as written and flushed, so
 *    the caller's next release announces it (barrier notices; at a lock
 *    release, the home invalidates the other copies), even when it is a
 *    home page the caller keeps writable: the runtime view's writes are
 *    invisible to the written-page tracking (release.c).  The caller, not the
 *    home, announces: its release is the one ordered after the operation.
 * hlrc and update only: ibec binds writes to locks, and its callers keep
 * the lock-based path.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/config.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "proto/proto.h"

typedef struct wire_atomic {
    uint32_t page;
    uint16_t off;
    uint8_t size, op;
    uint64_t val, expected;
} wire_atomic_t;
_Static_assert(sizeof(wire_atomic_t) == 24, "ATOMIC payload");

typedef struct wire_atomic_rep {
    uint64_t old;
    int32_t status;
} __attribute__((packed)) wire_atomic_rep_t;
_Static_assert(sizeof(wire_atomic_rep_t) == 12, "ATOMIC_REP payload");

#define OP_SIZED(T, p, op, v, e, old, ok)                                                                    \
    do {                                                                                                     \
        T *q_ = (T *)(p), v_ = (T)(v), e_ = (T)(e);                                                          \
        switch (op) {                                                                                        \
        case SDSM_AOP_LOAD: old = __atomic_load_n(q_, __ATOMIC_SEQ_CST); break;                              \
        case SDSM_AOP_STORE: old = __atomic_exchange_n(q_, v_, __ATOMIC_SEQ_CST); break;                     \
        case SDSM_AOP_XCHG: old = __atomic_exchange_n(q_, v_, __ATOMIC_SEQ_CST); break;                      \
        case SDSM_AOP_CAS:                                                                                   \
            ok = __atomic_compare_exchange_n(q_, &e_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);            \
            old = e_;                                                                                        \
            break;                                                                                           \
        case SDSM_AOP_ADD: old = __atomic_fetch_add(q_, v_, __ATOMIC_SEQ_CST); break;                        \
        case SDSM_AOP_SUB: old = __atomic_fetch_sub(q_, v_, __ATOMIC_SEQ_CST); break;                        \
        case SDSM_AOP_AND: old = __atomic_fetch_and(q_, v_, __ATOMIC_SEQ_CST); break;                        \
        case SDSM_AOP_OR: old = __atomic_fetch_or(q_, v_, __ATOMIC_SEQ_CST); break;                          \
        case SDSM_AOP_XOR: old = __atomic_fetch_xor(q_, v_, __ATOMIC_SEQ_CST); break;                        \
        case SDSM_AOP_NAND: old = __atomic_fetch_nand(q_, v_, __ATOMIC_SEQ_CST); break;                      \
        }                                                                                                    \
    } while (0)

/* Apply op to the bytes at p; returns 1, or 0 for a failed compare. */
static int apply(uint8_t *p, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old)
{
    int ok = 1;
    uint64_t o = 0;
    switch (size) {
    case 1: OP_SIZED(uint8_t, p, op, val, expected, o, ok); break;
    case 2: OP_SIZED(uint16_t, p, op, val, expected, o, ok); break;
    case 4: OP_SIZED(uint32_t, p, op, val, expected, o, ok); break;
    default: OP_SIZED(uint64_t, p, op, val, expected, o, ok); break;
    }
    *old = o;
    return ok;
}

/* The value the operation left, from the old one. */
static uint64_t result(unsigned op, uint64_t old, uint64_t val, int ok)
{
    switch (op) {
    case SDSM_AOP_LOAD: return old;
    case SDSM_AOP_STORE:
    case SDSM_AOP_XCHG: return val;
    case SDSM_AOP_CAS: return ok ? val : old;
    case SDSM_AOP_ADD: return old + val;
    case SDSM_AOP_SUB: return old - val;
    case SDSM_AOP_AND: return old & val;
    case SDSM_AOP_OR: return old | val;
    case SDSM_AOP_XOR: return old ^ val;
    default: return ~(old & val);
    }
}

static int modifies(unsigned op, int ok) { return op != SDSM_AOP_LOAD && (op != SDSM_AOP_CAS || ok); }

/* Home side.  A malformed request is rejected (SDSM_EPROTO); one for a page
 * not homed here is refused with a negative status (SDSM_ESTATE). */
static int on_atomic(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    wire_atomic_t q;
    memcpy(&q, p, sizeof q);
    wire_atomic_rep_t rep = {0, SDSM_ESTATE};
    if (q.page >= sdsm_region.npages || (q.size != 1 && q.size != 2 && q.size != 4 && q.size != 8) ||
        q.off % q.size || (size_t)q.off + q.size > hs.ps || q.op >= SDSM_AOP_COUNT || src == hs.me)
        return SDSM_EPROTO;
    uint64_t old = 0;
    sdsm_page_lock(q.page); /* the home is read (and cached) under the page lock */
    if (sdsm_alloc_find(q.page) && sdsm_page_home(q.page) == hs.me) {
        rep.status = apply(sdsm_page_rt(q.page) + q.off, q.size, q.op, q.val, q.expected, &old);
        /* What others are served while the home writes the page (serve.c) */
        if (sdsm_page(q.page)->flags & SDSM_PGF_TWIN)
            memcpy(sdsm_page_twin(q.page) + q.off, sdsm_page_rt(q.page) + q.off, q.size);
    } else
        rep.status = SDSM_ESTATE; /* freed, or its home moved: the caller takes its other path */
    sdsm_page_unlock(q.page);
    rep.old = old;
    sdsm_net_send(src, SDSM_MSG_ATOMIC_REP, 0, h->seq, &rep, sizeof rep, NULL, 0);
    return 0;
}

static int on_atomic_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)src;
    /* (Refused: a reply nobody waits for.) */
    return sdsm_rpc_reply(h->seq, 0, p, sizeof(wire_atomic_rep_t)) ? SDSM_EPROTO : 0;
}

/* The caller's side of a done operation: its copy and its next release. */
static void note_local(uint32_t pg, unsigned off, unsigned size, uint64_t now, int home)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (home != hs.me && (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE)) {
        memcpy(sdsm_page_rt(pg) + off, &now, size); /* little-endian: the low bytes */
        if (m->flags & SDSM_PGF_TWIN)
            memcpy(sdsm_page_twin(pg) + off, &now, size);
    }
    /* FLUSHED: announced by the next release whatever the page's state.
     * At the home the operation wrote through the runtime view, which the
     * kernel's written-page tracking does not see: a home page kept
     * writable (hot, or of an announced block) would otherwise go
     * unannounced, and other ranks would keep their old copies (a
     * reduction losing the home rank's part). */
    if (m->state != SDSM_PG_READ_WRITE || home == hs.me)
        m->flags |= SDSM_PGF_FLUSHED;
    sdsm_page_mark_dirty(pg);
}

/*
 * Operations of this rank's threads on one word take turns, from the
 * request to the note of the result (a gate per word, hashed): the home
 * applies them in some order, and each caller writes the value its own
 * operation left into the rank's copy.  Two replies noted in the other
 * order left the copy with the older value - missing one thread's part of
 * a reduction - which the rank then kept as its own write at the barrier.
 * Only same-word operations of one rank wait: the home serializes them
 * anyway, others still overlap their round trips.
 */
#define GATES 64
static _Atomic uint32_t gates[GATES];

static _Atomic uint32_t *gate_enter(const void *addr)
{
    uintptr_t w = (uintptr_t)addr >> 3;
    _Atomic uint32_t *g = &gates[(w ^ w >> 6 ^ w >> 12) % GATES];
    for (;;) {
        uint32_t v = 0;
        if (atomic_compare_exchange_weak(g, &v, 1))
            return g;
        if (v)
            sdsm_wait_change(g, v);
    }
}

static void gate_leave(_Atomic uint32_t *g)
{
    atomic_store(g, 0);
    sdsm_wake_all(g);
}

/* The page's home, read under its lock (a first-touch claim sets it). */
static int locked_home(uint32_t pg)
{
    sdsm_page_lock(pg);
    int home = sdsm_page_home(pg);
    sdsm_page_unlock(pg);
    return home;
}

int sdsm_proto_atomic(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old)
{
    uint32_t pg;
    if (sdsm_cfg.protocol == SDSM_PROTO_IBEC && !sdsm_region.host_shared)
        return SDSM_ENOTSUP;
    if (op >= SDSM_AOP_COUNT || (size != 1 && size != 2 && size != 4 && size != 8) ||
        (uintptr_t)addr % size || !sdsm_region_page_of(addr, &pg) || !sdsm_alloc_find(pg))
        return SDSM_EINVAL;
    unsigned off = (unsigned)((uintptr_t)addr & (sdsm_region.page_size - 1));
    if (sdsm_region.host_shared) /* one copy: the processor's atomics are the home's */
        return apply(sdsm_page_rt(pg) + off, size, op, val, expected, old);
    int home = locked_home(pg);
    if (home < 0) { /* a first-touch page nobody claimed yet: a read decides its home */
        (void)*(volatile uint8_t *)addr;
        if ((home = locked_home(pg)) < 0)
            return SDSM_ENOHOME;
    }
    int ok;
    if (home == hs.me) {
        sdsm_page_lock(pg);
        ok = apply(sdsm_page_rt(pg) + off, size, op, val, expected, old);
        if (modifies(op, ok))
            note_local(pg, off, size, result(op, *old, val, ok), home);
        sdsm_page_unlock(pg);
        return ok;
    }
    wire_atomic_t q = {pg, (uint16_t)off, (uint8_t)size, (uint8_t)op, val, expected};
    wire_atomic_rep_t rep = {0, SDSM_EPEER}; /* (read only when a reply came) */
    sdsm_rpc_t r = {.buf = &rep, .cap = sizeof rep};
    _Atomic uint32_t *gate = gate_enter(addr);
    uint32_t id = sdsm_rpc_open(&r, 1);
    sdsm_net_send(home, SDSM_MSG_ATOMIC, 0, id, &q, sizeof q, NULL, 0);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    if (r.status || rep.status < 0) {
        gate_leave(gate);
        return -EAGAIN; /* not an error: ask again (proto.h) */
    }
    sdsm_stat_add(SDSM_ST_ATOMICS_HOME, 1);
    *old = rep.old;
    ok = rep.status;
    sdsm_page_lock(pg);
    if (modifies(op, ok))
        note_local(pg, off, size, result(op, *old, val, ok), home);
    sdsm_page_unlock(pg);
    gate_leave(gate);
    return ok;
}

void sdsm_home_atomic_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_ATOMIC, on_atomic);
    sdsm_msg_set_handler(SDSM_MSG_ATOMIC_REP, on_atomic_rep);
}
