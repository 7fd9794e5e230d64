/*
 * hlrc.c - home-based release consistency with multiple writers and
 * invalidation (SCASH's invalidate mode, seed 001's protocol).
 *
 * Every page has a home holding the master copy.  Other ranks fetch the
 * page on their first access, twin it on their first write, and at a
 * release send the diff (twin vs. page) to the home.
 *
 * How writes reach later acquirers, transitively:
 *  - Lock release (eager, SCASH's ERC): the diffs go to the homes flagged
 *    EAGER; each home applies them, invalidates every other copy of those
 *    pages and only then acknowledges.  When unlock returns no stale copy
 *    exists anywhere, so any acquire ordered after it - through any chain of
 *    locks or barriers - sees the writes.  A rank asked to drop a page it is
 *    itself writing first sends its own diff (never losing a byte) and
 *    remembers the page as written-and-flushed.
 *  - Barrier: the diffs go to the homes (no invalidation round), and the
 *    list of pages each rank wrote rides on the barrier messages; the
 *    manager merges them and every rank drops its copies of pages others
 *    wrote.  A page only this rank wrote is kept.  Homes apply the same
 *    merged list to their copysets, so copysets stay exact without messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/proto.h"

#define BATCH_LIMIT (1u << 20) /* flush a per-home diff batch past this size */

typedef struct buf {
    uint8_t *p;
    size_t   len, cap;
} buf_t;

/* A home waiting for invalidation acks before it acknowledges an EAGER diff. */
typedef struct pending {
    struct pending *next;
    uint32_t        id, seq;
    int             src;
    uint32_t        remaining;
} pending_t;

static struct {
    int             me, n;
    size_t          ps;
    pthread_mutex_t release_mtx;  /* one release at a time per rank */
    uint32_t       *work;         /* release: dirty pages (npages capacity) */
    uint32_t       *notices;      /* release: pages written, for the barrier */
    buf_t          *out;          /* release: per-home batches */
    /* service thread only */
    uint32_t      **tgt;          /* per-rank invalidation lists */
    uint32_t       *tgt_n, *tgt_cap;
    pending_t      *pending;
    uint32_t        next_id;
} H;

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void buf_reserve(buf_t *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more)
        cap *= 2;
    if (!(b->p = realloc(b->p, cap)))
        sdsm_fatal("out of memory building a diff batch");
    b->cap = cap;
}

/* Append pg's diff (or, with twin == NULL, a bare write notice) to b. */
static void add_entry(buf_t *b, uint32_t pg, const uint8_t *twin)
{
    buf_reserve(b, 8 + sdsm_diff_bound(H.ps));
    uint8_t *e = b->p + b->len;
    uint32_t nb = 0;
    if (twin) {
        const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
        size_t gran = a ? a->elem : 1, nruns, ndata;
        size_t phase = a && gran > 1 ? ((size_t)(pg - a->first) * H.ps) % gran : 0;
        nb = (uint32_t)sdsm_diff_encode(twin, sdsm_page_rt(pg), H.ps, gran, phase, e + 8, &nruns,
                                        &ndata);
        sdsm_stat_add(SDSM_ST_DIFFS_MADE, 1);
        sdsm_stat_add(SDSM_ST_DIFF_BYTES_MADE, ndata);
    }
    memcpy(e, &pg, 4);
    memcpy(e + 4, &nb, 4);
    b->len += 8 + nb;
}

/* ---------------------------------------------------------------- faults */

/*
 * Sequential prefetch.  A fault on the page right after the last window
 * fetched doubles the window (up to PREFETCH_MAX pages); any other fault
 * resets it.  Extra pages must be invalid, in the same block and at the same
 * home, and their locks free (trylock: we already hold one stripe lock, and
 * stripes wrap, so waiting could deadlock).
 */
#define PREFETCH_MAX 32u
static _Atomic uint32_t seq_next = UINT32_MAX, seq_win;

static uint32_t prefetch_window(uint32_t pg, int home)
{
    uint32_t win = 0;
    if (pg == atomic_load(&seq_next)) {
        win = atomic_load(&seq_win);
        win = win ? 2 * win : 1;
        if (win > (uint32_t)sdsm_cfg.prefetch)
            win = (uint32_t)sdsm_cfg.prefetch;
    }
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    uint32_t k = 0;
    while (k < win && a && pg + k + 1 < a->first + a->npages) {
        uint32_t q = pg + k + 1;
        if (pthread_mutex_trylock(&sdsm_page_stripes[q % SDSM_PAGE_STRIPES]))
            break;
        int ok = sdsm_page(q)->state == SDSM_PG_INVALID && sdsm_page_home(q) == home;
        if (ok)
            sdsm_page_set(q, SDSM_PG_FETCHING, 0, 0);
        sdsm_page_unlock(q);
        if (!ok)
            break;
        k++;
    }
    atomic_store(&seq_win, win);
    atomic_store(&seq_next, pg + k + 1);
    return k;
}

