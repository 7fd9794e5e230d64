/*
 * inval.c - diffs arriving at a home, and what they do to the other copies:
 * applied to the home's copy, then (EAGER) every other copy is invalidated
 * or (FORWARD, ibec) the diff is forwarded to every copy holder, and only
 * when those are acknowledged - and any older operation on the same pages
 * is complete - is the writer acknowledged.  The copy holder's side too: an
 * invalidation of a page this rank is writing first sends its diff home,
 * so no byte is lost; forwarded diffs are applied to copies and twins.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
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
    if (H.tgt_n[r] == H.tgt_cap[r]) {
        H.tgt_cap[r] = H.tgt_cap[r] ? 2 * H.tgt_cap[r] : 256;
        if (!(H.tgt[r] = realloc(H.tgt[r], H.tgt_cap[r] * sizeof(uint32_t))))
            sdsm_fatal("out of memory");
    }
    H.tgt[r][H.tgt_n[r]++] = pg;
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
            if (r != writer && r != H.me) {
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

/* This rank's dirty list as it is (malloc'd, *n entries), or NULL if empty. */
static uint32_t *dirty_snapshot(uint32_t *n)
{
    uint32_t nd = sdsm_page_dirty_count();
    uint32_t *list = nd ? malloc((size_t)nd * sizeof *list) : NULL;
    *n = list ? sdsm_page_dirty_copy(list, nd) : 0;
    return list;
}

