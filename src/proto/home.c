/*
 * home.c - what the home-based protocols share: fetching pages from their
 * homes (with sequential prefetch), twins and diff batches, and the home's
 * side (serving pages, applying diffs, then invalidating other copies or
 * forwarding the diffs to them).  hlrc.c, update.c and ibec.c build their
 * operations tables from these pieces; each keeps its own state.
 *
 * The HLRC release lives here too, because hlrc and update share it:
 *  - Lock release (eager, SCASH's ERC): the diffs go to the homes flagged
 *    EAGER; each home applies them, invalidates every other copy of those
 *    pages and only then acknowledges.  When unlock returns no stale copy
 *    exists anywhere, so any acquire ordered after it - through any chain of
 *    locks or barriers - sees the writes.  A rank asked to drop a page it is
 *    itself writing first sends its own diff (never losing a byte) and
 *    remembers the page as written-and-flushed.
 *  - Barrier: the diffs go to the homes (no invalidation round), and the
 *    list of pages each rank wrote rides on the barrier messages; the
 *    manager merges them and each protocol applies the merged list at
 *    barrier completion (hlrc drops stale copies, update refreshes them).
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
#include "proto/home.h"
#include "proto/proto.h"

#define BATCH_LIMIT (1u << 20) /* flush a per-home diff batch past this size */

/*
 * A home waiting for invalidation acks before it acknowledges an EAGER (or
 * FORWARD) diff.  remaining counts the acks still due plus the older
 * operations this one waits for: a copy holder removed from a page's copyset
 * by an older operation may not have dropped its copy yet, so a later diff
 * of the same page is acknowledged only after that older one is - otherwise
 * its writer could release a lock whose next holder still reads the stale
 * copy.  Operations complete in dependency order; each then releases the
 * operations waiting for it (dep).
 */
typedef struct pending {
    struct pending *next;
    uint32_t        id, seq;
    int             src;
    uint32_t        remaining;
    uint32_t       *dep, ndep, capdep; /* ids of operations waiting for this one */
    uint32_t       *pages, npages;     /* its pages (their inflight is cleared at the end) */
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
    buf_t          *fwd;          /* per-rank forwarded diffs (ibec) */
    uint8_t        *zero;         /* a page of zeros */
    buf_t           zbuf;         /* a page encoded against it (handlers only) */
    buf_t           run;          /* pages gathered for a fetch reply (handlers only) */
    pending_t      *pending;
    uint32_t        next_id;
    uint32_t       *inflight;     /* per page, under its lock: the last operation that may still
                                     be invalidating copies of it (0: none) */
    uint32_t       *deps;         /* on_diff: older operations the current one waits for */
    uint32_t        ndeps, capdeps;
    _Atomic uint32_t home_data_in; /* pages received for sdsm_set_home moves */
    uint32_t        home_data_expected; /* ...and expected so far (both only grow) */
    pthread_mutex_t lockfwd_mtx;
    buf_t           lockfwd;      /* ibec: diffL applied here since the barrier, in order */
} H;

sdsm_write_hook_t sdsm_home_write_hook;
sdsm_serve_hook_t sdsm_home_serve_hook;
int               sdsm_home_twins_at_home;

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

