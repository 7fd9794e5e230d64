/*
 * lock.c - distributed locks.
 *
 * Manager side (service thread of rank id % nprocs): per lock, the holding
 * rank and a FIFO of waiting ranks.  Client side: the threads of this rank
 * waiting for a lock, granted in the order they asked, and the locks held
 * by each thread (so misuse is reported, not silently accepted).
 *
 * Unlock flushes first (the protocol's release), then lets the lock go (to
 * the manager, or straight to the next rank, below), so the next holder
 * gets it only after the writes are visible.
 *
 * Under a protocol whose grants carry nothing (hlrc, update: an unlock's
 * writes are at their homes and every stale copy is gone before it returns)
 * a lock stays with the rank that last held it until another rank asks for
 * it (TreadMarks' lock caching): taking it again costs no message.  The
 * manager keeps the order of the requests: a request goes to the rank queued
 * last (LOCK_FWD, "after you, pass it to r"), which passes the lock straight
 * to r (LOCK_GRANT from the passing rank) when it is released, or at once if
 * it is free; the passer tells the manager (LOCK_PASSED) unless r is the
 * manager, so the manager always knows the holder and the waiters (hang
 * reports).  A transfer costs 3 one-way messages (2 when the manager is one
 * of the two ranks), and a waiter queued behind a holder gets the lock one
 * message after the holder's unlock.
 *
 * Threads of one rank share its memory, so a rank asks once for all its
 * threads: while it owns a lock, a releasing thread hands it straight to the
 * next local waiter, with no flush and no message (the process's dirty pages
 * are flushed by the next release that does not hand off).  Once another
 * rank waits, after LOCAL_HANDOFFS hand-offs in a row the lock is passed on
 * and the rank queues again, so other ranks are not starved.
 *
 * A protocol that binds data to locks (ibec) returns the lock to the manager
 * at each release with a payload and a time stamp; the manager keeps the
 * chain of them for the current barrier epoch and gives each acquirer the
 * entries newer than the stamp it sent with its request.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/idmap.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/trace.h"
#include "core/wait.h"
#include "core/blocked.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/proto.h"
#include "sync.h"

typedef struct qent {
    int rank;
    uint32_t stamp;
    int passed; /* caching: this rank passed the lock to the next */
} qent_t;

typedef struct mlock { /* manager's record of one lock */
    uint32_t id;
    int holder;        /* rank, -1 if free */
    int holder_passed; /* caching: it passed the lock to queue[qhead] */
    qent_t *queue;
    uint32_t qhead, qlen, qcap;
    uint8_t *chain; /* {u32 stamp, u32 len, bytes}[] of chain_epoch */
    size_t chain_len;
    uint32_t chain_epoch;
} mlock_t;

typedef struct waiter { /* a local thread waiting for a grant */
    struct waiter *next;
    uint32_t id;
    _Atomic uint32_t granted;
    uint8_t *chain; /* what the grant carried (malloc'd) */
    size_t chain_len;
} waiter_t;

typedef struct rlock { /* this rank's claim on a lock (local hand-off, caching) */
    uint32_t id;
    int claimed;  /* asked the manager, or owns the grant */
    int handoffs; /* in a row, since the grant */
    int owned;    /* caching: the grant arrived and was not passed on */
    int busy;     /* caching: a thread of this rank holds it */
    int pass_to;  /* caching: the rank to pass it to after us, or -1 */
    int left;     /* caching: a bounded acquire gave up its request (below) */
} rlock_t;

#define LOCAL_HANDOFFS 8

typedef struct held {
    struct held *next;
    uint32_t id;
    pthread_t thread;
    uint64_t since; /* for the trace's hold span (0: not traced) */
} held_t;

static sdsm_idmap_t table; /* the locks this rank manages (service side) */
static pthread_mutex_t local_mtx = PTHREAD_MUTEX_INITIALIZER;
static waiter_t *waiters;
static held_t *helds;
static sdsm_idmap_t rlocks; /* this rank's side of each lock, under local_mtx */

