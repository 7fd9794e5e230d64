/*
 * inval.c - diffs arriving at a home, and what they do to the other copies:
 * applied to the home's copy, then (EAGER) every other copy is invalidated
 * or (FORWARD, ibec) the diff is forwarded to every copy holder, and only
 * when those are acknowledged - and any older operation on the same pages
 * is complete - is the writer acknowledged.  The copy holder's side too: an
 * invalidation of a page this rank is writing first sends its diff home,
 * so no byte is lost; forwarded diffs are applied to copies and twins.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/trace.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "proto/proto.h"

static void add_target(int r, uint32_t pg)
{
    if (hs.tgt_n[r] == hs.tgt_cap[r]) {
        hs.tgt_cap[r] = hs.tgt_cap[r] ? 2 * hs.tgt_cap[r] : 256;
        if (!(hs.tgt[r] = realloc(hs.tgt[r], hs.tgt_cap[r] * sizeof(uint32_t))))
            sdsm_fatal("out of memory");
    }
    hs.tgt[r][hs.tgt_n[r]++] = pg;
}

/* Collect and remove every copy holder of pg except the writer; whether
 * there was one. */
static int collect_copies(uint32_t pg, int writer)
{
    sdsm_page_t *m = sdsm_page(pg);
    int any = 0;
    if (!m->copyset)
        return 0;
    for (size_t w = 0; w < sdsm_region.copyset_words; w++) {
        uint64_t bits = m->copyset[w];
        while (bits) {
            int r = (int)(w * 64 + (size_t)__builtin_ctzll(bits));
            bits &= bits - 1;
            if (r != writer && r != hs.me) {
                add_target(r, pg);
                m->copyset[w] &= ~(1ull << (r % 64));
                any = 1;
            }
        }
    }
    return any;
}

/* Forward mode (ibec): every other holder of pg gets the entry, keeps its copy. */
static void forward_targets(uint32_t pg, int writer, const uint8_t *entry, size_t len)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (!m->copyset)
        return;
    for (int r = 0; r < hs.n; r++) {
        if (r == writer || r == hs.me || !sdsm_copyset_has(pg, r))
            continue;
        sdsm_buf_reserve(&hs.fwd[r], len);
        memcpy(hs.fwd[r].p + hs.fwd[r].len, entry, len);
        hs.fwd[r].len += len;
        hs.tgt_n[r] = 1; /* marks r as a target */
    }
}

static pending_t *pending_find(uint32_t id)
{
    for (pending_t *op = hs.pending; op; op = op->next)
        if (op->id == id)
            return op;
    return NULL;
}

/* Remember that the operation being built must wait for operation id. */
static void add_dep(uint32_t id)
{
    if (!id || !pending_find(id))
        return; /* completed already */
    for (uint32_t i = 0; i < hs.ndeps; i++)
        if (hs.deps[i] == id)
            return;
    if (hs.ndeps == hs.capdeps) {
        hs.capdeps = hs.capdeps ? 2 * hs.capdeps : 16;
        if (!(hs.deps = realloc(hs.deps, hs.capdeps * sizeof *hs.deps)))
            sdsm_fatal("out of memory");
    }
    hs.deps[hs.ndeps++] = id;
}

/* The operation being built (op) waits for the older ones add_dep noted. */
static void wait_deps(pending_t *op)
{
    for (uint32_t i = 0; i < hs.ndeps; i++) {
        pending_t *d = pending_find(hs.deps[i]);
        if (d->ndep == d->capdep) {
            d->capdep = d->capdep ? 2 * d->capdep : 4;
            if (!(d->dep = realloc(d->dep, d->capdep * sizeof *d->dep)))
                sdsm_fatal("out of memory");
        }
        d->dep[d->ndep++] = op->id;
        op->remaining++;
    }
    hs.ndeps = 0;
}

/* A new operation, the newest (id): when complete it acknowledges src's
 * diff seq (src -1: nobody to acknowledge) and clears the inflight marks
 * of pages[0, npages) (malloc'd, op's now).  It waits for the older
 * operations add_dep noted. */