void sdsm_buf_reserve(buf_t *b, size_t more)
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
void sdsm_batch_add(buf_t *b, uint32_t pg, const uint8_t *twin)
{
    sdsm_buf_reserve(b, 8 + sdsm_diff_bound(H.ps));
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
        sdsm_stat_add(SDSM_ST_DIFF_RUNS_MADE, nruns);
        sdsm_stat_add(SDSM_ST_DIFF_WIRE_BYTES, 8 + (uint64_t)nb);
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
#define PREFETCH_MAX (SDSM_FETCH_RUN_MAX - 1)
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

int sdsm_home_fault(uint32_t pg, int is_write)
{
    if (!sdsm_alloc_find(pg))
        return -1;
    sdsm_stat_add(is_write > 0 ? SDSM_ST_WRITE_FAULTS : SDSM_ST_READ_FAULTS, 1);
    sdsm_page_lock(pg);
    for (;;) {
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        if (p->state == SDSM_PG_INVALID && home == H.me) {
            /* First touch at the home: read-only first, so a write takes the
             * write path below (twins and hooks in one place). */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 1, !is_write);
            continue;
        }
        p->flags &= (uint8_t)~SDSM_PGF_IDLE; /* used: the unmap time-out starts again */
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
            /* ibec twins a home page too, but only one somebody else holds. */
            int twin = home != H.me || (sdsm_home_twins_at_home && sdsm_copyset_others(pg));
            if (twin && !(p->flags & SDSM_PGF_TWIN)) {
                memcpy(sdsm_page_twin(pg), sdsm_page_rt(pg), H.ps);
                p->flags |= SDSM_PGF_TWIN;
                sdsm_stat_add(SDSM_ST_TWINS, 1);
            }
            if (sdsm_home_write_hook)
                sdsm_home_write_hook(pg);
            /* On the dirty list before it is writable: once the mapping
             * allows writes, another thread may write and release at once,
             * and its release must find the page (it cannot see that a
             * fault is still in progress here). */
            sdsm_page_mark_dirty(pg);
            sdsm_page_set(pg, SDSM_PG_READ_WRITE, home == H.me, 1);
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

int sdsm_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Does a home page need its writes announced?  Someone else holds a copy,
 * or an invalidation of one is still on its way (the holder may still read
 * its old copy: our next release must wait for that, through on_diff).
 * Page lock held. */
static int home_shared(uint32_t pg)
{
    return H.inflight[pg] || sdsm_copyset_others(pg);
}

int sdsm_copyset_others(uint32_t pg)
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

void sdsm_batch_send(buf_t *b, int home, unsigned flags, sdsm_rpc_t *r, uint32_t id)
{
    if (!b->len)
        return;
    sdsm_rpc_expect(r, 1);
    sdsm_net_send(home, SDSM_MSG_DIFF, flags, id, b->p, b->len, NULL, 0);
    b->len = 0;
}

int sdsm_home_release(sdsm_sync_kind_t kind, const uint32_t **pages, uint32_t *npages)
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
    qsort(H.work, n, sizeof *H.work, sdsm_cmp_u32);
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1); /* 1: guard until every batch is sent */
    uint32_t npend = 0; /* pages marked PENDING, kept in work[0, npend) (npend <= i) */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = H.work[i];
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg), written = 0;
        p->flags &= (uint8_t)~SDSM_PGF_DIRTY;
        if (p->state == SDSM_PG_READ_WRITE && home == H.me && !home_shared(pg)) {
            /* Nobody else holds this home page: nothing to announce, and it
             * stays writable, so the next interval's writes cost no fault.
             * A fetch of it (on_fetch) write-protects it again first. */
        } else if (p->state == SDSM_PG_READ_WRITE) {
            /* Protect first: a write by another thread after this faults
             * and waits for the lock instead of racing with the diff. */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == H.me, 1);
            p->flags &= (uint8_t)~SDSM_PGF_TWIN;
            if (home != H.me) {
                sdsm_batch_add(&H.out[home], pg, sdsm_page_twin(pg));
                p->flags |= SDSM_PGF_PENDING;
                H.work[npend++] = pg;
            }
            else if (eager)
                sdsm_batch_add(&H.out[home], pg, NULL);
            /* A page written only at its home, of which nobody else holds a
             * copy, needs no notice: whoever fetches it later gets it whole.
             * (Copysets change under the page lock, which we hold.) */
            written = home != H.me || home_shared(pg);
        } else if (p->flags & SDSM_PGF_FLUSHED) {
            p->flags &= (uint8_t)~SDSM_PGF_FLUSHED;
            if (eager && home >= 0)
                sdsm_batch_add(&H.out[home], pg, NULL);
            written = 1;
        }
        sdsm_page_unlock(pg);
        if (written)
            H.notices[nn++] = pg;
        if (home >= 0 && H.out[home].len >= BATCH_LIMIT)
            sdsm_batch_send(&H.out[home], home, eager ? SDSM_DIFF_EAGER : 0, &r, id);
    }
    for (int h = 0; h < H.n; h++)
        sdsm_batch_send(&H.out[h], h, eager ? SDSM_DIFF_EAGER : 0, &r, id);
    /* The diffs are queued on their connections: a fetch sent from now on
     * reaches each home after them, so the pages may be fetched again. */
    int woke = 0;
    for (uint32_t i = 0; i < npend; i++) {
        sdsm_page_t *p = sdsm_page(H.work[i]);
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

/* ------------------------------------------------------ home-side handlers */

/*
 * A page that is mostly zeros (fresh allocations, sparse data, a small
 * result in a big page) travels as a diff against a zero page: a few bytes
 * instead of 4 KB.  Counting zero words first keeps dense pages cheap.
 */
static int mostly_zero(const uint8_t *src)
{
    size_t zero = 0, words = H.ps / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, src + 8 * i, 8);
        zero += w == 0;
    }
    return zero * 4 >= words * 3; /* 3/4 or more zero words */
}

static void send_zero_page(int to, uint32_t pg, uint32_t seq, const uint8_t *data)
{
    uint32_t hdr[2] = {pg, 0};
    sdsm_buf_reserve(&H.zbuf, sdsm_diff_bound(H.ps));
    size_t n = sdsm_diff_encode(H.zero, data, H.ps, 1, 0, H.zbuf.p, NULL, NULL);
    sdsm_net_send(to, SDSM_MSG_FETCH_REPZ, 0, seq, hdr, 8, H.zbuf.p, n);
}

/* A run of n pages from first, gathered in H.run: one message (FETCH_RUN)
 * the receiver installs with one mprotect. */