static void start_fetch(uint32_t pg, int home)
{
    sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 0);
    if (home < 0) {
        uint32_t q[2] = {pg, 1};
        sdsm_net_send(sdsm_page_manager(pg, H.n), SDSM_MSG_HOME_REQ, 0, 0, q, 8, NULL, 0);
        return;
    }
    uint32_t q[2] = {pg, 1 + prefetch_window(pg, home)};
    sdsm_net_send(home, SDSM_MSG_FETCH, 0, 0, q, 8, NULL, 0);
}

static int hlrc_fault(uint32_t pg, int is_write)
{
    if (!sdsm_alloc_find(pg))
        return -1;
    sdsm_stat_add(is_write > 0 ? SDSM_ST_WRITE_FAULTS : SDSM_ST_READ_FAULTS, 1);
    sdsm_page_lock(pg);
    for (;;) {
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        if (p->state == SDSM_PG_INVALID && home == H.me) {
            sdsm_page_set(pg, is_write > 0 ? SDSM_PG_READ_WRITE : SDSM_PG_READ_ONLY, 1, 1);
            if (is_write > 0)
                sdsm_page_mark_dirty(pg);
            break;
        }
        if (p->state == SDSM_PG_INVALID && !(p->flags & SDSM_PGF_PENDING))
            start_fetch(pg, home);
        if (p->state == SDSM_PG_FETCHING || p->state == SDSM_PG_INVALID) {
            uint32_t g = atomic_load(&sdsm_page_gen);
            sdsm_page_unlock(pg);
            sdsm_wait_change(&sdsm_page_gen, g);
            sdsm_page_lock(pg);
            continue;
        }
        if (p->state == SDSM_PG_READ_ONLY && is_write) {
            if (home != H.me) {
                memcpy(sdsm_page_twin(pg), sdsm_page_rt(pg), H.ps);
                sdsm_stat_add(SDSM_ST_TWINS, 1);
            }
            sdsm_page_set(pg, SDSM_PG_READ_WRITE, home == H.me, 1);
            sdsm_page_mark_dirty(pg);
            break;
        }
        /* The access is allowed by the state: another thread resolved it, or
         * a batched protection change is still on its way.  Repair it. */
        sdsm_page_protect(pg, 1, p->state);
        break;
    }
    sdsm_page_unlock(pg);
    return 0;
}

/* -------------------------------------------------------------- releases */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int copyset_others(uint32_t pg)
{
    const sdsm_page_t *m = sdsm_page(pg);
    if (!m->copyset)
        return 0;
    for (size_t w = 0; w < sdsm_region.copyset_words; w++) {
        uint64_t bits = m->copyset[w];
        if (w == (size_t)H.me / 64)
            bits &= ~(1ull << (H.me % 64));
        if (bits)
            return 1;
    }
    return 0;
}

static void send_batch(int home, unsigned flags, sdsm_rpc_t *r, uint32_t id)
{
    buf_t *b = &H.out[home];
    if (!b->len)
        return;
    sdsm_rpc_expect(r, 1);
    sdsm_net_send(home, SDSM_MSG_DIFF, flags, id, b->p, b->len, NULL, 0);
    b->len = 0;
}