static pending_t *pending_open(uint32_t id, uint32_t seq, int src, uint32_t *pages, uint32_t npages)
{
    pending_t *op = calloc(1, sizeof *op);
    if (!op)
        sdsm_fatal("out of memory");
    hs.next_id = id;
    *op = (pending_t){.next = hs.pending, .id = id, .seq = seq, .src = src, .pages = pages, .npages = npages};
    hs.pending = op;
    wait_deps(op);
    return op;
}

/* INVAL to rank r, part of op (one more acknowledgement due): its copies
 * of the n pages go. */
static void send_inval(pending_t *op, int r, const uint32_t *pages, uint32_t n)
{
    op->remaining++;
    sdsm_net_send(r, SDSM_MSG_INVAL, 0, op->id, pages, n * 4u, NULL, 0);
}

/* op's last ack or dependency arrived: acknowledge its diff and release
 * the operations that waited for it (iteratively: chains can be long). */
static void pending_complete(pending_t *op)
{
    while (op) {
        pending_t *next = NULL;
        for (pending_t **pp = &hs.pending; *pp; pp = &(*pp)->next)
            if (*pp == op) {
                *pp = op->next;
                break;
            }
        if (op->src >= 0) /* (sdsm_home_inval_copies: nobody to acknowledge) */
            sdsm_net_send(op->src, SDSM_MSG_DIFF_ACK, 0, op->seq, NULL, 0, NULL, 0);
        for (uint32_t i = 0; i < op->npages; i++) {
            sdsm_page_lock(op->pages[i]);
            if (hs.inflight[op->pages[i]] == op->id)
                hs.inflight[op->pages[i]] = 0;
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

/*
 * Page lock held: a diff entry applied to a page and to its twins, so those
 * bytes are not taken for this rank's own writes.  twinB (TWIN) is the
 * home's under ibec, or a copy holder's; twinL (TWINL, in twin2_base) is
 * ibec's for the critical section in progress here: a diff that lands in its
 * middle - another rank's diffL at this home, say - belongs to other locks,
 * and left out of twinL it would travel again with this section's diffL,
 * where it overwrites newer values of those locks' data at the acquirer.
 */
void sdsm_home_apply_entry(uint32_t pg, const uint8_t *diff, uint32_t nb, uint8_t *twin2_base)
{
    uint64_t t0 = sdsm_trace_t0();
    sdsm_page_t *m = sdsm_page(pg);
    size_t bytes = sdsm_diff_apply(sdsm_page_rt(pg), diff, nb);
    if (m->flags & SDSM_PGF_TWIN)
        sdsm_diff_apply(sdsm_page_twin(pg), diff, nb);
    if (twin2_base && (m->flags & SDSM_PGF_TWINL))
        sdsm_diff_apply(twin2_base + ((size_t)pg << sdsm_region.shift), diff, nb);
    if (m->home1 == hs.me + 1) /* another rank writes it: no write run of the home's opens it */
        hs.foreign[pg] = 1;
    sdsm_stat_add(SDSM_ST_DIFFS_APPLIED, 1);
    sdsm_stat_add(SDSM_ST_DIFF_BYTES_APPLIED, bytes);
    SDSM_TRACE(SDSM_TR_DIFF_APPLIED, t0, pg, bytes, 0);
}

sdsm_check_hook_t sdsm_home_check_hook;

static unsigned fwd_writer_flags(int src)
{
    return sdsm_home_check_hook && src <= FWD_WRITER_MAX ? FWD_WRITER | (unsigned)src << 3 : 0;
}

/* A diff batch that cannot be taken: refused (DIFF_ACK with flags 1), or,
 * unacknowledged, fatal.  Returns 1 if refused. */
static int diff_refused(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int ack = !(h->flags & SDSM_DIFF_NOACK);
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, hs.ps)) {
        /* Unacknowledged (a barrier's diffs to its manager, a diff sent
         * early): the writer would never learn its writes were lost. */
        if (!ack)
            sdsm_fatal("rank %d sent an invalid diff batch (%u bytes): its writes cannot be applied", src,
                       h->len);
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 1, h->seq, NULL, 0, NULL, 0);
        return 1;
    }
    int held = (h->flags & SDSM_DIFF_HOLD) != 0;
    if (held && ((h->flags & (SDSM_DIFF_FORWARD | SDSM_DIFF_LOCK)) || !(h->flags >> 8) ||
                 (h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_NOACK)) == (SDSM_DIFF_EAGER | SDSM_DIFF_NOACK))) {
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 1, h->seq, NULL, 0, NULL, 0);
        return 1;
    }
    return 0;
}