static void send_run(int to, uint32_t first, uint32_t n, uint32_t seq)
{
    if (!n)
        return;
    uint32_t hdr[2] = {first, n > 1 ? n : 0};
    sdsm_net_send(to, n > 1 ? SDSM_MSG_FETCH_RUN : SDSM_MSG_FETCH_REP, 0, seq, hdr, 8, H.run.p,
                  (size_t)n * H.ps);
    H.run.len = 0;
}

static int on_fetch(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count == 0 || count > 1 + PREFETCH_MAX ||
        count > sdsm_region.npages - first || src == H.me)
        return -EPROTO;
    /* Dense pages are gathered into runs.  Each page is copied while its
     * lock is held, and the copy is what the reader gets (and what ibec's
     * serve hook sees): a write by this rank's threads after that is
     * announced as usual (the page is write-protected, or twinned at the
     * home). */
    uint32_t run = first, nrun = 0;
    for (uint32_t pg = first; pg < first + count; pg++) {
        /* Copy-holder and copy are recorded together, under the page lock,
         * so a release at this home sees either both or neither. */
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_READ_WRITE && !(m->flags & SDSM_PGF_TWIN)) {
            /* A home page kept writable while nobody else held it: from now
             * on its writes must be seen, and this interval's announced. */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 1, 1);
            m->flags |= SDSM_PGF_FLUSHED;
            sdsm_page_mark_dirty(pg);
        }
        if (sdsm_copyset_add(pg, src))
            sdsm_fatal("out of memory recording a copy holder");
        sdsm_buf_reserve(&H.run, H.ps);
        uint8_t *copy = H.run.p + H.run.len;
        memcpy(copy, sdsm_page_rt(pg), H.ps);
        if (sdsm_home_serve_hook)
            sdsm_home_serve_hook(pg, copy);
        if (mostly_zero(copy)) {
            send_run(src, run, nrun, h->seq); /* leaves copy where it is */
            nrun = 0;
            send_zero_page(src, pg, h->seq, copy);
        } else {
            if (nrun++ == 0)
                run = pg;
            H.run.len += H.ps;
        }
        sdsm_page_unlock(pg);
    }
    send_run(src, run, nrun, h->seq);
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

/* Forward mode (ibec): every other holder of pg gets the entry, keeps its copy. */
static void forward_targets(uint32_t pg, int writer, const uint8_t *entry, size_t len)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (!m->copyset)
        return;
    for (int r = 0; r < H.n; r++) {
        if (r == writer || r == H.me || !sdsm_copyset_has(pg, r))
            continue;
        sdsm_buf_reserve(&H.fwd[r], len);
        memcpy(H.fwd[r].p + H.fwd[r].len, entry, len);
        H.fwd[r].len += len;
        H.tgt_n[r] = 1; /* marks r as a target */
    }
}

static pending_t *pending_find(uint32_t id)
{
    for (pending_t *op = H.pending; op; op = op->next)
        if (op->id == id)
            return op;
    return NULL;
}

/* Remember that the operation being built must wait for operation id. */
static void add_dep(uint32_t id)
{
    if (!id || !pending_find(id))
        return; /* completed already */
    for (uint32_t i = 0; i < H.ndeps; i++)
        if (H.deps[i] == id)
            return;
    if (H.ndeps == H.capdeps) {
        H.capdeps = H.capdeps ? 2 * H.capdeps : 16;
        if (!(H.deps = realloc(H.deps, H.capdeps * sizeof *H.deps)))
            sdsm_fatal("out of memory");
    }
    H.deps[H.ndeps++] = id;
}

/* op's last ack or dependency arrived: acknowledge its diff and release
 * the operations that waited for it (iteratively: chains can be long). */