static int hlrc_release(sdsm_sync_kind_t kind, const uint32_t **pages, uint32_t *npages)
{
    int eager = kind == SDSM_SYNC_LOCK;
    pthread_mutex_lock(&H.release_mtx);
    uint32_t n = sdsm_page_take_dirty(H.work), nn = 0;
    if (n == 0) { /* the common case of a lock or barrier without writes */
        pthread_mutex_unlock(&H.release_mtx);
        if (pages) {
            *pages = H.notices;
            *npages = 0;
        }
        return 0;
    }
    qsort(H.work, n, sizeof *H.work, cmp_u32);
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1); /* 1: guard until every batch is sent */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = H.work[i];
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg), written = 0;
        p->flags &= (uint8_t)~SDSM_PGF_DIRTY;
        if (p->state == SDSM_PG_READ_WRITE) {
            /* Protect first: a write by another thread after this faults
             * and waits for the lock instead of racing with the diff. */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == H.me, 1);
            if (home != H.me) {
                add_entry(&H.out[home], pg, sdsm_page_twin(pg));
                p->flags |= SDSM_PGF_PENDING;
            }
            else if (eager)
                add_entry(&H.out[home], pg, NULL);
            /* A page written only at its home, of which nobody else holds a
             * copy, needs no notice: whoever fetches it later gets it whole.
             * (Copysets change under the page lock, which we hold.) */
            written = home != H.me || copyset_others(pg);
        } else if (p->flags & SDSM_PGF_FLUSHED) {
            p->flags &= (uint8_t)~SDSM_PGF_FLUSHED;
            if (eager && home >= 0)
                add_entry(&H.out[home], pg, NULL);
            written = 1;
        }
        sdsm_page_unlock(pg);
        if (written)
            H.notices[nn++] = pg;
        if (home >= 0 && H.out[home].len >= BATCH_LIMIT)
            send_batch(home, eager ? SDSM_DIFF_EAGER : 0, &r, id);
    }
    for (int h = 0; h < H.n; h++)
        send_batch(h, eager ? SDSM_DIFF_EAGER : 0, &r, id);
    /* The diffs are queued on their connections: a fetch sent from now on
     * reaches each home after them, so the pages may be fetched again. */
    int woke = 0;
    for (uint32_t i = 0; i < n; i++) {
        sdsm_page_t *p = sdsm_page(H.work[i]);
        if (!(p->flags & SDSM_PGF_PENDING))
            continue;
        sdsm_page_lock(H.work[i]);
        p->flags &= (uint8_t)~SDSM_PGF_PENDING;
        woke |= p->state == SDSM_PG_INVALID;
        sdsm_page_unlock(H.work[i]);
    }
    if (woke)
        sdsm_page_wake();
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    pthread_mutex_unlock(&H.release_mtx);
    if (r.status)
        sdsm_fatal("a home rejected this rank's diffs (protocol error)");
    if (pages) {
        *pages = H.notices;
        *npages = nn;
    }
    return 0;
}

static void hlrc_acquire(sdsm_sync_kind_t kind)
{
    (void)kind; /* eager invalidation left nothing to do at an acquire */
}

/* ------------------------------------------------------ home-side handlers */

static int on_fetch(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count == 0 || count > 1 + PREFETCH_MAX ||
        count > sdsm_region.npages - first || src == H.me)
        return -EPROTO;
    for (uint32_t pg = first; pg < first + count; pg++) {
        /* Copy-holder and copy are recorded together, under the page lock,
         * so a release at this home sees either both or neither. */
        sdsm_page_lock(pg);
        if (sdsm_copyset_add(pg, src))
            sdsm_fatal("out of memory recording a copy holder");
        uint32_t hdr[2] = {pg, 0};
        sdsm_net_send(src, SDSM_MSG_FETCH_REP, 0, h->seq, hdr, 8, sdsm_page_rt(pg), H.ps);
        sdsm_page_unlock(pg);
    }
    sdsm_stat_add(SDSM_ST_PAGES_SERVED, count);
    return 0;
}

static int on_home_req(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages || sdsm_page_manager(pg, H.n) != H.me)
        return -EPROTO;
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (a && a->home != -3 /* SDSM_HOME_FIRST_TOUCH */)
        return -EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (!m->home1 && rd32(p + 4))
        m->home1 = src + 1; /* the first claim wins */
    int32_t rep[2] = {(int32_t)pg, m->home1 - 1};
    sdsm_page_unlock(pg);
    sdsm_net_send(src, SDSM_MSG_HOME_REP, 0, h->seq, rep, 8, NULL, 0);
    return 0;
}

static void add_target(int r, uint32_t pg)
{
    if (H.tgt_n[r] == H.tgt_cap[r]) {
        H.tgt_cap[r] = H.tgt_cap[r] ? 2 * H.tgt_cap[r] : 256;
        if (!(H.tgt[r] = realloc(H.tgt[r], H.tgt_cap[r] * sizeof(uint32_t))))
            sdsm_fatal("out of memory");
    }
    H.tgt[r][H.tgt_n[r]++] = pg;
}

/* Collect and remove every copy holder of pg except the writer. */
static void collect_copies(uint32_t pg, int writer)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (!m->copyset)
        return;
    for (size_t w = 0; w < sdsm_region.copyset_words; w++) {
        uint64_t bits = m->copyset[w];
        while (bits) {
            int r = (int)(w * 64 + (size_t)__builtin_ctzll(bits));
            bits &= bits - 1;
            if (r != writer && r != H.me) {
                add_target(r, pg);
                m->copyset[w] &= ~(1ull << (r % 64));
            }
        }
    }
}