/* Another rank's barrier diffs of pg landed (SDSM_HOME_TWINS): every copy
 * held now is older than these writes. */
static void mark_unannounced(int src, uint32_t pg)
{
    sdsm_page_lock(pg);
    uint64_t *st = sdsm_home_unann_stale(pg);
    const uint64_t *cs = sdsm_page(pg)->copyset;
    for (size_t w = 0; cs && w < sdsm_region.copyset_words; w++)
        st[w] |= cs[w];
    st[src / 64] &= ~(1ull << (src % 64));
    sdsm_page_unlock(pg);
    if (!hs.unannounced[pg]) {
        hs.unannounced[pg] = 1;
        sdsm_buf_reserve(&hs.unann_list, 4);
        memcpy(hs.unann_list.p + hs.unann_list.len, &pg, 4);
        hs.unann_list.len += 4;
    }
}

/* EAGER or FORWARD, the entry e of pg: the other copies are collected to
 * be invalidated (or the entry to be forwarded to them), and the operation
 * id being built waits for an older one still invalidating pg. */
static void collect_entry(int src, const sdsm_hdr_t *h, const uint8_t *e, uint32_t pg, uint32_t nb,
                          uint32_t id)
{
    sdsm_page_lock(pg);
    /* service thread: inflight is written only here and at completion */
    uint32_t before = hs.inflight[pg];
    if (h->flags & SDSM_DIFF_FORWARD) {
        forward_targets(pg, src, e, 8 + nb);
    } else if (collect_copies(pg, src) || (before && pending_find(before))) {
        /* In flight from the moment the copies leave the copyset,
         * under the same lock: a release at this home in between
         * would find nobody holding the page, announce nothing and
         * not wait for the invalidations (release.c's home_shared),
         * and a lock it then passes on would let a holder read its
         * old copy. */
        hs.inflight[pg] = id;
    }
    sdsm_page_unlock(pg);
    add_dep(before);
}

/* One entry e of src's batch: applied here, and what it means for the
 * other copies noted. */
static void land_entry(int src, const sdsm_hdr_t *h, const uint8_t *e, uint32_t id)
{
    uint32_t pg = rd32(e), nb = rd32(e + 4);
    /* A home's own diffL was made from this very page: applying it
     * could only undo what this rank's threads wrote since, outside any
     * critical section.  It is kept for the barrier all the same. */
    if (nb && !(src == hs.me && (h->flags & SDSM_DIFF_LOCK))) {
        /* Under the page lock: the flags (and a home's twins, under ibec)
         * change with the fault path's. */
        sdsm_page_lock(pg);
        sdsm_home_apply_entry(pg, e + 8, nb, sdsm_home_twin2);
        /* Written by others too (a flag array): not hot, so the home's
         * own writes fault and twin it again (open.c, open_write). */
        if (src != hs.me)
            sdsm_home_hot_clear(pg);
        sdsm_page_unlock(pg);
    }
    if (nb && src != hs.me && sdsm_home_twins_shared && !(h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD)))
        mark_unannounced(src, pg);
    if (src == hs.me && !sdsm_home_twins_at_home) {
        /* The home's own notice: its writes are announced now, with
         * the invalidations below (release.c says why the twin stays
         * until here). */
        sdsm_page_lock(pg);
        sdsm_page(pg)->flags &= (uint8_t)~SDSM_PGF_TWIN;
        hs.exposed[pg] = 0;
        sdsm_page_unlock(pg);
    }
    if (nb && (h->flags & SDSM_DIFF_FORWARD) && sdsm_home_check_hook)
        sdsm_home_check_hook(pg, src);
    if (h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD))
        collect_entry(src, h, e, pg, nb, id);
}

/* ibec: a diffL batch is kept, in arrival (= lock) order, for the barrier
 * (lockfwd.c). */