static void pending_complete(pending_t *op)
{
    while (op) {
        pending_t *next = NULL;
        for (pending_t **pp = &H.pending; *pp; pp = &(*pp)->next)
            if (*pp == op) {
                *pp = op->next;
                break;
            }
        sdsm_net_send(op->src, SDSM_MSG_DIFF_ACK, 0, op->seq, NULL, 0, NULL, 0);
        for (uint32_t i = 0; i < op->npages; i++) {
            sdsm_page_lock(op->pages[i]);
            if (H.inflight[op->pages[i]] == op->id)
                H.inflight[op->pages[i]] = 0;
            sdsm_page_unlock(op->pages[i]);
        }
        for (uint32_t i = 0; i < op->ndep; i++) {
            pending_t *d = pending_find(op->dep[i]);
            if (d && --d->remaining == 0) {
                if (!next) {
                    next = d;
                    continue;
                }
                pending_complete(d); /* rare: a second one ready at once */
            }
        }
        free(op->dep);
        free(op->pages);
        free(op);
        op = next;
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
            /* Under the page lock: the flags (and a home's twin, under ibec)
             * change with the fault path's. */
            sdsm_page_lock(pg);
            size_t bytes = sdsm_diff_apply(sdsm_page_rt(pg), p + off + 8, nb);
            if (sdsm_page(pg)->flags & SDSM_PGF_TWIN) /* a home that twins its pages (ibec) */
                sdsm_diff_apply(sdsm_page_twin(pg), p + off + 8, nb);
            sdsm_page_unlock(pg);
            sdsm_stat_add(SDSM_ST_DIFFS_APPLIED, 1);
            sdsm_stat_add(SDSM_ST_DIFF_BYTES_APPLIED, bytes);
        }
        if (h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD)) {
            sdsm_page_lock(pg);
            if (h->flags & SDSM_DIFF_FORWARD)
                forward_targets(pg, src, p + off, 8 + nb);
            else
                collect_copies(pg, src);
            sdsm_page_unlock(pg);
            add_dep(H.inflight[pg]); /* service thread: written only here and at completion */
        }
        off += 8 + nb;
    }
    if (h->flags & SDSM_DIFF_LOCK) { /* kept, in arrival (= lock) order, for the barrier */
        pthread_mutex_lock(&H.lockfwd_mtx);
        sdsm_buf_reserve(&H.lockfwd, h->len);
        memcpy(H.lockfwd.p + H.lockfwd.len, p, h->len);
        H.lockfwd.len += h->len;
        pthread_mutex_unlock(&H.lockfwd_mtx);
    }
    if (!(h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD))) {
        if (ack)
            sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
        return 0;
    }
    pending_t *op = NULL;
    for (int r = 0; r < H.n; r++) {
        if (!H.tgt_n[r] && !(r == 0 && H.ndeps))
            continue;
        if (!op) {
            if (!(op = calloc(1, sizeof *op)))
                sdsm_fatal("out of memory");
            *op = (pending_t){.next = H.pending, .id = ++H.next_id ? H.next_id : ++H.next_id,
                              .seq = h->seq, .src = src};
            H.pending = op;
            for (uint32_t i = 0; i < H.ndeps; i++) {
                pending_t *d = pending_find(H.deps[i]);
                if (d->ndep == d->capdep) {
                    d->capdep = d->capdep ? 2 * d->capdep : 4;
                    if (!(d->dep = realloc(d->dep, d->capdep * sizeof *d->dep)))
                        sdsm_fatal("out of memory");
                }
                d->dep[d->ndep++] = op->id;
                op->remaining++;
            }
            H.ndeps = 0;
            /* Later diffs of these pages wait for this operation. */
            for (size_t off = 0; off < h->len; off += 8 + rd32(p + off + 4))
                op->npages++;
            if (!(op->pages = malloc(op->npages * sizeof *op->pages)))
                sdsm_fatal("out of memory");
            op->npages = 0;
            for (size_t off = 0; off < h->len; off += 8 + rd32(p + off + 4)) {
                uint32_t pg = rd32(p + off);
                op->pages[op->npages++] = pg;
                sdsm_page_lock(pg);
                H.inflight[pg] = op->id;
                sdsm_page_unlock(pg);
            }
        }
        if (!H.tgt_n[r])
            continue;
        op->remaining++;
        if (h->flags & SDSM_DIFF_FORWARD)
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, 0, op->id, H.fwd[r].p, H.fwd[r].len, NULL, 0);
        else
            sdsm_net_send(r, SDSM_MSG_INVAL, 0, op->id, H.tgt[r], H.tgt_n[r] * 4u, NULL, 0);
        H.tgt_n[r] = 0;
        H.fwd[r].len = 0;
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
        if (--op->remaining == 0)
            pending_complete(op);
        return 0;
    }
    return -EPROTO;
}

/* ------------------------------------------------- copy-holder handlers */

static int on_fetch_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages ||
        (h->type == SDSM_MSG_FETCH_REPZ && sdsm_diff_check(p + 8, h->len - 8, H.ps)))
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
    if (h->type == SDSM_MSG_FETCH_REPZ) { /* checked on entry */
        memset(sdsm_page_rt(pg), 0, H.ps);
        sdsm_diff_apply(sdsm_page_rt(pg), p + 8, h->len - 8);
    } else {
        memcpy(sdsm_page_rt(pg), p + 8, H.ps);
    }
    sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 1);
    sdsm_page_unlock(pg);
    sdsm_stat_add(SDSM_ST_PAGES_FETCHED, 1);
    sdsm_stat_add(SDSM_ST_BYTES_FETCHED, h->len - 8);
    sdsm_page_wake();
    return 0;
}

/*
 * A run of pages.  Each page still waiting for its contents gets them
 * first; then the run is made readable with one mprotect (per stretch of
 * pages that were installed), and only then are the states published: a
 * thread faulting on one of these pages meanwhile waits for the state, and
 * a page is never READ_ONLY before its mapping is.
 */