/* The operation being built (op) waits for the older ones add_dep noted. */
static void wait_deps(pending_t *op)
{
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
        if (op->src >= 0) /* (sdsm_home_inval_copies: nobody to acknowledge) */
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

/*
 * Page lock held: a diff entry applied to a page and to its twins, so those
 * bytes are not taken for this rank's own writes.  twinB (TWIN) is the
 * home's under ibec, or a copy holder's; twinL (TWINL, in twin2_base) is
 * ibec's for the critical section in progress here: a diff that lands in its
 * middle - another rank's diffL at this home, say - belongs to other locks,
 * and left out of twinL it would travel again with this section's diffL,
 * where it overwrites newer values of those locks' data at the acquirer.
 */
static void apply_entry(uint32_t pg, const uint8_t *diff, uint32_t nb, uint8_t *twin2_base)
{
    uint64_t t0 = sdsm_trace_t0();
    sdsm_page_t *m = sdsm_page(pg);
    size_t bytes = sdsm_diff_apply(sdsm_page_rt(pg), diff, nb);
    if (m->flags & SDSM_PGF_TWIN)
        sdsm_diff_apply(sdsm_page_twin(pg), diff, nb);
    if (twin2_base && (m->flags & SDSM_PGF_TWINL))
        sdsm_diff_apply(twin2_base + ((size_t)pg << sdsm_region.shift), diff, nb);
    sdsm_stat_add(SDSM_ST_DIFFS_APPLIED, 1);
    sdsm_stat_add(SDSM_ST_DIFF_BYTES_APPLIED, bytes);
    SDSM_TRACE(SDSM_TR_DIFF_APPLIED, t0, pg, bytes, 0);
}

sdsm_check_hook_t sdsm_home_check_hook;

/* FWD_DIFF flags: 2 marks diffL forwarded at a barrier; in check mode a
 * forwarded diffB names its writer (FWD_WRITER | writer << 3), so the
 * holder can say who wrote what it read.  One writer per message: a
 * forward carries one arriving batch. */
enum { FWD_WRITER = 4, FWD_WRITER_MAX = 0xffff >> 3 };

static unsigned fwd_writer_flags(int src)
{
    return sdsm_home_check_hook && src <= FWD_WRITER_MAX ? FWD_WRITER | (unsigned)src << 3 : 0;
}

/*
 * SDSM_HOME_TWINS: this home's own threads read its pages directly, and a
 * batch of another rank's diffs lands page by page, run by run: a thread
 * polling a flag here could see the flag's new value before the data the
 * writer wrote before it (in a later page of the batch, or later in the
 * page).  So while the batch is applied its pages give no access; a thread
 * that touches one waits in the fault path (home_fault) until they all
 * hold the new contents.  Shields are counted per page: a held batch
 * (DIFF_HOLD, below) keeps its pages shielded across other batches.
 * shield_on appends the pages it shielded to got (u32[]).
 */
static void shield_on(const uint8_t *p, uint32_t len, buf_t *got)
{
    for (size_t off = 0; off < len; off += 8 + rd32(p + off + 4)) {
        uint32_t pg = rd32(p + off);
        sdsm_page_lock(pg);
        /* (Never main's stack, announced: the master runs on it, maybe
         * this very thread, leading the event loop from inside a wait.) */
        if (sdsm_page_home(pg) == H.me && !sdsm_page_announced(pg)) {
            if (H.applying[pg]++ == 0)
                sdsm_page_protect(pg, 1, SDSM_PG_INVALID);
            sdsm_buf_reserve(got, 4);
            memcpy(got->p + got->len, &pg, 4);
            got->len += 4;
        }
        sdsm_page_unlock(pg);
    }
}

static void shield_off(const uint8_t *pages, size_t len)
{
    for (size_t off = 0; off < len; off += 4) {
        uint32_t pg = rd32(pages + off);
        sdsm_page_lock(pg);
        if (H.applying[pg] && --H.applying[pg] == 0) {
            sdsm_page_protect(pg, 1, (sdsm_pstate_t)sdsm_page(pg)->state);
            sdsm_page_unlock(pg);
            sdsm_page_wake(pg, 1);
            continue;
        }
        sdsm_page_unlock(pg);
    }
}

/*
 * DIFF_HOLD: a quiet publish to several homes (release.c) comes in two
 * steps, so that no reader sees one of its writes while a copy of a page
 * it wrote before is still valid anywhere: each home applies its batch and
 * invalidates the other copies as for a lock release, but until the
 * writer's LIFT - sent once every home has acknowledged, so once every
 * old copy is gone - the pages stay held: this home's threads cannot touch
 * them (shielded) and fetches of them wait (fetch.c).  Without it a thread
 * could read a flag from one home while its copy of the data, homed at
 * another, awaits its invalidation.
 *
 * A barrier arrival over several homes is held too, but goes as a barrier's
 * diffs do (no invalidation, DIFF_HOLD without EAGER): the other copies go
 * when the barrier completes, everywhere, and so do these holds, at this
 * home (sdsm_home_lift_arrivals; a frame of a later barrier's arrival waits
 * for this rank's epoch to move, net.c, so every arrival hold here is of
 * the barrier completing).  Before that only a reader that has not reached
 * the barrier - a thread spinning on a flag - could look, and for it the
 * writer's quiet thread announces the arrival eagerly and lifts it
 * (release.c, publish_arrival).
 */
typedef struct hold_ent {
    uint32_t pg, gen;
    uint16_t shielded, arrival;
} hold_ent_t;

static void hold(int src, unsigned gen, int arrival, const uint8_t *p, uint32_t len, const buf_t *shielded)
{
    buf_t *hb = &H.holds[src];
    size_t k = 0; /* shielded is the batch's pages in order, some left out */
    for (size_t off = 0; off < len; off += 8 + rd32(p + off + 4)) {
        hold_ent_t e = {rd32(p + off), gen, 0, (uint16_t)arrival};
        if (k < shielded->len && rd32(shielded->p + k) == e.pg) {
            e.shielded = 1;
            k += 4;
        }
        sdsm_page_lock(e.pg);
        H.held[e.pg]++;
        sdsm_page_unlock(e.pg);
        sdsm_buf_reserve(hb, sizeof e);
        memcpy(hb->p + hb->len, &e, sizeof e);
        hb->len += sizeof e;
    }
}

static uint8_t *asked; /* per rank: asked to publish (sdsm_home_ask_lift) */

/* src's holds of generation gen or older end (gen 0: its arrival holds).
 * Returns how many. */
static size_t lift_holds(int src, uint32_t gen)
{
    buf_t *hb = &H.holds[src];
    size_t kept = 0, lifted = 0;
    for (size_t off = 0; off + sizeof(hold_ent_t) <= hb->len; off += sizeof(hold_ent_t)) {
        hold_ent_t e;
        memcpy(&e, hb->p + off, sizeof e);
        if (gen ? (int8_t)(uint8_t)(gen - e.gen) < 0 : !e.arrival) {
            memmove(hb->p + kept, &e, sizeof e);
            kept += sizeof e;
            continue;
        }
        lifted++;
        if (asked)
            asked[src] = 0;
        sdsm_page_lock(e.pg);
        if (H.held[e.pg])
            H.held[e.pg]--;
        sdsm_page_unlock(e.pg);
        if (e.shielded)
            shield_off((const uint8_t *)&e.pg, 4);
    }
    hb->len = kept;
    return lifted;
}

/* LIFT {u32 gen}: src's holds of generation gen or older end.  (One that
 * finds none is no error: a publish lifts where an early batch of its
 * generation went, which its own batch may have lifted already.) */
static int on_lift(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t gen = rd32(p);
    if (gen == 0 || gen > 255)
        return -EPROTO;
    lift_holds(src, gen);
    sdsm_home_fetch_replay();
    return 0;
}

/*
 * A thread waits for a page a barrier arrival holds here (a fetch kept,
 * fetch.c; a home thread at a shielded page, home_fault): the ranks whose
 * arrival holds it are asked to publish now (PUBLISH_ASK), which announces
 * the arrival and lifts it, instead of when their quiet thread next looks
 * (a period, doubled while it backs off).  Once per rank until its holds
 * here are lifted.
 */
void sdsm_home_ask_lift(uint32_t first, uint32_t count, int32_t stride)
{
    if (!asked && !(asked = calloc((size_t)H.n, 1)))
        return; /* (the quiet thread lifts it all the same) */
    for (int r = 0; r < H.n; r++) {
        if (asked[r] || !H.holds[r].len)
            continue;
        const buf_t *hb = &H.holds[r];
        int hit = 0;
        for (size_t off = 0; off + sizeof(hold_ent_t) <= hb->len && !hit; off += sizeof(hold_ent_t)) {
            hold_ent_t e;
            memcpy(&e, hb->p + off, sizeof e);
            int64_t d = (int64_t)e.pg - (int64_t)first;
            hit = e.arrival && (stride ? d % stride == 0 && d / stride >= 0 && d / stride < count : d == 0);
        }
        if (!hit)
            continue;
        asked[r] = 1;
        if (r == H.me) {
            void (*soon)(void) = sdsm_home_publish_soon;
            if (soon)
                soon();
        } else {
            sdsm_net_send(r, SDSM_MSG_PUBLISH_ASK, 0, 0, NULL, 0, NULL, 0);
        }
    }
}

static int on_publish_ask(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (src == H.me && h->len == 4) {
        uint32_t pg = rd32(p);
        if (pg >= sdsm_region.npages)
            return -EPROTO;
        sdsm_home_ask_lift(pg, 1, 0);
        return 0;
    }
    if (h->len)
        return -EPROTO;
    void (*soon)(void) = sdsm_home_publish_soon;
    if (soon)
        soon();
    return 0;
}

void sdsm_home_lift_arrivals(void)
{
    size_t lifted = 0;
    for (int r = 0; r < H.n; r++)
        if (H.holds[r].len)
            lifted += lift_holds(r, 0);
    if (lifted)
        sdsm_home_fetch_replay();
}

static int on_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int ack = !(h->flags & SDSM_DIFF_NOACK);
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, H.ps)) {
        /* Unacknowledged (a barrier's diffs to its manager, a diff sent
         * early): the writer would never learn its writes were lost. */
        if (!ack)
            sdsm_fatal("rank %d sent an invalid diff batch (%u bytes): its writes cannot be applied",
                       src, h->len);
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 1, h->seq, NULL, 0, NULL, 0);
        return -EPROTO;
    }
    /* The id of the operation this diff may become (it does if it has
     * copies to invalidate or older operations to wait for). */
    uint32_t id = H.next_id + 1 ? H.next_id + 1 : 1;
    int held = (h->flags & SDSM_DIFF_HOLD) != 0;
    if (held && ((h->flags & (SDSM_DIFF_FORWARD | SDSM_DIFF_LOCK)) || !(h->flags >> 8) ||
                 (h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_NOACK)) == (SDSM_DIFF_EAGER | SDSM_DIFF_NOACK))) {
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 1, h->seq, NULL, 0, NULL, 0);
        return -EPROTO;
    }
    int shielded = (sdsm_home_twins_shared || held) && src != H.me;
    buf_t got = {0};
    if (shielded)
        shield_on(p, h->len, &got);
    for (size_t off = 0; off < h->len;) {
        uint32_t pg = rd32(p + off), nb = rd32(p + off + 4);
        /* A home's own diffL was made from this very page: applying it
         * could only undo what this rank's threads wrote since, outside any
         * critical section.  It is kept for the barrier all the same. */
        if (nb && !(src == H.me && (h->flags & SDSM_DIFF_LOCK))) {
            /* Under the page lock: the flags (and a home's twins, under ibec)
             * change with the fault path's. */
            sdsm_page_lock(pg);
            apply_entry(pg, p + off + 8, nb, sdsm_home_twin2);
            /* Written by others too (a flag array): not hot, so the home's
             * own writes fault and twin it again (fetch.c, open_write). */
            if (src != H.me)
                sdsm_home_hot_clear(pg);
            sdsm_page_unlock(pg);
        }
        if (nb && src != H.me && sdsm_home_twins_shared && !(h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD))) {
            /* Every copy held now is older than these writes. */
            sdsm_page_lock(pg);
            uint64_t *st = sdsm_home_unann_stale(pg);
            const uint64_t *cs = sdsm_page(pg)->copyset;
            for (size_t w = 0; cs && w < sdsm_region.copyset_words; w++)
                st[w] |= cs[w];
            st[src / 64] &= ~(1ull << (src % 64));
            sdsm_page_unlock(pg);
            if (!H.unannounced[pg]) {
                H.unannounced[pg] = 1;
                sdsm_buf_reserve(&H.unann_list, 4);
                memcpy(H.unann_list.p + H.unann_list.len, &pg, 4);
                H.unann_list.len += 4;
            }
        }
        if (src == H.me && !sdsm_home_twins_at_home) {
            /* The home's own notice: its writes are announced now, with
             * the invalidations below (release.c says why the twin stays
             * until here). */
            sdsm_page_lock(pg);
            sdsm_page(pg)->flags &= (uint8_t)~SDSM_PGF_TWIN;
            H.exposed[pg] = 0;
            sdsm_page_unlock(pg);
        }
        if (nb && (h->flags & SDSM_DIFF_FORWARD) && sdsm_home_check_hook)
            sdsm_home_check_hook(pg, src);
        if (h->flags & (SDSM_DIFF_EAGER | SDSM_DIFF_FORWARD)) {
            sdsm_page_lock(pg);
            /* service thread: inflight is written only here and at completion */
            uint32_t before = H.inflight[pg];
            if (h->flags & SDSM_DIFF_FORWARD) {
                forward_targets(pg, src, p + off, 8 + nb);
            } else if (collect_copies(pg, src) || (before && pending_find(before))) {
                /* In flight from the moment the copies leave the copyset,
                 * under the same lock: a release at this home in between
                 * would find nobody holding the page, announce nothing and
                 * not wait for the invalidations (release.c's home_shared),
                 * and a lock it then passes on would let a holder read its
                 * old copy. */
                H.inflight[pg] = id;
            }
            sdsm_page_unlock(pg);
            add_dep(before);
        }
        off += 8 + nb;
    }
    if (held)
        hold(src, h->flags >> 8, !(h->flags & SDSM_DIFF_EAGER), p, h->len, &got);
    else if (shielded)
        shield_off(got.p, got.len);
    free(got.p);
    if (h->flags & SDSM_DIFF_LOCK) { /* kept, in arrival (= lock) order, for the barrier */
        pthread_mutex_lock(&H.lockfwd_mtx);
        uint32_t rec[2] = {(uint32_t)src, h->len};
        sdsm_buf_reserve(&H.lockfwd, 8 + h->len);
        memcpy(H.lockfwd.p + H.lockfwd.len, rec, 8);
        memcpy(H.lockfwd.p + H.lockfwd.len + 8, p, h->len);
        H.lockfwd.len += 8 + h->len;
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
            H.next_id = id;
            *op = (pending_t){.next = H.pending, .id = id,
                              .seq = h->seq, .src = src};
            H.pending = op;
            wait_deps(op);
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
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, fwd_writer_flags(src), op->id, H.fwd[r].p, H.fwd[r].len,
                          NULL, 0);
        else
            sdsm_net_send(r, SDSM_MSG_INVAL, 0, op->id, H.tgt[r], H.tgt_n[r] * 4u, NULL, 0);
        H.tgt_n[r] = 0;
        H.fwd[r].len = 0;
    }
    if (!op)
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