/*
 * A job on one host: the lock is a word in shared memory (hostlock.c),
 * which also names the holding rank for hang reports and finalize.  Which
 * of them this thread holds is its own business (sdsm_lock_held, an
 * unlock's check): a list of its own, so a lock and unlock take no mutex
 * of the rank's, allocate nothing and read no clock unless they wait (an
 * uncontended pair cost 540 ns in those, 4 times a cache miss).
 */
#define MINE_INLINE 16
static __thread struct {
    uint32_t n, cap; /* cap 0: the inline arrays */
    uint32_t *ids;   /* past MINE_INLINE at once: on the heap, freed when none is held */
    uint64_t *since; /* the trace's hold spans (when tracing) */
    uint32_t inl_ids[MINE_INLINE];
    uint64_t inl_since[MINE_INLINE];
} mine;

static uint32_t *mine_ids(void) { return mine.cap ? mine.ids : mine.inl_ids; }
static uint64_t *mine_since(void) { return mine.cap ? mine.since : mine.inl_since; }

static int mine_at(uint32_t id)
{
    const uint32_t *ids = mine_ids();
    for (uint32_t i = mine.n; i-- > 0;)
        if (ids[i] == id)
            return (int)i;
    return -1;
}

/* Room for one more; 0 or SDSM_ENOMEM. */
static int mine_room(void)
{
    if (mine.n < (mine.cap ? mine.cap : MINE_INLINE))
        return 0;
    uint32_t cap = mine.cap ? 2 * mine.cap : 2 * MINE_INLINE;
    uint32_t *ids = malloc(cap * sizeof *ids);
    uint64_t *since = malloc(cap * sizeof *since);
    if (!ids || !since) {
        free(ids);
        free(since);
        return SDSM_ENOMEM;
    }
    memcpy(ids, mine_ids(), mine.n * sizeof *ids);
    memcpy(since, mine_since(), mine.n * sizeof *since);
    if (mine.cap) {
        free(mine.ids);
        free(mine.since);
    }
    mine.ids = ids;
    mine.since = since;
    mine.cap = cap;
    return 0;
}

static rlock_t *rlock_get(uint32_t id)
{
    int fresh;
    rlock_t *r = sdsm_idmap_get_or_new(&rlocks, id, sizeof *r, &fresh);
    if (!r)
        sdsm_fatal("out of memory for lock %u", id);
    if (fresh) {
        r->id = id;
        r->pass_to = -1;
    }
    return r;
}

/* Locks stay at their last holder (see the top) unless the protocol binds
 * data to them. */
static int caching(void) { return !sdsm_proto->lock_data; }

/* Under local_mtx: the oldest local thread still waiting for lock id. */
static waiter_t *oldest_waiter(uint32_t id)
{
    waiter_t *first = NULL;
    for (waiter_t *w = waiters; w; w = w->next) /* newest first */
        if (w->id == id && !atomic_load(&w->granted))
            first = w;
    return first;
}

/* Spread over the ranks, skipping the barrier manager when there is a
 * choice (SMS §5.3: the two jobs do not pile up on one rank). */
int sdsm_sync_manager(uint32_t id)
{
    uint32_t n = (uint32_t)sdsm_net_nprocs();
    if (n == 1)
        return 0;
    uint32_t bm = (uint32_t)(sdsm_cfg.barrier_manager % n), m = id % (n - 1);
    return (int)(m >= bm ? m + 1 : m);
}

#define lock_manager sdsm_sync_manager

/* To a rank, or to our own handlers: then at once in this thread if no
 * other is handling messages (no lock of this file may be held). */
static void send_to(int dst, unsigned type, const void *a, size_t alen, const void *b, size_t blen)
{
    if (dst == sdsm_net_rank())
        sdsm_net_post_local(type, 0, 0, a, alen, b, blen);
    else
        sdsm_net_send(dst, type, 0, 0, a, alen, b, blen);
}