static void keep_lock_diffs(int src, const uint8_t *p, uint32_t len)
{
    pthread_mutex_lock(&hs.lockfwd_mtx);
    uint32_t rec[2] = {(uint32_t)src, len};
    sdsm_buf_reserve(&hs.lockfwd, 8 + len);
    memcpy(hs.lockfwd.p + hs.lockfwd.len, rec, 8);
    memcpy(hs.lockfwd.p + hs.lockfwd.len + 8, p, len);
    hs.lockfwd.len += 8 + len;
    pthread_mutex_unlock(&hs.lockfwd_mtx);
}

/* EAGER or FORWARD: the invalidations (or forwards) collected go out as
 * operation id, which acknowledges src's diff once they and the older
 * operations it waits for are done; with none, src is acknowledged now. */
static void start_operation(int src, const sdsm_hdr_t *h, const uint8_t *p, uint32_t id)
{
    pending_t *op = NULL;
    for (int r = 0; r < hs.n; r++) {
        if (!hs.tgt_n[r] && !(r == 0 && hs.ndeps))
            continue;
        if (!op) {
            op = pending_open(id, h->seq, src, NULL, 0);
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
                hs.inflight[pg] = op->id;
                sdsm_page_unlock(pg);
            }
        }
        if (!hs.tgt_n[r])
            continue;
        if (h->flags & SDSM_DIFF_FORWARD) {
            op->remaining++;
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, fwd_writer_flags(src), op->id, hs.fwd[r].p, hs.fwd[r].len,
                          NULL, 0);
        } else {
            send_inval(op, r, hs.tgt[r], hs.tgt_n[r]);
        }
        hs.tgt_n[r] = 0;
        hs.fwd[r].len = 0;
    }
    if (!op)
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
}

static int on_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int ack = !(h->flags & SDSM_DIFF_NOACK);
    if (diff_refused(src, h, p))
        return SDSM_EPROTO;
    /* The id of the operation this diff may become (it does if it has
     * copies to invalidate or older operations to wait for). */
    uint32_t id = hs.next_id + 1 ? hs.next_id + 1 : 1;
    int held = (h->flags & SDSM_DIFF_HOLD) != 0;
    int shielded = (sdsm_home_twins_shared || held) && src != hs.me;
    buf_t got = {0};
    if (shielded)
        sdsm_home_shield_on(p, h->len, &got);
    for (size_t off = 0; off < h->len; off += 8 + rd32(p + off + 4))
        land_entry(src, h, p + off, id);
    if (held)
        sdsm_home_hold(src, h->flags >> 8, !(h->flags & SDSM_DIFF_EAGER), p, h->len, &got);
    else if (shielded)
        sdsm_home_shield_off(got.p, got.len);
    free(got.p);
    if (h->flags & SDSM_DIFF_LOCK) /* kept, in arrival (= lock) order, for the barrier */
        keep_lock_diffs(src, p, h->len);
    if (!(h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD))) {
        if (ack)
            sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
        return 0;
    }
    start_operation(src, h, p, id);
    return 0;
}

/*
 * Service thread, SDSM_HOME_TWINS: rank dst is about to be served a home
 * page holding writes of this rank's it has not released (a page nobody
 * else held when it was written, so it has no twin; serve.c).  Whoever
 * reads that must also see what this rank's threads wrote before it, so
 * the home's twinned pages stop hiding their writes: every other copy of
 * them goes (an invalidation, in flight for this home's next release as
 * any other, inflight), sent to each holder ahead of anything it is
 * served next on the same connection, and their twins go, so they are
 * served as they are from now on.  dst's copies of skip (the pages it
 * asked for) are left alone: they are being replaced.
 */