static int on_fetch_run(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)src;
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count < 2 || count > SDSM_FETCH_RUN_MAX ||
        count > sdsm_region.npages - first || (size_t)count * H.ps != h->len - 8)
        return -EPROTO;
    uint8_t got[SDSM_FETCH_RUN_MAX];
    uint32_t ngot = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t pg = first + i;
        got[i] = 0;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_FETCHING && (m->flags & SDSM_PGF_STALE)) {
            m->flags &= (uint8_t)~SDSM_PGF_STALE; /* served before a barrier that made it stale */
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0);
        } else if (m->state == SDSM_PG_FETCHING) {
            memcpy(sdsm_page_rt(pg), p + 8 + (size_t)i * H.ps, H.ps);
            got[i] = 1;
            ngot++;
        } /* else: a prefetch overtaken by sdsm_free: drop it */
        sdsm_page_unlock(pg);
    }
    for (uint32_t i = 0; i < count;) {
        uint32_t j = i;
        while (j < count && got[j])
            j++;
        if (j > i)
            sdsm_page_protect(first + i, j - i, SDSM_PG_READ_ONLY);
        i = j + 1;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!got[i])
            continue;
        uint32_t pg = first + i;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_FETCHING)
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 0);
        else /* changed by this rank's threads in between: its mapping follows its state */
            sdsm_page_protect(pg, 1, (sdsm_pstate_t)m->state);
        sdsm_page_unlock(pg);
    }
    sdsm_stat_add(SDSM_ST_PAGES_FETCHED, ngot);
    sdsm_stat_add(SDSM_ST_BYTES_FETCHED, (uint64_t)ngot * H.ps);
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
                sdsm_batch_add(&early, pg, sdsm_page_twin(pg));
                m->flags = (uint8_t)((m->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
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
    if (h->flags == 2) {
        if (atomic_load(&sdsm_home_lock_fwd_pending) == 0)
            return -EPROTO;
        sdsm_count_done(&sdsm_home_lock_fwd_pending);
        return 0;
    }
    return sdsm_rpc_reply(h->seq, h->flags ? -EPROTO : 0, NULL, 0);
}

/* Apply a diff batch to our copies (and their twins, so the bytes are not
 * sent again as our own writes).  Pages we do not hold are skipped. */
void sdsm_home_apply_to_copies(const uint8_t *p, size_t len, uint8_t *twin2_base)
{
    for (size_t off = 0; off < len;) {
        uint32_t pg = rd32(p + off), nb = rd32(p + off + 4);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (nb && (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE)) {
            size_t bytes = sdsm_diff_apply(sdsm_page_rt(pg), p + off + 8, nb);
            if (m->flags & SDSM_PGF_TWIN)
                sdsm_diff_apply(sdsm_page_twin(pg), p + off + 8, nb);
            if (twin2_base && (m->flags & SDSM_PGF_TWINL))
                sdsm_diff_apply(twin2_base + ((size_t)pg << sdsm_region.shift), p + off + 8, nb);
            sdsm_stat_add(SDSM_ST_DIFFS_APPLIED, 1);
            sdsm_stat_add(SDSM_ST_DIFF_BYTES_APPLIED, bytes);
        }
        sdsm_page_unlock(pg);
        off += 8 + nb;
    }
}

uint8_t *sdsm_home_twin2; /* ibec's second twin area, for forwarded diffs */

static int on_fwd_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, H.ps))
        return -EPROTO;
    sdsm_home_apply_to_copies(p, h->len, sdsm_home_twin2);
    if (h->flags & 2) /* lock diffs forwarded at a barrier */
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 2, 0, NULL, 0, NULL, 0);
    else
        sdsm_net_send(src, SDSM_MSG_INVAL_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

/*
 * ibec, at barrier completion (service thread, epoch already moved on): send
 * the diffL this home applied since the last barrier, in the order it
 * applied them, to every other holder of each page.  They are acknowledged
 * to sdsm_home_lock_fwd_pending, which barrier_second waits for.  Sent
 * before any frame of the new epoch is handled, so they reach each holder
 * ahead of the diffB forwarded in the second phase.
 */
_Atomic uint32_t sdsm_home_lock_fwd_pending;

void sdsm_home_forward_lock_diffs(void)
{
    pthread_mutex_lock(&H.lockfwd_mtx);
    buf_t in = H.lockfwd;
    H.lockfwd = (buf_t){0};
    pthread_mutex_unlock(&H.lockfwd_mtx);
    if (!in.len)
        return;
    for (size_t off = 0; off < in.len;) {
        uint32_t pg = rd32(in.p + off), nb = rd32(in.p + off + 4);
        sdsm_page_lock(pg);
        for (int r = 0; r < H.n; r++)
            if (r != H.me && sdsm_copyset_has(pg, r)) {
                sdsm_buf_reserve(&H.fwd[r], 8 + nb);
                memcpy(H.fwd[r].p + H.fwd[r].len, in.p + off, 8 + nb);
                H.fwd[r].len += 8 + nb;
            }
        sdsm_page_unlock(pg);
        off += 8 + nb;
    }
    for (int r = 0; r < H.n; r++)
        if (H.fwd[r].len) {
            atomic_fetch_add(&sdsm_home_lock_fwd_pending, 1);
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, 2, 0, H.fwd[r].p, H.fwd[r].len, NULL, 0);
            H.fwd[r].len = 0;
        }
    free(in.p);
}