static mlock_t *mlock_get(uint32_t id)
{
    int fresh;
    mlock_t *l = sdsm_idmap_get_or_new(&table, id, sizeof *l, &fresh);
    if (!l)
        sdsm_fatal("out of memory creating lock %u", id);
    if (fresh) {
        l->id = id;
        l->holder = -1;
    }
    return l;
}

/* The chain as seen from the current epoch (a barrier empties it). */
static void chain_fresh(mlock_t *l)
{
    if (l->chain_epoch != sdsm_net_epoch()) {
        free(l->chain);
        l->chain = NULL;
        l->chain_len = 0;
        l->chain_epoch = sdsm_net_epoch();
    }
}

static void grant(mlock_t *l, int r, uint32_t stamp)
{
    l->holder = r;
    chain_fresh(l);
    size_t from = 0; /* entries are in stamp order: skip what r has seen */
    while (from < l->chain_len) {
        uint32_t st, len;
        memcpy(&st, l->chain + from, 4);
        memcpy(&len, l->chain + from + 4, 4);
        if (st > stamp)
            break;
        from += 8 + len;
    }
    send_to(r, SDSM_MSG_LOCK_GRANT, &l->id, 4, l->chain + from, l->chain_len - from);
}

static void enqueue(mlock_t *l, int src, uint32_t stamp)
{
    uint32_t id = l->id;
    if (l->qlen == l->qcap) { /* grow the ring, unrolling it */
        uint32_t cap = l->qcap ? 2 * l->qcap : 8;
        qent_t *q = malloc(cap * sizeof *q);
        if (!q)
            sdsm_fatal("out of memory queueing for lock %u", id);
        for (uint32_t i = 0; i < l->qlen; i++)
            q[i] = l->queue[(l->qhead + i) % l->qcap];
        free(l->queue);
        l->queue = q;
        l->qhead = 0;
        l->qcap = cap;
    }
    l->queue[(l->qhead + l->qlen++) % l->qcap] = (qent_t){src, stamp, 0};
}

static int on_req(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id, stamp;
    memcpy(&id, p, 4);
    memcpy(&stamp, p + 4, 4);
    if (id > INT32_MAX || lock_manager(id) != sdsm_net_rank())
        return SDSM_EPROTO;
    mlock_t *l = mlock_get(id);
    if (l->holder < 0) {
        grant(l, src, stamp);
        return 0;
    }
    if (caching()) { /* the rank queued last passes it on to src */
        int tail = l->qlen ? l->queue[(l->qhead + l->qlen - 1) % l->qcap].rank : l->holder;
        if (tail == src)
            return SDSM_EPROTO; /* it has not passed the lock on: it cannot ask again */
        uint32_t fwd[2] = {id, (uint32_t)src};
        send_to(tail, SDSM_MSG_LOCK_FWD, fwd, 8, NULL, 0);
    }
    enqueue(l, src, stamp);
    return 0;
}

/*
 * Manager, caching: rank `from` passed the lock to rank `to`.  The notes of
 * different ranks arrive in any order, but each rank's in the order it
 * passed, and the lock moves along the queue: the note is for the first
 * link of the chain holder, queue[0], queue[1]... that starts at `from` and
 * is not marked yet.  The holder is the first rank that has not passed it.
 */
static int passed(uint32_t id, int from, int to)
{
    mlock_t *l = mlock_get(id);
    if (l->holder < 0)
        return SDSM_EPROTO;
    int *mark = NULL;
    for (uint32_t k = 0; k < l->qlen && !mark; k++) {
        int rank = k ? l->queue[(l->qhead + k - 1) % l->qcap].rank : l->holder;
        int *m = k ? &l->queue[(l->qhead + k - 1) % l->qcap].passed : &l->holder_passed;
        if (rank == from && !*m) {
            if (l->queue[(l->qhead + k) % l->qcap].rank != to)
                return SDSM_EPROTO;
            mark = m;
        }
    }
    if (!mark)
        return SDSM_EPROTO;
    *mark = 1;
    while (l->holder_passed) {
        l->holder = l->queue[l->qhead].rank;
        l->holder_passed = l->queue[l->qhead].passed;
        l->qhead = (l->qhead + 1) % l->qcap;
        l->qlen--;
    }
    return 0;
}