/*
 * Service thread, SDSM_HOME_TWINS: rank dst is about to be served a home
 * page holding writes of this rank's it has not released (a page nobody
 * else held when it was written, so it has no twin; fetch.c).  Whoever
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
    pthread_mutex_lock(&H.twin_mtx);
    uint32_t nd = (uint32_t)(H.twins.len / 4), *list = nd ? malloc((size_t)nd * 4) : NULL;
    if (list) {
        memcpy(list, H.twins.p, (size_t)nd * 4);
        for (uint32_t i = 0; i < nd; i++)
            H.twin_listed[list[i]] = 0;
        H.twins.len = 0;
    }
    pthread_mutex_unlock(&H.twin_mtx);
    if (!list)
        return;
    uint32_t n = 0;
    uint32_t id = H.next_id + 1 ? H.next_id + 1 : 1;
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t pg = list[i];
        int skipped = 0;
        for (uint32_t k = 0; k < nskip && !skipped; k++)
            skipped = skip[k] == pg;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        uint32_t before = 0;
        if ((m->flags & SDSM_PGF_TWIN) && sdsm_page_home(pg) == H.me) {
            m->flags &= (uint8_t)~SDSM_PGF_TWIN;
            if (collect_copies(pg, skipped ? dst : -1)) {
                before = H.inflight[pg];
                H.inflight[pg] = id;
                list[n++] = pg;
            }
        }
        sdsm_page_unlock(pg);
        add_dep(before); /* a later release here waits for the older ones too */
    }
    pending_t *op = NULL;
    for (int r = 0; r < H.n; r++) {
        if (!H.tgt_n[r])
            continue;
        if (!op) {
            if (!(op = calloc(1, sizeof *op)))
                sdsm_fatal("out of memory");
            H.next_id = id;
            *op = (pending_t){.next = H.pending, .id = id, .src = -1, .pages = list, .npages = n};
            H.pending = op;
            wait_deps(op);
        }
        op->remaining++;
        sdsm_net_send(r, SDSM_MSG_INVAL, 0, id, H.tgt[r], H.tgt_n[r] * 4u, NULL, 0);
        H.tgt_n[r] = 0;
    }
    if (op) {
        sdsm_stat_add(SDSM_ST_TWIN_GUARDS, 1);
        return; /* list is op's now */
    }
    H.ndeps = 0;
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
    uint32_t id = H.next_id + 1 ? H.next_id + 1 : 1;
    for (size_t off = 0; off < H.unann_list.len; off += 4) {
        uint32_t pg = rd32(H.unann_list.p + off);
        if (!H.unannounced[pg])
            continue;
        memcpy(H.unann_list.p + 4 * kept++, &pg, 4);
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
            before = H.inflight[pg];
            H.inflight[pg] = id;
            if (!(n & (n - 1)) && !(list = realloc(list, (n ? 2 * n : 1) * sizeof *list)))
                sdsm_fatal("out of memory");
            list[n++] = pg;
        }
        sdsm_page_unlock(pg);
        add_dep(before);
    }
    H.unann_list.len = 4 * (size_t)kept;
    if (!n) {
        H.ndeps = 0;
        return;
    }
    pending_t *op = calloc(1, sizeof *op);
    if (!op)
        sdsm_fatal("out of memory");
    H.next_id = id;
    *op = (pending_t){.next = H.pending, .id = id, .src = -1, .remaining = 1, .pages = list, .npages = n};
    H.pending = op;
    wait_deps(op);
    sdsm_net_send(dst, SDSM_MSG_INVAL, 0, id, list, n * 4u, NULL, 0);
    sdsm_stat_add(SDSM_ST_TWIN_GUARDS, 1);
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