static int on_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int ack = !(h->flags & SDSM_DIFF_NOACK);
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, H.ps)) {
        if (ack)
            sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 1, h->seq, NULL, 0, NULL, 0);
        return -EPROTO;
    }
    for (size_t off = 0; off < h->len;) {
        uint32_t pg = rd32(p + off), nb = rd32(p + off + 4);
        if (nb) {
            size_t bytes = sdsm_diff_apply(sdsm_page_rt(pg), p + off + 8, nb);
            sdsm_stat_add(SDSM_ST_DIFFS_APPLIED, 1);
            sdsm_stat_add(SDSM_ST_DIFF_BYTES_APPLIED, bytes);
        }
        if (h->flags & SDSM_DIFF_EAGER) {
            sdsm_page_lock(pg);
            collect_copies(pg, src);
            sdsm_page_unlock(pg);
        }
        off += 8 + nb;
    }
    if (!(h->flags & SDSM_DIFF_EAGER)) {
        if (ack)
            sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
        return 0;
    }
    pending_t *op = NULL;
    for (int r = 0; r < H.n; r++) {
        if (!H.tgt_n[r])
            continue;
        if (!op) {
            if (!(op = calloc(1, sizeof *op)))
                sdsm_fatal("out of memory");
            *op = (pending_t){.next = H.pending, .id = ++H.next_id, .seq = h->seq, .src = src};
            H.pending = op;
        }
        op->remaining++;
        sdsm_net_send(r, SDSM_MSG_INVAL, 0, op->id, H.tgt[r], H.tgt_n[r] * 4u, NULL, 0);
        H.tgt_n[r] = 0;
    }
    if (!op)
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

static int on_inval_ack(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    for (pending_t **pp = &H.pending; *pp; pp = &(*pp)->next) {
        pending_t *op = *pp;
        if (op->id != h->seq)
            continue;
        if (--op->remaining == 0) {
            sdsm_net_send(op->src, SDSM_MSG_DIFF_ACK, 0, op->seq, NULL, 0, NULL, 0);
            *pp = op->next;
            free(op);
        }
        return 0;
    }
    return -EPROTO;
}

/* ------------------------------------------------- copy-holder handlers */

static int on_fetch_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages)
        return -EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state != SDSM_PG_FETCHING) { /* a prefetch overtaken by sdsm_free: drop it */
        sdsm_page_unlock(pg);
        return 0;
    }
    if (m->flags & SDSM_PGF_STALE) { /* served before a barrier that made it stale */
        m->flags &= (uint8_t)~SDSM_PGF_STALE;
        sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0);
        sdsm_page_unlock(pg);
        sdsm_page_wake();
        return 0;
    }
    memcpy(sdsm_page_rt(pg), p + 8, H.ps);
    sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 1);
    sdsm_page_unlock(pg);
    sdsm_stat_add(SDSM_ST_PAGES_FETCHED, 1);
    sdsm_stat_add(SDSM_ST_BYTES_FETCHED, H.ps);
    sdsm_page_wake();
    return 0;
}

static int on_home_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    int32_t home = (int32_t)rd32(p + 4);
    if (h->seq) /* answer to sdsm_proto_home_query */
        return home < -1 || home >= H.n ? -EPROTO : sdsm_rpc_reply(h->seq, 0, &home, 4);
    if (pg >= sdsm_region.npages || home < 0 || home >= H.n || src != sdsm_page_manager(pg, H.n))
        return -EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state != SDSM_PG_FETCHING) {
        sdsm_page_unlock(pg);
        return -EPROTO;
    }
    m->home1 = home + 1;
    if (home == H.me) { /* we won the claim: the page is ours, and zero */
        sdsm_page_set(pg, SDSM_PG_INVALID, 1, 0);
        sdsm_page_unlock(pg);
        sdsm_page_wake();
        return 0;
    }
    uint32_t q[2] = {pg, 1};
    sdsm_net_send(home, SDSM_MSG_FETCH, 0, 0, q, 8, NULL, 0);
    sdsm_page_unlock(pg);
    return 0;
}

int sdsm_proto_home_query(uint32_t pg)
{
    int32_t home = -1;
    uint32_t q[2] = {pg, 0};
    sdsm_rpc_t r = {.buf = &home, .cap = 4};
    uint32_t id = sdsm_rpc_open(&r, 1);
    sdsm_net_send(sdsm_page_manager(pg, H.n), SDSM_MSG_HOME_REQ, 0, id, q, 8, NULL, 0);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    return home >= 0 ? home : -13 /* SDSM_ENOHOME */;
}