static int on_passed(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    int32_t to;
    memcpy(&id, p, 4);
    memcpy(&to, p + 4, 4);
    if (id > INT32_MAX || !caching() || lock_manager(id) != sdsm_net_rank())
        return SDSM_EPROTO;
    return passed(id, src, to);
}

static int on_rel(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id, stamp;
    memcpy(&id, p, 4);
    memcpy(&stamp, p + 4, 4);
    if (id > INT32_MAX || caching() || lock_manager(id) != sdsm_net_rank())
        return SDSM_EPROTO;
    mlock_t *l = mlock_get(id);
    if (l->holder != src)
        return SDSM_EPROTO;
    chain_fresh(l);
    /* A release from before the last barrier carries nothing still needed. */
    if (h->len > 8 && h->epoch == sdsm_net_epoch()) {
        uint32_t len = h->len - 8;
        uint8_t *c = realloc(l->chain, l->chain_len + 8 + len);
        if (!c)
            sdsm_fatal("out of memory keeping lock %u's updates", id);
        memcpy(c + l->chain_len, &stamp, 4);
        memcpy(c + l->chain_len + 4, &len, 4);
        memcpy(c + l->chain_len + 8, p + 8, len);
        l->chain = c;
        l->chain_len += 8 + len;
    }
    l->holder = -1;
    if (l->qlen) {
        qent_t next = l->queue[l->qhead];
        l->qhead = (l->qhead + 1) % l->qcap;
        l->qlen--;
        grant(l, next.rank, next.stamp);
    }
    return 0;
}

/* Caching: hand lock id to rank `to` (this rank's threads are done with it
 * and its writes are flushed), tell the manager, and ask again if threads
 * of this rank still wait.  The manager hears of the pass before `to` gets
 * the lock: passes are made by whichever thread releases, outside
 * local_mtx, and a note sent after the grant could reach the manager after
 * the note of this rank's next pass of the lock (it can come round again
 * while this thread is preempted between the two sends), which the manager
 * would take for this one's and reject (passed()). */
static void pass_on(uint32_t id, int to, int again)
{
    int m = lock_manager(id);
    if (to != m) { /* a manager that gets the lock learns it from the grant */
        uint32_t note[2] = {id, (uint32_t)to};
        send_to(m, SDSM_MSG_LOCK_PASSED, note, 8, NULL, 0);
    }
    sdsm_net_send(to, SDSM_MSG_LOCK_GRANT, 0, 0, &id, 4, NULL, 0);
    if (again) {
        uint32_t req[2] = {id, 0};
        send_to(m, SDSM_MSG_LOCK_REQ, req, 8, NULL, 0);
    }
}

/* Caching: the manager says rank `to` asked after us. */
static int on_fwd(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    int32_t to;
    memcpy(&id, p, 4);
    memcpy(&to, p + 4, 4);
    if (id > INT32_MAX || !caching() || src != lock_manager(id) || to < 0 || to >= sdsm_net_nprocs() ||
        to == sdsm_net_rank())
        return SDSM_EPROTO;
    pthread_mutex_lock(&local_mtx);
    rlock_t *r = rlock_get(id);
    if (!r->claimed || r->pass_to >= 0) {
        pthread_mutex_unlock(&local_mtx);
        return SDSM_EPROTO;
    }
    int now = r->owned && !r->busy; /* cached here, unused: no local thread waits */
    if (now)
        r->owned = r->claimed = 0;
    else
        r->pass_to = to;
    pthread_mutex_unlock(&local_mtx);
    if (now)
        pass_on(id, to, 0);
    return 0;
}