/*
 * An invalidation meets pages this rank is writing: their diffs go home
 * now, before the interval ends.  The home's copy then holds writes this
 * rank has not released, which a thread of another rank may read - a flag
 * polled with plain reads and `omp flush` - while its copies of the pages
 * this rank wrote before the flag are still the old ones.  So every page
 * this rank is writing for the same home goes first, as a lock release
 * sends them (EAGER: the home invalidates the other copies before it reads
 * anything after them), then the pages invalidated.  Their acknowledgements
 * are counted in H.early (the next release waits for them).  The caller
 * holds a cut (release.c), so they are all this rank wrote for that home up
 * to a point; what it wrote before that point for other homes, or on its
 * own pages, is not there yet, so then the batch stays held at the home
 * until the quiet publisher has published the rest (DIFF_HOLD).
 */
/* An early batch's hold generation: the next publish's (release.c,
 * next_gen), whose cut comes after the batch's pages were taken. */
static uint8_t early_gen(void)
{
    uint8_t gen = (uint8_t)(atomic_load(&H.hold_gen) + 1);
    return gen ? gen : 1;
}

static void early_publish(int home)
{
    uint32_t nd = 0, *list = dirty_snapshot(&nd);
    if (!list)
        return;
    buf_t b = {0};
    uint32_t nb = 0; /* pages batched, kept in list[0, nb) (nb <= i) */
    /* Writes for other homes (or this one's own pages) wait for a release:
     * a reader seeing these could read its old copies of those.  So these
     * stay held at their home (DIFF_HOLD) until the quiet publisher has
     * made all of this rank's writes visible (take_dues, release.c). */
    void (*soon)(void) = sdsm_home_publish_soon;
    int hold = 0;
    for (uint32_t i = 0; i < nd && soon && !hold; i++) {
        sdsm_page_lock(list[i]);
        hold = sdsm_page(list[i])->state == SDSM_PG_READ_WRITE && sdsm_page_home(list[i]) != home;
        sdsm_page_unlock(list[i]);
    }
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t pg = list[i];
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_READ_WRITE && (m->flags & SDSM_PGF_TWIN) && sdsm_page_home(pg) == home &&
            home != H.me && !(m->flags & SDSM_PGF_PENDING)) {
            /* Protect first: a later write faults and waits (PENDING)
             * until the diff is on its way, then twins the page again, so
             * its next diff - or a fetch - cannot overtake this one. */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 1);
            sdsm_batch_add(&b, pg, sdsm_page_twin(pg));
            m->flags = (uint8_t)((m->flags | SDSM_PGF_FLUSHED | SDSM_PGF_PENDING) & ~SDSM_PGF_TWIN);
            list[nb++] = pg;
        }
        sdsm_page_unlock(pg);
    }
    if (b.len) {
        uint8_t gen = early_gen();
        atomic_fetch_add(&H.early, 1);
        sdsm_net_send(home, SDSM_MSG_DIFF, SDSM_DIFF_EAGER | (hold ? SDSM_DIFF_HOLD | (unsigned)gen << 8 : 0), 0,
                      b.p, b.len, NULL, 0);
        sdsm_stat_add(SDSM_ST_DIFFS_EARLY, 1);
        if (hold) {
            atomic_store(&H.lift_due[home], gen);
            soon();
        }
    }
    for (uint32_t i = 0; i < nb; i++) {
        sdsm_page_lock(list[i]);
        sdsm_page(list[i])->flags &= (uint8_t)~SDSM_PGF_PENDING;
        sdsm_page_unlock(list[i]);
        sdsm_page_wake(list[i], 1);
    }
    free(b.p);
    free(list);
}

