/*
 * copies.c - the copy holder's side of a home's invalidations and forwards:
 * an invalidation drops this rank's copies, and a page this rank is
 * writing first sends its diff home (early_publish: with every other page
 * it wrote for that home, so no byte is lost and no reader sees a flag
 * before its data); forwarded diffs (ibec) are applied to copies and
 * twins.  Also the writer's side of a diff's acknowledgement (DIFF_ACK).
 * The home's side is inval.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/diff.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "net/rpc.h"

/* This rank's dirty list as it is (malloc'd, *n entries), or NULL if empty. */
static uint32_t *dirty_snapshot(uint32_t *n)
{
    uint32_t nd = sdsm_page_dirty_count();
    uint32_t *list = nd ? malloc((size_t)nd * sizeof *list) : NULL;
    *n = list ? sdsm_page_dirty_copy(list, nd) : 0;
    return list;
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
 * are counted in hs.early (the next release waits for them).  The caller
 * holds a cut (release.c), so they are all this rank wrote for that home up
 * to a point; what it wrote before that point for other homes, or on its
 * own pages, is not there yet, so then the batch stays held at the home
 * until the quiet publisher has published the rest (DIFF_HOLD).
 */
/* An early batch's hold generation: the next publish's (release.c,
 * next_gen), whose cut comes after the batch's pages were taken. */
static uint8_t early_gen(void)
{
    uint8_t gen = (uint8_t)(atomic_load(&hs.hold_gen) + 1);
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
            home != hs.me && !(m->flags & SDSM_PGF_PENDING)) {
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
        atomic_fetch_add(&hs.early, 1);
        sdsm_net_send(home, SDSM_MSG_DIFF, SDSM_DIFF_EAGER | (hold ? SDSM_DIFF_HOLD | (unsigned)gen << 8 : 0),
                      0, b.p, b.len, NULL, 0);
        sdsm_stat_add(SDSM_ST_DIFFS_EARLY, 1);
        if (hold) {
            atomic_store(&hs.lift_due[home], gen);
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

/* Whether this rank is writing any of the n pages of an invalidation. */
static int any_written(const uint8_t *p, uint32_t n)
{
    int cut = 0;
    for (uint32_t i = 0; i < n && !cut; i++) {
        uint32_t pg = rd32(p + 4 * i);
        sdsm_page_lock(pg);
        cut = sdsm_page(pg)->state == SDSM_PG_READ_WRITE;
        sdsm_page_unlock(pg);
    }
    return cut;
}

/* Page lock held: the home src drops this rank's copy of pg; a page
 * written here sends its diff home first (in early, a scratch buffer).
 * *late: the hold generation of such a diff sent held. */
static void drop_copy(int src, uint32_t pg, int cut, void (*soon)(void), buf_t *early, uint8_t *late)
{
    sdsm_page_t *m = sdsm_page(pg);
    int written = m->state == SDSM_PG_READ_WRITE;
    sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
    sdsm_home_ahead_drop(pg);
    if (written) {
        /* Send before unlocking: a fetch of this page by one of our
         * threads must reach the home after our own writes.  A page
         * written since the look above, without a cut (where flags
         * are read): held like early_publish's batches. */
        early->len = 0;
        sdsm_batch_add(early, pg, sdsm_page_twin(pg));
        m->flags = (uint8_t)((m->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
        if (!cut && soon) {
            *late = early_gen();
            atomic_fetch_add(&hs.early, 1);
            sdsm_net_send(src, SDSM_MSG_DIFF, SDSM_DIFF_EAGER | SDSM_DIFF_HOLD | (unsigned)*late << 8, 0,
                          early->p, early->len, NULL, 0);
        } else {
            sdsm_net_send(src, SDSM_MSG_DIFF, SDSM_DIFF_NOACK, 0, early->p, early->len, NULL, 0);
        }
    }
    sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
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
            return SDSM_EPROTO;
    /* A cut from the early diffs to the end (early_publish): a write made
     * meanwhile must not reach the home with the pages invalidated. */
    /* A release taking pages: the diffs below must not overtake its batch
     * (the flag's page here, the data's there), nor it ours.  It queues
     * its batch without waiting for anything of ours. */
    pthread_mutex_lock(&hs.take_mtx);
    int cut = any_written(p, n);
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
        if (m->state == SDSM_PG_READ_ONLY || m->state == SDSM_PG_READ_WRITE)
            drop_copy(src, pg, cut, soon, &early, &late);
        sdsm_page_unlock(pg);
    }
    free(early.p);
    if (cut)
        sdsm_home_cut_end();
    pthread_mutex_unlock(&hs.take_mtx);
    if (late) {
        atomic_store(&hs.lift_due[src], late);
        soon();
    }
    sdsm_net_send(src, SDSM_MSG_INVAL_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

static int on_diff_ack(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (h->seq == 0 && h->flags == 0) { /* an early_publish batch */
        if (atomic_load(&hs.early) == 0)
            return SDSM_EPROTO;
        sdsm_count_done(&hs.early);
        return 0;
    }
    if (h->flags == 2) {
        if (atomic_load(&sdsm_home_lock_fwd_pending) == 0)
            return SDSM_EPROTO;
        sdsm_count_done(&sdsm_home_lock_fwd_pending);
        return 0;
    }
    /* flags 1: the home refused the diffs.  (Refused here: an ack nobody waits for.) */
    return sdsm_rpc_reply(h->seq, h->flags ? SDSM_EPROTO : 0, NULL, 0) ? SDSM_EPROTO : 0;
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
            sdsm_home_apply_entry(pg, p + off + 8, nb, twin2_base);
        sdsm_page_unlock(pg);
        off += 8 + nb;
    }
}

uint8_t *sdsm_home_twin2; /* ibec's second twin area, for forwarded diffs */

static int on_fwd_diff(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (sdsm_diff_batch_check(p, h->len, sdsm_region.npages, hs.ps))
        return SDSM_EPROTO;
    if (sdsm_home_check_hook && !(h->flags & 2)) {
        int writer = (h->flags & FWD_WRITER) ? h->flags >> 3 : -1;
        if (writer >= hs.n)
            return SDSM_EPROTO;
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

void sdsm_home_copies_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_INVAL, on_inval);
    sdsm_msg_set_handler(SDSM_MSG_DIFF_ACK, on_diff_ack);
    sdsm_msg_set_handler(SDSM_MSG_FWD_DIFF, on_fwd_diff);
}