static int on_grant(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    memcpy(&id, p, 4);
    if (id > INT32_MAX)
        return SDSM_EPROTO;
    if (caching()) {
        int me = sdsm_net_rank();
        if (h->len != 4 || (lock_manager(id) == me && src != me && passed(id, src, me)))
            return SDSM_EPROTO;
        pthread_mutex_lock(&local_mtx);
        rlock_t *r = rlock_get(id);
        int expected = r->claimed && !r->owned, left = r->left, pass = -1;
        waiter_t *first = expected ? oldest_waiter(id) : NULL;
        r->left = 0;
        if (first) {
            r->owned = r->busy = 1;
            r->handoffs = 0;
            atomic_store(&first->granted, 1);
            sdsm_wake_all(&first->granted);
        } else if (expected && left) { /* nobody waits for it now: cached, unused */
            if (r->pass_to >= 0) {
                pass = r->pass_to;
                r->pass_to = -1;
                r->owned = r->claimed = 0;
            } else {
                r->owned = 1;
                r->busy = 0;
            }
        }
        pthread_mutex_unlock(&local_mtx);
        if (pass >= 0) /* nothing was written under it here: nothing to flush */
            pass_on(id, pass, 0);
        return first || (expected && left) ? 0 : SDSM_EPROTO;
    }
    if (src != lock_manager(id))
        return SDSM_EPROTO;
    pthread_mutex_lock(&local_mtx);
    waiter_t *first = oldest_waiter(id);
    if (first && h->len > 4) {
        first->chain = malloc(h->len - 4);
        if (!first->chain)
            sdsm_fatal("out of memory receiving lock %u's updates", id);
        memcpy(first->chain, p + 4, h->len - 4);
        first->chain_len = h->len - 4;
    }
    if (first) {
        atomic_store(&first->granted, 1);
        sdsm_wake_all(&first->granted);
    }
    pthread_mutex_unlock(&local_mtx);
    return first ? 0 : SDSM_EPROTO;
}

int sdsm_lock_held(int id)
{
    if (sdsm_hostlock_on((uint32_t)id))
        return mine_at((uint32_t)id) >= 0;
    pthread_mutex_lock(&local_mtx);
    held_t *h = helds;
    while (h && !(h->id == (uint32_t)id && pthread_equal(h->thread, pthread_self())))
        h = h->next;
    pthread_mutex_unlock(&local_mtx);
    return h != NULL;
}

/*
 * A protocol may bound how many threads of a rank are inside critical
 * sections at once (cs_slots: ibec has a section per protection key, one
 * without keys): a thread passes the gate before the first lock it asks
 * for and leaves it after the last one it releases (cond_wait releases its
 * lock, so a waiting thread does not block the others).  Threads with no
 * lock are not held up.
 */
static pthread_mutex_t gate_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_in; /* threads past the gate */
static _Thread_local int cs_depth;

static int gate_slots(void) { return sdsm_proto->cs_slots ? sdsm_proto->cs_slots() : 0; }

static void gate_enter(void)
{
    int slots = gate_slots();
    if (!slots || cs_depth++ != 0)
        return;
    pthread_mutex_lock(&gate_mtx);
    if (gate_in >= slots) {
        /* Other threads of this rank are in critical sections, which may
         * last: a compute thread gives its run slot up meanwhile (a holder
         * may need one to get out). */
        sdsm_wait_blocking();
        while (gate_in >= slots)
            pthread_cond_wait(&gate_cv, &gate_mtx);
    }
    gate_in++;
    pthread_mutex_unlock(&gate_mtx);
}

static void gate_leave(void)
{
    if (!gate_slots() || cs_depth <= 0 || --cs_depth != 0)
        return;
    pthread_mutex_lock(&gate_mtx);
    gate_in--;
    pthread_cond_signal(&gate_cv);
    pthread_mutex_unlock(&gate_mtx);
}

static held_t *unhold(uint32_t id);