/* update: a home's new contents for a copy we were told to wait for. */
static int on_push(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages)
        return -EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state == SDSM_PG_FETCHING && (m->flags & SDSM_PGF_AWAIT_PUSH)) {
        memcpy(sdsm_page_rt(pg), p + 8, H.ps);
        if (m->pushes > 1) { /* a later barrier's push is on its way too: wait for it */
            m->pushes--;
            sdsm_page_unlock(pg);
            return 0;
        }
        m->pushes = 0;
        m->flags &= (uint8_t)~SDSM_PGF_AWAIT_PUSH;
        sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 1);
        sdsm_stat_add(SDSM_ST_PAGES_UPDATED, 1);
        sdsm_page_unlock(pg);
        sdsm_page_wake();
        return 0;
    }
    sdsm_page_unlock(pg);
    return 0; /* our copy went away meanwhile (prefetch made stale): nothing to do */
}

void sdsm_home_push(uint32_t pg, int to)
{
    uint32_t hdr[2] = {pg, 0};
    sdsm_net_send(to, SDSM_MSG_PUSH, 0, 0, hdr, 8, sdsm_page_rt(pg), H.ps);
}

static int on_leave(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n = h->len / 4;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(p + 4 * i);
        if (pg >= sdsm_region.npages)
            return -EPROTO;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->copyset)
            m->copyset[src / 64] &= ~(1ull << (src % 64));
        sdsm_page_unlock(pg);
    }
    return 0;
}

static int on_home_data(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages)
        return -EPROTO;
    memcpy(sdsm_page_rt(pg), p + 8, H.ps);
    atomic_fetch_add(&H.home_data_in, 1);
    sdsm_wake_all(&H.home_data_in);
    return 0;
}

/* ----------------------------------------------------------------- barrier */

/* Check a merged notice list: {u32 page, i32 writer}[n]. */
int sdsm_home_check_pairs(const uint8_t *pairs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t w = (int32_t)rd32(pairs + 8 * i + 4);
        if (rd32(pairs + 8 * i) >= sdsm_region.npages || w < -1 || w >= H.n)
            return -EPROTO;
    }
    return 0;
}

/*
 * Barrier completion for hlrc (push == 0) and update (push == 1).  Homes:
 * hlrc keeps only the sole writer in the copyset; update keeps everyone.
 * Other ranks: a stale copy is dropped (hlrc) or waits for the home's push
 * (update: it becomes FETCHING; the push comes after the epoch moved on).
 */
int sdsm_home_barrier_notices(const uint8_t *pairs, uint32_t n, int push)
{
    if (sdsm_home_check_pairs(pairs, n))
        return -EPROTO;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(pairs + 8 * i);
        int writer = (int32_t)rd32(pairs + 8 * i + 4);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->copyset) {
            if (!push) {
                int keep = writer >= 0 && sdsm_copyset_has(pg, writer);
                sdsm_copyset_clear(pg);
                if (keep)
                    sdsm_copyset_add(pg, writer);
            }
        } else if (m->state == SDSM_PG_READ_ONLY && writer != H.me && sdsm_page_home(pg) != H.me) {
            if (push) {
                sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 1);
                m->flags |= SDSM_PGF_AWAIT_PUSH;
                m->pushes = 1;
            } else {
                sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
                sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
            }
        } else if (m->state == SDSM_PG_FETCHING && writer != H.me && (m->flags & SDSM_PGF_AWAIT_PUSH)) {
            /* Still waiting for an earlier barrier's push, which the next
             * barrier can overtake (it comes through the manager): that push
             * may hold contents older than this barrier's writes, so wait for
             * this barrier's push too (a home's pushes arrive in order). */
            if (m->pushes == UINT16_MAX)
                sdsm_fatal("page %u: too many barriers before its home's update arrived", pg);
            m->pushes++;
        } else if (m->state == SDSM_PG_FETCHING && writer != H.me) {
            m->flags |= SDSM_PGF_STALE; /* a prefetch in flight may hold old data */
        }
        sdsm_page_unlock(pg);
    }
    return 0;
}

/* update, after the epoch moved on: homes push new contents to copy holders. */
void sdsm_home_push_notices(const uint8_t *pairs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(pairs + 8 * i);
        int writer = (int32_t)rd32(pairs + 8 * i + 4);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->copyset)
            for (int r = 0; r < H.n; r++)
                if (r != H.me && r != writer && sdsm_copyset_has(pg, r))
                    sdsm_home_push(pg, r);
        sdsm_page_unlock(pg);
    }
}

/* --------------------------------------------- explicit consistency control */

/*
 * Send our changes to [first, first + n) to their homes now (flags: 0, or
 * SDSM_DIFF_FORWARD for ibec) and wait; with drop, also give up our copies.
 * The pages stay on the dirty list marked FLUSHED, so the next barrier still
 * announces them.
 */