void sdsm_home_inval_copies(int dst, const uint32_t *skip, uint32_t nskip)
{
    /* Every twinned page: not only those on the dirty list - a barrier's
     * release keeps its pages' twins until the barrier completes. */
    pthread_mutex_lock(&hs.twin_mtx);
    uint32_t nd = (uint32_t)(hs.twins.len / 4), *list = nd ? malloc((size_t)nd * 4) : NULL;
    if (list) {
        memcpy(list, hs.twins.p, (size_t)nd * 4);
        for (uint32_t i = 0; i < nd; i++)
            hs.twin_listed[list[i]] = 0;
        hs.twins.len = 0;
    }
    pthread_mutex_unlock(&hs.twin_mtx);
    if (!list)
        return;
    uint32_t n = 0;
    uint32_t id = hs.next_id + 1 ? hs.next_id + 1 : 1;
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t pg = list[i];
        int skipped = 0;
        for (uint32_t k = 0; k < nskip && !skipped; k++)
            skipped = skip[k] == pg;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        uint32_t before = 0;
        if ((m->flags & SDSM_PGF_TWIN) && sdsm_page_home(pg) == hs.me) {
            m->flags &= (uint8_t)~SDSM_PGF_TWIN;
            if (collect_copies(pg, skipped ? dst : -1)) {
                before = hs.inflight[pg];
                hs.inflight[pg] = id;
                list[n++] = pg;
            }
        }
        sdsm_page_unlock(pg);
        add_dep(before); /* a later release here waits for the older ones too */
    }
    pending_t *op = NULL;
    for (int r = 0; r < hs.n; r++) {
        if (!hs.tgt_n[r])
            continue;
        if (!op)
            op = pending_open(id, 0, -1, list, n);
        send_inval(op, r, hs.tgt[r], hs.tgt_n[r]);
        hs.tgt_n[r] = 0;
    }
    if (op) {
        sdsm_stat_add(SDSM_ST_TWIN_GUARDS, 1);
        return; /* list is op's now */
    }
    hs.ndeps = 0;
    free(list);
}

/*
 * Service thread, SDSM_HOME_TWINS: rank dst is about to be served a page
 * holding diffs of another rank's barrier release, which left the other
 * copies valid until the barrier completes (release.c).  A thread of dst
 * that spins on a flag without synchronizing could see that writer's flag
 * now, so dst's copies of the other pages the writers' barrier diffs
 * changed here go first (as sdsm_home_inval_copies does for this home's
 * own writes).  dst's copies of skip are being replaced.
 */
void sdsm_home_inval_unannounced(int dst, const uint32_t *skip, uint32_t nskip)
{
    uint32_t n = 0, kept = 0, *list = NULL;
    uint32_t id = hs.next_id + 1 ? hs.next_id + 1 : 1;
    for (size_t off = 0; off < hs.unann_list.len; off += 4) {
        uint32_t pg = rd32(hs.unann_list.p + off);
        if (!hs.unannounced[pg])
            continue;
        memcpy(hs.unann_list.p + 4 * kept++, &pg, 4);
        int skipped = 0;
        for (uint32_t k = 0; k < nskip && !skipped; k++)
            skipped = skip[k] == pg;
        sdsm_page_lock(pg);
        uint32_t before = 0;
        uint64_t *st = sdsm_home_unann_stale(pg), bit = 1ull << (dst % 64);
        /* Only a copy older than those diffs: one fetched since is new
         * enough (and two such pages read in turn would otherwise take
         * each other's copy away for ever). */
        if (!skipped && (st[dst / 64] & bit) && sdsm_copyset_has(pg, dst)) {
            st[dst / 64] &= ~bit;
            sdsm_page(pg)->copyset[dst / 64] &= ~(1ull << (dst % 64));
            before = hs.inflight[pg];
            hs.inflight[pg] = id;
            if (!(n & (n - 1)) && !(list = realloc(list, (n ? 2 * n : 1) * sizeof *list)))
                sdsm_fatal("out of memory");
            list[n++] = pg;
        }
        sdsm_page_unlock(pg);
        add_dep(before);
    }
    hs.unann_list.len = 4 * (size_t)kept;
    if (!n) {
        hs.ndeps = 0;
        return;
    }
    pending_t *op = pending_open(id, 0, -1, list, n);
    send_inval(op, dst, list, n);
    sdsm_stat_add(SDSM_ST_TWIN_GUARDS, 1);
}

static int on_inval_ack(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    for (pending_t **pp = &hs.pending; *pp; pp = &(*pp)->next) {
        pending_t *op = *pp;
        if (op->id != h->seq)
            continue;
        if (--op->remaining == 0)
            pending_complete(op);
        return 0;
    }
    return SDSM_EPROTO;
}

void sdsm_home_inval_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_DIFF, on_diff);
    sdsm_msg_set_handler(SDSM_MSG_INVAL_ACK, on_inval_ack);
}