static int host_acquire(uint32_t id)
{
    if (mine_room())
        return SDSM_ENOMEM;
    uint64_t t0 = sdsm_trace_t0(), waited = sdsm_hostlock_take(id);
    mine_ids()[mine.n] = id;
    mine_since()[mine.n++] = sdsm_trace_t0();
    sdsm_stat_add(SDSM_ST_LOCK_ACQUIRES, 1);
    if (waited)
        sdsm_stat_add(SDSM_ST_LOCK_WAIT_NS, waited);
    SDSM_TRACE(SDSM_TR_LOCK_WAIT, t0, id, 0, 0);
    return 0;
}

static int host_release(uint32_t id)
{
    int i = mine_at(id);
    if (i < 0)
        return SDSM_ENOTHELD;
    uint32_t *ids = mine_ids();
    uint64_t *since = mine_since();
    SDSM_TRACE(SDSM_TR_LOCK_HOLD, since[i], id, 0, 0);
    mine.n--;
    ids[i] = ids[mine.n];
    since[i] = since[mine.n];
    if (!mine.n && mine.cap) { /* a thread that ends holds none: nothing left allocated */
        free(mine.ids);
        free(mine.since);
        mine.cap = 0;
    }
    sdsm_hostlock_give(id);
    return 0;
}

/* Under local_mtx: take w off the list of waiters. */
static void unwait(waiter_t *w)
{
    for (waiter_t **pp = &waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
}

/*
 * Wait for w's grant until `until` (sdsm_now_ns).  A grant too late for
 * the caller cannot be refused (the manager has queued this rank), so the
 * request is left to run: its grant makes the lock cached here, unused
 * (on_grant), as if a thread had taken it and let it go with nothing
 * written, and it moves on at the next rank's request.  Returns 1 if
 * granted in time.
 */
static int wait_until(waiter_t *w, uint64_t until)
{
    for (uint64_t now = sdsm_now_ns(); !atomic_load(&w->granted) && now < until; now = sdsm_now_ns()) {
        uint64_t ns = until - now < 1000000 ? until - now : 1000000;
        struct timespec nap = {0, (long)ns};
        sdsm_wait_change_as(&w->granted, 0, 0, &nap); /* the service thread reads the grant */
    }
    if (atomic_load(&w->granted))
        return 1;
    pthread_mutex_lock(&local_mtx);
    int granted = atomic_load(&w->granted);
    if (!granted) {
        unwait(w);
        rlock_get(w->id)->left = 1;
    }
    pthread_mutex_unlock(&local_mtx);
    return granted;
}

/*
 * Take lock id, waiting until `until` (sdsm_now_ns; UINT64_MAX: for as
 * long as it takes).  A bounded take fails at once if a thread of this rank
 * holds the lock or already waits for it.  Returns 0, 1 if not taken, or
 * an SDSM_E* code.
 */
static int acquire(int id, uint64_t until)
{
    int bounded = until != UINT64_MAX;
    if (sdsm_hostlock_on((uint32_t)id))
        return bounded ? SDSM_ENOTSUP : host_acquire((uint32_t)id);
    if (bounded && !caching())
        return SDSM_ENOTSUP; /* a grant that carries data is not left behind */
    uint64_t t0 = sdsm_now_ns();
    waiter_t w = {.id = (uint32_t)id};
    held_t *h = malloc(sizeof *h);
    if (!h)
        return SDSM_ENOMEM;
    gate_enter();
    int ask = 1;
    pthread_mutex_lock(&local_mtx);
    if (bounded) {
        rlock_t *r = rlock_get(w.id);
        if (r->claimed && !(r->owned && !r->busy)) {
            pthread_mutex_unlock(&local_mtx);
            gate_leave();
            free(h);
            return 1;
        }
    }
    w.next = waiters;
    waiters = &w;
    if (caching()) { /* one claim per rank: see the top */
        rlock_t *r = rlock_get(w.id);
        ask = !r->claimed;
        r->claimed = 1;
        if (ask) {
            r->handoffs = 0;
        } else if (r->owned && !r->busy) { /* still here since our last unlock */
            r->busy = 1;
            atomic_store(&w.granted, 1);
            sdsm_stat_add(SDSM_ST_LOCK_CACHED, 1);
        }
    }
    pthread_mutex_unlock(&local_mtx);
    uint32_t req[2] = {w.id, sdsm_proto->lock_stamp(id)};
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_LOCK, id);
    if (ask) {
        if (!bounded) /* its wait does not read the network: the service thread must */
            sdsm_net_pin(lock_manager(w.id)); /* the grant mostly comes from there (net/pin.c) */
        send_to(lock_manager(w.id), SDSM_MSG_LOCK_REQ, req, 8, NULL, 0);
    }
    int got = 1;
    if (bounded)
        got = wait_until(&w, until);
    else
        while (!atomic_load(&w.granted))
            sdsm_wait_change(&w.granted, 0);
    sdsm_net_unpin();
    sdsm_wait_leave(&sv);
    if (!got) {
        gate_leave();
        free(h);
        return 1;
    }
    pthread_mutex_lock(&local_mtx);
    unwait(&w);
    *h = (held_t){.next = helds, .id = w.id, .thread = pthread_self(), .since = sdsm_trace_t0()};
    helds = h;
    pthread_mutex_unlock(&local_mtx);
    int rc = sdsm_proto->acquire_lock(id, w.chain, w.chain_len);
    free(w.chain);
    if (rc)
        sdsm_fatal("lock %d's manager sent invalid updates", id);
    sdsm_stat_add(SDSM_ST_LOCK_ACQUIRES, 1);
    sdsm_stat_add(SDSM_ST_LOCK_WAIT_NS, sdsm_now_ns() - t0);
    SDSM_TRACE(SDSM_TR_LOCK_WAIT, t0, id, 0, 0);
    return 0;
}