/* Drop our copies; a page we are writing first sends its diff home.  A
 * copy waiting for its home's push (update) is fetched instead: this
 * invalidation means the home dropped us from the copyset, so no push is
 * coming. */
static int on_inval(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n = h->len / 4;
    for (uint32_t i = 0; i < n; i++)
        if (rd32(p + 4 * i) >= sdsm_region.npages)
            return -EPROTO;
    /* A cut from the early diffs to the end (early_publish): a write made
     * meanwhile must not reach the home with the pages invalidated. */
    /* A release taking pages: the diffs below must not overtake its batch
     * (the flag's page here, the data's there), nor it ours.  It queues
     * its batch without waiting for anything of ours. */
    pthread_mutex_lock(&H.take_mtx);
    int cut = 0;
    for (uint32_t i = 0; i < n && !cut; i++) {
        uint32_t pg = rd32(p + 4 * i);
        sdsm_page_lock(pg);
        cut = sdsm_page(pg)->state == SDSM_PG_READ_WRITE;
        sdsm_page_unlock(pg);
    }
    if (cut) {
        sdsm_home_cut_begin();
        early_publish(src);
    }
    void (*soon)(void) = sdsm_home_publish_soon;
    uint8_t late = 0;
    buf_t early = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(p + 4 * i);
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->state == SDSM_PG_FETCHING && (m->flags & SDSM_PGF_AWAIT_PUSH)) {
            m->flags &= (uint8_t)~SDSM_PGF_AWAIT_PUSH;
            m->pushes = 0;
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0); /* no access either way */
            sdsm_page_unlock(pg);
            sdsm_page_wake(pg, 1);
            continue;
        }
        if (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE) {
            int written = m->state == SDSM_PG_READ_WRITE;
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
            sdsm_home_ahead_drop(pg);
            if (written) {
                /* Send before unlocking: a fetch of this page by one of our
                 * threads must reach the home after our own writes.  A page
                 * written since the look above, without a cut (where flags
                 * are read): held like early_publish's batches. */
                early.len = 0;
                sdsm_batch_add(&early, pg, sdsm_page_twin(pg));
                m->flags = (uint8_t)((m->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
                if (!cut && soon) {
                    late = early_gen();
                    atomic_fetch_add(&H.early, 1);
                    sdsm_net_send(src, SDSM_MSG_DIFF, SDSM_DIFF_EAGER | SDSM_DIFF_HOLD | (unsigned)late << 8, 0,
                                  early.p, early.len, NULL, 0);
                } else {
                    sdsm_net_send(src, SDSM_MSG_DIFF, SDSM_DIFF_NOACK, 0, early.p, early.len, NULL, 0);
                }
            }
            sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
        }
        sdsm_page_unlock(pg);
    }
    free(early.p);
    if (cut)
        sdsm_home_cut_end();
    pthread_mutex_unlock(&H.take_mtx);
    if (late) {
        atomic_store(&H.lift_due[src], late);
        soon();
    }
    sdsm_net_send(src, SDSM_MSG_INVAL_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

static int on_diff_ack(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (h->seq == 0 && h->flags == 0) { /* an early_publish batch */
        if (atomic_load(&H.early) == 0)
            return -EPROTO;
        sdsm_count_done(&H.early);
        return 0;
    }
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
        if (nb && (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE))
            apply_entry(pg, p + off + 8, nb, twin2_base);
        sdsm_page_unlock(pg);
        off += 8 + nb;
    }
}

uint8_t *sdsm_home_twin2; /* ibec's second twin area, for forwarded diffs */

static int on_fwd_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, H.ps))
        return -EPROTO;
    if (sdsm_home_check_hook && !(h->flags & 2)) {
        int writer = (h->flags & FWD_WRITER) ? h->flags >> 3 : -1;
        if (writer >= H.n)
            return -EPROTO;
        for (size_t off = 0; off < h->len; off += 8 + rd32(p + off + 4))
            if (rd32(p + off + 4))
                sdsm_home_check_hook(rd32(p + off), writer);
    }
    sdsm_home_apply_to_copies(p, h->len, sdsm_home_twin2);
    if (h->flags & 2) /* lock diffs forwarded at a barrier */
        sdsm_net_send(src, SDSM_MSG_DIFF_ACK, 2, 0, NULL, 0, NULL, 0);
    else
        sdsm_net_send(src, SDSM_MSG_INVAL_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

/*
 * ibec, at barrier completion (service thread, epoch already moved on): the
 * diffL this home applied since the last barrier go to every other holder
 * of their pages, acknowledged to sdsm_home_lock_fwd_pending, which
 * barrier_second waits for.  Sent before any frame of the new epoch is
 * handled, so they reach each holder ahead of the diffB forwarded in the
 * second phase.
 *
 * Each holder gets, per page, the last value of every byte a diffL wrote,
 * except the bytes whose last diffL is its own: it has those already, or
 * newer.  A diffL can carry bytes another thread of its rank wrote outside
 * the critical section (the twinL is per page, not per thread), and that
 * thread may have written them again since; given back to the writer, the
 * older value would undo the newer one - after the writer's diffB went, or
 * taking it out of that diffB.
 */
_Atomic uint32_t sdsm_home_lock_fwd_pending;

typedef struct lockfwd_ent {
    uint32_t pg, seq;
    int      writer;
    size_t   off; /* of the entry's runs in the record buffer */
    uint32_t nb;
} lockfwd_ent_t;

static int cmp_lockfwd(const void *a, const void *b)
{
    const lockfwd_ent_t *x = a, *y = b;
    if (x->pg != y->pg)
        return x->pg < y->pg ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The entries of the records in `in`, sorted by page, in arrival order. */
static lockfwd_ent_t *lockfwd_index(const buf_t *in, uint32_t *count)
{
    uint32_t n = 0;
    for (size_t off = 0; off < in->len; off += 8 + rd32(in->p + off + 4))
        for (size_t e = off + 8; e < off + 8 + rd32(in->p + off + 4); e += 8 + rd32(in->p + e + 4))
            n++;
    lockfwd_ent_t *ent = malloc(((size_t)n + 1) * sizeof *ent);
    if (!ent)
        sdsm_fatal("out of memory forwarding lock diffs");
    n = 0;
    for (size_t off = 0; off < in->len; off += 8 + rd32(in->p + off + 4)) {
        int writer = (int)rd32(in->p + off);
        for (size_t e = off + 8; e < off + 8 + rd32(in->p + off + 4); e += 8 + rd32(in->p + e + 4)) {
            ent[n] = (lockfwd_ent_t){.pg = rd32(in->p + e), .seq = n, .writer = writer, .off = e + 8,
                                     .nb = rd32(in->p + e + 4)};
            n++;
        }
    }
    qsort(ent, n, sizeof *ent, cmp_lockfwd);
    *count = n;
    return ent;
}

/* One page: the last value and writer of each byte its diffL wrote (val,
 * last), then per holder the bytes last written by someone else. */
static void lockfwd_page(const buf_t *in, const lockfwd_ent_t *ent, uint32_t k, uint8_t *val,
                         uint8_t *twin, int32_t *last)
{
    uint32_t pg = ent[0].pg;
    size_t lo = H.ps, hi = 0;
    for (size_t b = 0; b < H.ps; b++)
        last[b] = -1;
    for (uint32_t i = 0; i < k; i++) {
        size_t off = 0, pos = 0, at, n;
        const uint8_t *d;
        while ((d = sdsm_diff_next(in->p + ent[i].off, ent[i].nb, &off, &pos, &at, &n))) {
            memcpy(val + at, d, n);
            for (size_t b = at; b < at + n; b++)
                last[b] = ent[i].writer;
            if (n && at < lo)
                lo = at;
            if (n && at + n > hi)
                hi = at + n;
        }
    }
    if (lo >= hi)
        return;
    sdsm_page_lock(pg);
    for (int r = 0; r < H.n; r++) {
        if (r == H.me || !sdsm_copyset_has(pg, r))
            continue;
        /* twin differs from val exactly where r is to get val */
        memcpy(twin, val, H.ps);
        for (size_t b = lo; b < hi; b++)
            if (last[b] >= 0 && last[b] != r)
                twin[b] = (uint8_t)~val[b];
        sdsm_buf_reserve(&H.fwd[r], 8 + sdsm_diff_bound(H.ps));
        uint8_t *e = H.fwd[r].p + H.fwd[r].len;
        uint32_t nb = (uint32_t)sdsm_diff_encode(twin, val, H.ps, 1, 0, e + 8, NULL, NULL);
        if (!nb)
            continue;
        memcpy(e, &pg, 4);
        memcpy(e + 4, &nb, 4);
        H.fwd[r].len += 8 + nb;
    }
    sdsm_page_unlock(pg);
}

void sdsm_home_forward_lock_diffs(void)
{
    pthread_mutex_lock(&H.lockfwd_mtx);
    buf_t in = H.lockfwd;
    H.lockfwd = (buf_t){0};
    pthread_mutex_unlock(&H.lockfwd_mtx);
    if (!in.len)
        return;
    uint32_t n;
    lockfwd_ent_t *ent = lockfwd_index(&in, &n);
    uint8_t *val = malloc(2 * H.ps);
    int32_t *last = malloc(H.ps * sizeof *last);
    if (!val || !last)
        sdsm_fatal("out of memory forwarding lock diffs");
    for (uint32_t i = 0; i < n;) {
        uint32_t k = 1;
        while (i + k < n && ent[i + k].pg == ent[i].pg)
            k++;
        lockfwd_page(&in, ent + i, k, val, val + H.ps, last);
        i += k;
    }
    for (int r = 0; r < H.n; r++)
        if (H.fwd[r].len) {
            atomic_fetch_add(&sdsm_home_lock_fwd_pending, 1);
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, 2, 0, H.fwd[r].p, H.fwd[r].len, NULL, 0);
            H.fwd[r].len = 0;
        }
    free(val);
    free(last);
    free(ent);
    free(in.p);
}

void sdsm_home_inval_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_DIFF, on_diff);
    sdsm_msg_set_handler(SDSM_MSG_INVAL_ACK, on_inval_ack);
    sdsm_msg_set_handler(SDSM_MSG_INVAL, on_inval);
    sdsm_msg_set_handler(SDSM_MSG_DIFF_ACK, on_diff_ack);
    sdsm_msg_set_handler(SDSM_MSG_FWD_DIFF, on_fwd_diff);
    sdsm_msg_set_handler(SDSM_MSG_LIFT, on_lift);
    sdsm_msg_set_handler(SDSM_MSG_PUBLISH_ASK, on_publish_ask);
}