/* Drop our copies; a page we are writing first sends its diff home. */
static int on_inval(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n = h->len / 4;
    for (uint32_t i = 0; i < n; i++)
        if (rd32(p + 4 * i) >= sdsm_region.npages)
            return -EPROTO;
    buf_t early = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(p + 4 * i);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE) {
            int dirty = m->state == SDSM_PG_READ_WRITE;
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
            if (dirty) {
                /* Send before unlocking: a fetch of this page by one of our
                 * threads must reach the home after our own writes. */
                early.len = 0;
                add_entry(&early, pg, sdsm_page_twin(pg));
                m->flags |= SDSM_PGF_FLUSHED;
                sdsm_net_send(src, SDSM_MSG_DIFF, SDSM_DIFF_NOACK, 0, early.p, early.len, NULL, 0);
            }
            sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
        }
        sdsm_page_unlock(pg);
    }
    free(early.p);
    sdsm_net_send(src, SDSM_MSG_INVAL_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

static int on_diff_ack(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    return sdsm_rpc_reply(h->seq, h->flags ? -EPROTO : 0, NULL, 0);
}

/* ----------------------------------------------------------------- barrier */

static int hlrc_barrier_done(const uint8_t *pairs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t w = (int32_t)rd32(pairs + 8 * i + 4);
        if (rd32(pairs + 8 * i) >= sdsm_region.npages || w < -1 || w >= H.n)
            return -EPROTO;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(pairs + 8 * i);
        int writer = (int32_t)rd32(pairs + 8 * i + 4);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->copyset) { /* we are the home: only the sole writer still has a valid copy */
            int keep = writer >= 0 && sdsm_copyset_has(pg, writer);
            sdsm_copyset_clear(pg);
            if (keep)
                sdsm_copyset_add(pg, writer);
        } else if (m->state == SDSM_PG_READ_ONLY && writer != H.me && sdsm_page_home(pg) != H.me) {
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
            sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
        } else if (m->state == SDSM_PG_FETCHING && writer != H.me) {
            m->flags |= SDSM_PGF_STALE; /* a prefetch in flight may hold old data */
        }
        sdsm_page_unlock(pg);
    }
    return 0;
}

static void hlrc_free_range(uint32_t first, uint32_t n)
{
    for (uint32_t pg = first; pg < first + n; pg++) {
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        free(m->copyset);
        memset(m, 0, sizeof *m);
        sdsm_page_unlock(pg);
    }
    sdsm_page_protect(first, n, SDSM_PG_INVALID);
}

static int hlrc_init(void)
{
    H.me = sdsm_region.rank;
    H.n = sdsm_region.nprocs;
    H.ps = sdsm_region.page_size;
    pthread_mutex_init(&H.release_mtx, NULL);
    size_t wl = (size_t)sdsm_region.npages * sizeof(uint32_t);
    H.work = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    H.notices = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    H.out = calloc((size_t)H.n, sizeof *H.out);
    H.tgt = calloc((size_t)H.n, sizeof *H.tgt);
    H.tgt_n = calloc((size_t)H.n, sizeof *H.tgt_n);
    H.tgt_cap = calloc((size_t)H.n, sizeof *H.tgt_cap);
    if (H.work == MAP_FAILED || H.notices == MAP_FAILED || !H.out || !H.tgt || !H.tgt_n || !H.tgt_cap)
        return -ENOMEM;
    sdsm_msg_set_handler(SDSM_MSG_FETCH, on_fetch);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REP, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REQ, on_home_req);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REP, on_home_rep);
    sdsm_msg_set_handler(SDSM_MSG_DIFF, on_diff);
    sdsm_msg_set_handler(SDSM_MSG_DIFF_ACK, on_diff_ack);
    sdsm_msg_set_handler(SDSM_MSG_INVAL, on_inval);
    sdsm_msg_set_handler(SDSM_MSG_INVAL_ACK, on_inval_ack);
    sdsm_alloc_on_free = hlrc_free_range;
    return 0;
}

const sdsm_proto_ops_t sdsm_proto_hlrc = {
    .name = "hlrc",
    .init = hlrc_init,
    .fault = hlrc_fault,
    .release = hlrc_release,
    .acquire = hlrc_acquire,
    .barrier_done = hlrc_barrier_done,
    .free_range = hlrc_free_range,
};