int sdsm_lock_acquire(int id) { return acquire(id, UINT64_MAX); }

int sdsm_lock_try(int id, uint64_t wait_ns)
{
    uint64_t now = sdsm_now_ns();
    return acquire(id, wait_ns < UINT64_MAX - now ? now + wait_ns : UINT64_MAX - 1);
}

/* Under local_mtx: take this thread's record of holding id off the list. */
static held_t *unhold(uint32_t id)
{
    for (held_t **pp = &helds; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id && pthread_equal((*pp)->thread, pthread_self())) {
            held_t *h = *pp;
            *pp = h->next;
            SDSM_TRACE(SDSM_TR_LOCK_HOLD, h->since, id, 0, 0);
            return h;
        }
    return NULL;
}

/* Hand lock id to a local waiter instead of the manager, if one waits and
 * the run of hand-offs is not too long.  Returns 1 if it did. */
static int handoff(uint32_t id)
{
    if (!caching())
        return 0;
    pthread_mutex_lock(&local_mtx);
    rlock_t *r = rlock_get(id);
    waiter_t *w = oldest_waiter(id);
    held_t *h = NULL;
    if (!w || (r->pass_to >= 0 && r->handoffs >= LOCAL_HANDOFFS) || !(h = unhold(id))) {
        pthread_mutex_unlock(&local_mtx);
        return 0;
    }
    r->handoffs++;
    atomic_store(&w->granted, 1);
    sdsm_wake_all(&w->granted);
    pthread_mutex_unlock(&local_mtx);
    free(h);
    sdsm_stat_add(SDSM_ST_LOCK_HANDOFFS, 1);
    return 1;
}

/*
 * Caching, under local_mtx (which this unlocks): the thread that held lock
 * id released it and its writes are flushed.  A local thread that queued
 * meanwhile gets it, unless another rank waits (then it is passed on and
 * this rank asks again); otherwise it stays here.
 */
static void cached_unlock(uint32_t id)
{
    rlock_t *r = rlock_get(id);
    waiter_t *w = oldest_waiter(id);
    int to = r->pass_to;
    if (to < 0 && w) {
        r->handoffs++;
        atomic_store(&w->granted, 1);
        sdsm_wake_all(&w->granted);
    } else if (to >= 0) {
        r->pass_to = -1;
        r->owned = r->busy = 0;
        r->claimed = w != NULL;
        r->handoffs = 0;
    } else {
        r->busy = 0;
    }
    pthread_mutex_unlock(&local_mtx);
    if (to >= 0)
        pass_on(id, to, w != NULL);
}