int sdsm_home_flush_range(uint32_t first, uint32_t n, int drop, unsigned flags)
{
    pthread_mutex_lock(&H.release_mtx);
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    for (uint32_t pg = first; pg < first + n; pg++) {
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        if (p->state == SDSM_PG_READ_WRITE && (home != H.me || (flags & SDSM_DIFF_FORWARD))) {
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == H.me, 1);
            if (p->flags & SDSM_PGF_TWIN) {
                sdsm_batch_add(&H.out[home], pg, sdsm_page_twin(pg));
                /* Send now, under the lock: no fetch of ours may overtake it. */
                sdsm_batch_send(&H.out[home], home, flags, &r, id);
            }
            p->flags = (uint8_t)((p->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
        }
        if (drop && home != H.me && p->state == SDSM_PG_READ_ONLY) {
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
            /* Tell the home we left (ibec/update keep copysets long-lived). */
            sdsm_net_send(home, SDSM_MSG_LEAVE, 0, 0, &pg, 4, NULL, 0);
        }
        sdsm_page_unlock(pg);
    }
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    pthread_mutex_unlock(&H.release_mtx);
    return r.status;
}

/*
 * sdsm_bcast on a rank other than the root: forget this rank's writes to
 * [addr, addr + len) that its homes have not seen yet (the bytes go back to
 * the twin's), since the broadcast overrides them.  Sent at the bcast's
 * first barrier instead, they could reach the root's home pages before the
 * root copied its contents, and the root would broadcast them.  A home's
 * writes to its own pages (no twin) are its master copy already.
 */
void sdsm_home_discard(const uint8_t *addr, size_t len)
{
    for (size_t done = 0; done < len;) {
        uint32_t pg = 0;
        sdsm_region_page_of(addr + done, &pg);
        size_t off = (size_t)((addr + done) - sdsm_page_app(pg));
        size_t chunk = H.ps - off < len - done ? H.ps - off : len - done;
        sdsm_page_lock(pg);
        /* (ibec's writes bound to a lock, TWINL, are left to its lock's chain.) */
        if ((sdsm_page(pg)->flags & (SDSM_PGF_TWIN | SDSM_PGF_TWINL)) == SDSM_PGF_TWIN)
            memcpy(sdsm_page_rt(pg) + off, sdsm_page_twin(pg) + off, chunk);
        sdsm_page_unlock(pg);
        done += chunk;
    }
}

/*
 * Overwrite the homes' copies of [addr, addr + len) with data (a snapshot of
 * the same range) and invalidate every other copy (EAGER), then wait.
 */
int sdsm_home_overwrite(const uint8_t *addr, size_t len, const uint8_t *data)
{
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    buf_t b = {0};
    size_t done = 0;
    while (done < len) {
        uint32_t pg = 0;
        sdsm_region_page_of(addr + done, &pg);
        size_t off = (size_t)((addr + done) - sdsm_page_app(pg));
        size_t chunk = H.ps - off < len - done ? H.ps - off : len - done;
        int home = sdsm_page_home(pg);
        if (home < 0) /* first touch nobody claimed: claim it by touching it */
            home = (sdsm_home_fault(pg, 0), sdsm_page_home(pg));
        uint8_t run[12], *q = run;
        for (size_t v = off; ; v >>= 7) { /* varint gap */
            *q++ = (uint8_t)(v >= 0x80 ? (v | 0x80) : v);
            if (v < 0x80)
                break;
        }
        for (size_t v = chunk; ; v >>= 7) { /* varint length */
            *q++ = (uint8_t)(v >= 0x80 ? (v | 0x80) : v);
            if (v < 0x80)
                break;
        }
        uint32_t hdr[2] = {pg, (uint32_t)((size_t)(q - run) + chunk)};
        sdsm_buf_reserve(&b, 8 + (size_t)(q - run) + chunk);
        memcpy(b.p, hdr, 8);
        memcpy(b.p + 8, run, (size_t)(q - run));
        memcpy(b.p + 8 + (q - run), data + done, chunk);
        b.len = 8 + (size_t)(q - run) + chunk;
        sdsm_batch_send(&b, home, SDSM_DIFF_EAGER, &r, id);
        done += chunk;
    }
    free(b.p);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    return r.status;
}

/*
 * Apply home moves decided at a barrier: {u32 first, u32 count, i32 rank}[n],
 * already validated.  Every rank records the new homes and drops its copies;
 * old homes send the contents to the new ones; then wait for what we expect.
 */
void sdsm_home_apply_moves(const uint8_t *moves, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = rd32(moves + 12 * i), count = rd32(moves + 12 * i + 4);
        int to = (int32_t)rd32(moves + 12 * i + 8);
        for (uint32_t pg = first; pg < first + count; pg++) {
            sdsm_page_lock(pg);
            sdsm_page_t *m = sdsm_page(pg);
            int old = sdsm_page_home(pg);
            if (old == to) {
                sdsm_page_unlock(pg);
                continue;
            }
            if (old == H.me) {
                uint32_t hdr[2] = {pg, 0};
                sdsm_net_send(to, SDSM_MSG_HOME_DATA, 0, 0, hdr, 8, sdsm_page_rt(pg), H.ps);
                free(m->copyset);
                m->copyset = NULL;
            }
            if (m->state != SDSM_PG_INVALID) { /* every copy restarts from the new home */
                m->state = SDSM_PG_INVALID;
                sdsm_page_protect(pg, 1, SDSM_PG_INVALID);
            }
            m->flags &= (uint8_t)~(SDSM_PGF_TWIN | SDSM_PGF_IDLE | SDSM_PGF_AWAIT_PUSH);
            m->pushes = 0;
            m->home1 = to + 1;
            if (to == H.me)
                H.home_data_expected++; /* may have arrived already: counts only grow */
            sdsm_page_unlock(pg);
        }
    }
    uint32_t v;
    while ((int32_t)((v = atomic_load(&H.home_data_in)) - H.home_data_expected) < 0)
        sdsm_wait_change(&H.home_data_in, v);
}