int sdsm_lock_release(int id, int flush)
{
    if (sdsm_hostlock_on((uint32_t)id))
        return host_release((uint32_t)id);
    if (handoff((uint32_t)id))
        return 0;
    uint8_t *payload = NULL;
    size_t plen = 0;
    uint32_t stamp = 0;
    if (flush)
        sdsm_proto->release_lock(id, &payload, &plen, &stamp);
    pthread_mutex_lock(&local_mtx);
    held_t *h = unhold((uint32_t)id);
    if (h && caching()) {
        cached_unlock((uint32_t)id); /* unlocks local_mtx */
        free(h);
        free(payload);
        gate_leave();
        return 0;
    }
    pthread_mutex_unlock(&local_mtx);
    if (!h) {
        free(payload);
        return SDSM_ENOTHELD;
    }
    free(h);
    uint32_t rel[2] = {(uint32_t)id, stamp};
    send_to(lock_manager(rel[0]), SDSM_MSG_LOCK_REL, rel, 8, payload, plen);
    free(payload);
    gate_leave();
    return 0;
}

typedef struct {
    char *buf;
    size_t len, off;
    int n;
} describe_t;

static int describe_one(void *v, void *arg)
{
    mlock_t *l = v;
    describe_t *d = arg;
    if (d->off >= d->len)
        return 1;
    if (l->holder < 0 || !l->qlen)
        return 0;
    char *buf = d->buf;
    size_t len = d->len, off = d->off;
    off += (size_t)snprintf(buf + off, len - off, "%smanages lock %u: held by rank %d, wanted by rank%s",
                            d->n++ ? "; " : "", l->id, l->holder, l->qlen > 1 ? "s" : "");
    for (uint32_t i = 0; i < l->qlen && i < 16 && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s %d", i ? "," : "",
                                l->queue[(l->qhead + i) % l->qcap].rank);
    if (l->qlen > 16 && off < len)
        off += (size_t)snprintf(buf + off, len - off, " and %u more", l->qlen - 16);
    d->off = off;
    return 0;
}

int sdsm_lock_describe_managed(char *buf, size_t len)
{
    describe_t d = {buf, len, 0, 0};
    if (sdsm_hostbar_locks())
        return sdsm_hostlock_describe(buf, len);
    sdsm_idmap_each(&table, describe_one, &d);
    return d.n;
}

int sdsm_lock_held_list(char *buf, size_t len)
{
    int n = 0;
    size_t off = 0;
    buf[0] = '\0';
    pthread_mutex_lock(&local_mtx);
    for (held_t *h = helds; h; h = h->next, n++)
        if (off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%u", n ? ", " : "", h->id);
    pthread_mutex_unlock(&local_mtx);
    return n + sdsm_hostlock_list_mine(buf + off, off < len ? len - off : 0, n);
}

void sdsm_lock_release_all(void)
{
    sdsm_hostlock_give_mine();
    for (;;) {
        pthread_mutex_lock(&local_mtx);
        held_t *h = helds;
        if (h)
            helds = h->next;
        pthread_mutex_unlock(&local_mtx);
        if (!h)
            return;
        uint8_t *payload = NULL;
        size_t plen = 0;
        uint32_t rel[2] = {h->id, 0};
        sdsm_proto->release_lock((int)h->id, &payload, &plen, &rel[1]);
        if (caching()) {
            pthread_mutex_lock(&local_mtx);
            cached_unlock(h->id);
            free(payload);
            free(h);
            continue;
        }
        send_to(lock_manager(h->id), SDSM_MSG_LOCK_REL, rel, 8, payload, plen);
        free(payload);
        free(h);
    }
}

int sdsm_lock_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REQ, on_req);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REL, on_rel);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_GRANT, on_grant);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_FWD, on_fwd);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_PASSED, on_passed);
    return 0;
}