/* Operations hlrc and update share (no lock-bound data, no second phase). */
uint32_t sdsm_home_no_stamp(int id) { (void)id; return 0; }
uint32_t sdsm_home_no_flags(void) { return 0; }
void sdsm_home_no_second(void) {}
void sdsm_home_no_acquire(sdsm_sync_kind_t kind) { (void)kind; }
int sdsm_home_flush(uint32_t first, uint32_t n, int drop) { return sdsm_home_flush_range(first, n, drop, 0); }

int sdsm_home_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    (void)id;
    *payload = NULL;
    *len = 0;
    *stamp = 0;
    return sdsm_home_release(SDSM_SYNC_LOCK, NULL, NULL);
}

int sdsm_home_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    (void)id, (void)chain;
    return len ? -EPROTO : 0; /* their grants carry nothing */
}

/*
 * The range's pages start again as new (INVALID, no home known, no copyset,
 * no flags): the address range may be allocated again.  One lock round trip
 * per stripe rather than per page (a 1 GiB block has 262,144 pages), and
 * pages never touched are only read, so their metadata stays unallocated.
 */
void sdsm_home_free_range(uint32_t first, uint32_t n)
{
    uint64_t end = (uint64_t)first + n;
    for (uint32_t s = 0; s < SDSM_PAGE_STRIPES && s < n; s++) {
        uint32_t pg0 = first + s;
        sdsm_page_lock(pg0);
        for (uint64_t pg = pg0; pg < end; pg += SDSM_PAGE_STRIPES) {
            sdsm_page_t *m = sdsm_page((uint32_t)pg);
            if (m->state || m->flags || m->home1 || m->copyset) {
                free(m->copyset);
                memset(m, 0, sizeof *m);
            }
        }
        sdsm_page_unlock(pg0);
    }
    sdsm_page_protect(first, n, SDSM_PG_INVALID);
}

int sdsm_home_init(void)
{
    H.me = sdsm_region.rank;
    H.n = sdsm_region.nprocs;
    H.ps = sdsm_region.page_size;
    pthread_mutex_init(&H.release_mtx, NULL);
    pthread_mutex_init(&H.lockfwd_mtx, NULL);
    size_t wl = (size_t)sdsm_region.npages * sizeof(uint32_t);
    H.work = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    H.notices = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    H.inflight = mmap(NULL, wl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    H.out = calloc((size_t)H.n, sizeof *H.out);
    H.fwd = calloc((size_t)H.n, sizeof *H.fwd);
    H.zero = calloc(1, H.ps);
    H.tgt = calloc((size_t)H.n, sizeof *H.tgt);
    H.tgt_n = calloc((size_t)H.n, sizeof *H.tgt_n);
    H.tgt_cap = calloc((size_t)H.n, sizeof *H.tgt_cap);
    if (H.work == MAP_FAILED || H.notices == MAP_FAILED || H.inflight == MAP_FAILED || !H.out || !H.fwd || !H.zero || !H.tgt || !H.tgt_n ||
        !H.tgt_cap)
        return -ENOMEM;
    sdsm_home_write_hook = NULL;
    sdsm_home_serve_hook = NULL;
    sdsm_home_twins_at_home = 0;
    sdsm_msg_set_handler(SDSM_MSG_FETCH, on_fetch);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REP, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REPZ, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_RUN, on_fetch_run);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REQ, on_home_req);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REP, on_home_rep);
    sdsm_msg_set_handler(SDSM_MSG_DIFF, on_diff);
    sdsm_msg_set_handler(SDSM_MSG_DIFF_ACK, on_diff_ack);
    sdsm_msg_set_handler(SDSM_MSG_INVAL, on_inval);
    sdsm_msg_set_handler(SDSM_MSG_INVAL_ACK, on_inval_ack);
    sdsm_msg_set_handler(SDSM_MSG_FWD_DIFF, on_fwd_diff);
    sdsm_msg_set_handler(SDSM_MSG_PUSH, on_push);
    sdsm_msg_set_handler(SDSM_MSG_LEAVE, on_leave);
    sdsm_msg_set_handler(SDSM_MSG_HOME_DATA, on_home_data);
    sdsm_alloc_on_free = sdsm_home_free_range;
    return 0;
}
