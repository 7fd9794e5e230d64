/*
 * ibec.c - SMS's Implicit Binding Entry Consistency (seed 000 §3.2, §5.1-5.6).
 *
 * Writes made between sdsm_lock(L) and sdsm_unlock(L) are bound to L: the
 * first write to a page after the acquire makes twinL, and the release
 * turns the changes into diffL, stamped with L's next time stamp.  The lock
 * manager keeps L's chain of diffL and hands the acquirer the ones newer
 * than the acquirer's own stamp for L; the acquirer applies them (fetching a
 * page it does not hold first).  There is no global interval clock: each lock
 * has its own stamps, reset at every barrier.
 *
 * At a barrier all memory becomes consistent: every rank sends diffB (twinB,
 * made at the first write after the barrier, against the page) for every
 * page it wrote to the page's home - the page manager - which applies it and
 * forwards it to every rank in the page's copyset (update, not invalidate)
 * before acknowledging.  Homes twin their own pages that others hold, so
 * their writes travel the same way; a home page nobody else holds has no
 * twin and stays writable, like hlrc's (a fetch write-protects it first).
 * The homes also keep the diffL they applied and forward, ahead of the
 * diffB, the last value of every byte they wrote (in lock order), to each
 * holder but the one whose diffL wrote it last (diffL bytes are kept out of
 * diffB); the chains and stamps start again from empty.  All this is a
 * second phase and round of the barrier, which only happens when some rank
 * has a diffB or diffL.
 *
 * A home serves a page it is writing as it is at that moment, half-done
 * writes included.  Its diffs are made against its twins, so a byte it
 * later writes back to the twin's value would be in no diff and the reader
 * would keep the half-done value.  So the home notes, per twin, which bytes
 * a reader got different from the twin (served masks), and its next diff
 * against that twin carries those bytes whatever their value.
 *
 * Unmap time-out: every SDSM_UNMAP_BARRIERS barriers the copies are
 * protected; a copy not touched again by the next sweep is dropped and its
 * rank leaves the copyset, so barriers stop sending it updates.
 *
 * Check mode (SDSM_IBEC_CHECK=1) finds the misuse ibec cannot survive: a
 * rank reading, before the next barrier, a page another rank wrote outside
 * any critical section (those writes travel only at the barrier).  See
 * "Check mode" below.
 *
 * The writes bound to locks (twinL, diffL, the lock operations) are
 * ibec_lock.c; the critical sections themselves ibec_cs.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/idmap.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/ibec_int.h"

#define STUCK_FAULTS                                                                                         \
    100000 /* write faults in a row on one writable page: the thread lacks the key's rights */

sdsm_ibec_state_t sdsm_ibec_state;

/*
 * Check mode.  Each rank notes the barrier epoch of its reads: at every
 * barrier the pages it holds (copies and home pages) are protected, so the
 * first read of each in the new epoch faults (prefetch is off, so no page
 * arrives unread).  The writes made outside critical sections are the
 * non-empty diffB entries (diffL bytes are kept out of them): at the barrier
 * they reach the home, which forwards them to every holder naming the
 * writer.  A home, or a holder, that gets one for a page it read in the
 * same epoch reports the page: no message is added.
 */
#define CHECK_MAX_REPORTS 20

static struct {
    int on;
    _Atomic uint32_t epoch; /* barriers completed + 1 */
    uint32_t *read_ep;      /* per page: epoch of this rank's last noted read (relaxed atomics) */
    pthread_mutex_t mtx;    /* reported, nreported (handlers run on several threads) */
    uint8_t *reported;      /* per page: reported once already */
    unsigned nreported;
} chk = {.mtx = PTHREAD_MUTEX_INITIALIZER};

/* Check mode, page lock held: the runtime made pg accessible without a
 * fault of the program's; if it was not read in this epoch yet, the next
 * read must still fault. */
static void check_rearm(uint32_t pg)
{
    if (__atomic_load_n(&chk.read_ep[pg], __ATOMIC_RELAXED) != atomic_load(&chk.epoch))
        sdsm_page_protect(pg, 1, SDSM_PG_INVALID);
}

void sdsm_ibec_check_unread(uint32_t pg)
{
    if (chk.on) {
        sdsm_page_lock(pg);
        check_rearm(pg);
        sdsm_page_unlock(pg);
    }
}

/* A home page nobody else holds: no twin, no diff, kept writable (the
 * first fetch of it write-protects it again).  Stripe lock held. */
int sdsm_ibec_home_private(uint32_t pg) { return sdsm_page_home(pg) == ibs.me && !sdsm_copyset_others(pg); }

/* Served masks.  Stripe lock held.  Marks the bytes where copy differs
 * from twin, except those where it differs from other (when given). */
static void mask_add(uint8_t *mask, const uint8_t *twin, const uint8_t *copy, const uint8_t *other,
                     uint32_t pg, int which)
{
    int any = 0;
    for (size_t i = 0; i < ibs.ps; i += 8) {
        uint64_t a, b;
        memcpy(&a, twin + i, 8);
        memcpy(&b, copy + i, 8);
        if (a == b)
            continue;
        for (size_t k = 0; k < 8; k++)
            if (twin[i + k] != copy[i + k] && (!other || other[i + k] == copy[i + k])) {
                mask[(i + k) / 8] |= (uint8_t)(1u << ((i + k) % 8));
                any = 1;
            }
    }
    if (any)
        ibs.masked[pg] |= (uint8_t)which;
}

/*
 * A fetch of one of our home pages was served with copy.  Inside a critical
 * section the bytes the reader got different from twinL are the section's
 * (they go with its diffL, which close_segment also applies to twinB); the
 * others that differ from twinB go with diffB.
 */
static void serve_hook(uint32_t pg, const uint8_t *copy)
{
    if (__builtin_expect(chk.on, 0))
        check_rearm(pg); /* serving may have made it readable here */
    uint8_t fl = sdsm_page(pg)->flags;
    const uint8_t *tl = (fl & SDSM_PGF_TWINL) ? sdsm_ibec_twinl(pg) : NULL;
    if (fl & SDSM_PGF_TWIN)
        mask_add(sdsm_ibec_mask_of(ibs.maskb, pg), sdsm_page_twin(pg), copy, tl, pg, MASK_B);
    if (tl)
        mask_add(sdsm_ibec_mask_of(ibs.maskl, pg), tl, copy, NULL, pg, MASK_L);
}

/*
 * Before pg's diff against twin is made: a masked byte the page has back at
 * the twin's value is flipped in the twin, so the diff carries it.  The
 * mask is then spent (the twin is dropped or, for twinB after a diffL,
 * brought up to date with the diff).
 */
void sdsm_ibec_mask_force(uint8_t *mask, uint8_t *twin, uint32_t pg, int which)
{
    if (!(ibs.masked[pg] & which))
        return;
    if (sdsm_page_home(pg) != ibs.me) { /* moved away (sdsm_set_home): the mask is stale */
        memset(mask, 0, ibs.ps / 8);
        ibs.masked[pg] &= (uint8_t)~which;
        return;
    }
    const uint8_t *cur = sdsm_page_rt(pg);
    for (size_t i = 0; i < ibs.ps / 8; i++) {
        if (!mask[i])
            continue;
        for (size_t k = 0; k < 8; k++)
            if ((mask[i] >> k) & 1 && twin[8 * i + k] == cur[8 * i + k])
                twin[8 * i + k] = (uint8_t)~cur[8 * i + k];
        mask[i] = 0;
    }
    ibs.masked[pg] &= (uint8_t)~which;
}

void sdsm_ibec_mask_drop(uint8_t *mask, uint32_t pg, int which)
{
    if (ibs.masked[pg] & which) {
        memset(mask, 0, ibs.ps / 8);
        ibs.masked[pg] &= (uint8_t)~which;
    }
}

/*
 * Barrier, before the first round: settle here every written page that has
 * nothing to send - a home page nobody else holds (it stays writable, its
 * twin if any is dropped), or one whose diff already went (sdsm_flush) -
 * and leave on the dirty list only the pages with a diffB.  Whether any
 * rank has one, or sent diffL, decides the second phase (barrier_flags).
 */
static uint32_t settle_dirty(void)
{
    uint32_t n = sdsm_page_take_dirty(ibs.work), left = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = ibs.work[i];
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        p->flags &= (uint8_t)~SDSM_PGF_DIRTY;
        if ((p->flags & SDSM_PGF_TWIN) && home >= 0 && (home != ibs.me || sdsm_copyset_others(pg))) {
            sdsm_page_mark_dirty(pg); /* its diffB goes in the second phase */
            left++;
        } else {
            p->flags &= (uint8_t) ~(SDSM_PGF_FLUSHED | SDSM_PGF_TWIN);
            sdsm_ibec_mask_drop(sdsm_ibec_mask_of(ibs.maskb, pg), pg, MASK_B);
            if (p->state == SDSM_PG_READ_WRITE && home != ibs.me)
                sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 1);
        }
        sdsm_page_unlock(pg);
    }
    return left;
}

static int ibec_release(sdsm_sync_kind_t kind, int via, const uint32_t **pages, uint32_t *npages)
{
    (void)kind, (void)via;
    ibs.diffb_left = settle_dirty();
    if (pages) {
        *pages = ibs.work;
        *npages = 0;
    }
    return 0;
}

/*
 * Barrier, second phase (after the first round, before the second):
 * diffB of every page written since the last barrier goes to its home,
 * which applies it and forwards it to the copy holders before acking.  The
 * homes' forwarded diffL went out at the end of the first round, ahead of
 * these on every connection, so a later write wins over an earlier one.
 */
static void send_diffb(void)
{
    uint32_t n = sdsm_page_take_dirty(ibs.work);
    if (n)
        qsort(ibs.work, n, sizeof *ibs.work, sdsm_cmp_u32);
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    pthread_mutex_lock(&ibs.out_mtx);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = ibs.work[i];
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        p->flags &= (uint8_t) ~(SDSM_PGF_DIRTY | SDSM_PGF_FLUSHED);
        if (p->state == SDSM_PG_READ_WRITE && !sdsm_ibec_home_private(pg))
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == ibs.me, 1);
        if ((p->flags & SDSM_PGF_TWIN) && home >= 0) {
            /* A page only its home holds has nobody to tell. */
            if (home != ibs.me || sdsm_copyset_others(pg)) {
                sdsm_ibec_mask_force(sdsm_ibec_mask_of(ibs.maskb, pg), sdsm_page_twin(pg), pg, MASK_B);
                sdsm_batch_add(&ibs.out[home], pg, sdsm_page_twin(pg));
            }
            p->flags &= (uint8_t)~SDSM_PGF_TWIN;
            sdsm_ibec_mask_drop(sdsm_ibec_mask_of(ibs.maskb, pg), pg, MASK_B);
            if (ibs.out[home].len >= (1u << 20)) /* under the lock: no fetch may overtake it */
                sdsm_batch_send(&ibs.out[home], home, SDSM_DIFF_FORWARD, &r, id);
        }
        sdsm_page_unlock(pg);
    }
    for (int h = 0; h < ibs.n; h++)
        sdsm_batch_send(&ibs.out[h], h, SDSM_DIFF_FORWARD, &r, id);
    pthread_mutex_unlock(&ibs.out_mtx);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    if (r.status)
        sdsm_fatal("a home rejected this rank's diffs (protocol error)");
}

/* fn(pg, arg) for every page of every live collective block, each under
 * its page lock (at a home, a fetch changes its page's state). */
static void each_block_page(void (*fn)(uint32_t pg, void *arg), void *arg)
{
    uint32_t na = sdsm_alloc_count();
    for (uint32_t a = 0; a < na; a++) {
        const sdsm_alloc_rec_t *rec = sdsm_alloc_get(a);
        if (!rec->live)
            continue;
        for (uint32_t pg = rec->first; pg < rec->first + rec->npages; pg++) {
            sdsm_page_lock(pg);
            fn(pg, arg);
            sdsm_page_unlock(pg);
        }
    }
}

/* sweep's step, page lock held: leave is the LEAVE list of each home. */
static void sweep_page(uint32_t pg, void *arg)
{
    buf_t *leave = arg;
    sdsm_page_t *p = sdsm_page(pg);
    int home = p->home1 - 1;
    if (p->state != SDSM_PG_READ_ONLY || !p->home1 || home == ibs.me || (p->flags & SDSM_PGF_DIRTY))
        return;
    if (p->flags & SDSM_PGF_IDLE) {
        p->flags &= (uint8_t)~SDSM_PGF_IDLE;
        sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
        sdsm_buf_reserve(&leave[home], 4);
        memcpy(leave[home].p + leave[home].len, &pg, 4);
        leave[home].len += 4;
        sdsm_stat_add(SDSM_ST_PAGES_UNMAPPED, 1);
    } else {
        p->flags |= SDSM_PGF_IDLE;
        sdsm_page_protect(pg, 1, SDSM_PG_INVALID); /* the next touch tells us */
    }
}

/* Unmap time-out sweep (after a barrier): drop copies left idle since the
 * last sweep, arm the others. */
static void sweep(void)
{
    buf_t *leave = calloc((size_t)ibs.n, sizeof *leave);
    if (!leave)
        return;
    each_block_page(sweep_page, leave);
    for (int h = 0; h < ibs.n; h++) {
        if (leave[h].len)
            sdsm_net_send(h, SDSM_MSG_LEAVE, 0, 0, leave[h].p, leave[h].len, NULL, 0);
        free(leave[h].p);
    }
    free(leave);
}

/* Check mode, a barrier completed (every forward of the epoch applied): a
 * new epoch, whose first read of every page held faults. */
static void check_protect_page(uint32_t pg, void *arg)
{
    (void)arg;
    uint8_t st = sdsm_page(pg)->state;
    if (st == SDSM_PG_READ_ONLY || st == SDSM_PG_READ_WRITE)
        sdsm_page_protect(pg, 1, SDSM_PG_INVALID); /* the fault path restores it */
}

static void check_new_epoch(void)
{
    atomic_fetch_add(&chk.epoch, 1);
    each_block_page(check_protect_page, NULL);
}

/* Check mode: writer's writes outside any critical section reached this
 * rank (at the home, or forwarded) at a barrier; a read of pg here in the
 * same epoch may have missed them. */
static void check_hook(uint32_t pg, int writer)
{
    uint32_t ep = atomic_load(&chk.epoch);
    if (writer == ibs.me || __atomic_load_n(&chk.read_ep[pg], __ATOMIC_RELAXED) != ep)
        return;
    pthread_mutex_lock(&chk.mtx);
    unsigned k = chk.reported[pg] ? CHECK_MAX_REPORTS + 1 : chk.nreported++;
    chk.reported[pg] = 1;
    pthread_mutex_unlock(&chk.mtx);
    if (k == CHECK_MAX_REPORTS)
        sdsm_warn("ibec check: more pages were read before a barrier that made them consistent; "
                  "only the first %d are reported",
                  CHECK_MAX_REPORTS);
    if (k >= CHECK_MAX_REPORTS)
        return;
    char who[32], block[96] = "";
    if (writer >= 0)
        snprintf(who, sizeof who, "rank %d", writer);
    else
        snprintf(who, sizeof who, "a rank");
    const sdsm_alloc_rec_t *rec = sdsm_alloc_find(pg);
    if (rec && !sdsm_alloc_is_arena(rec))
        snprintf(block, sizeof block, "page %u of the block allocated at %p (%zu bytes), ", pg - rec->first,
                 (void *)sdsm_page_app(rec->first), rec->size);
    else if (rec)
        snprintf(block, sizeof block, "a local allocation, ");
    sdsm_warn("ibec check: page %p (%shome rank %d): %s wrote it outside a critical section and rank %d "
              "read it before the next barrier (epoch %u, after %u barriers): under ibec rank %d may see "
              "the old value; protect the writes with a lock or add a barrier",
              (void *)sdsm_page_app(pg), block, sdsm_page_home(pg), who, ibs.me, ep, ep - 1, ibs.me);
}

/*
 * Keyed mode, a write fault of a thread outside critical sections: its
 * rights are all granted, so a writable page does not fault again once
 * its protection is repaired - unless the thread never got the rights
 * (created before sdsm_init, or by a thread inside a critical section).
 * Say so rather than fault forever.
 */
static void stuck_check(uint32_t pg)
{
    static _Thread_local uint32_t last_pg, times;
    if (pg >= sdsm_region.npages)
        return;
    sdsm_page_lock(pg);
    int writable = sdsm_page(pg)->state == SDSM_PG_READ_WRITE;
    sdsm_page_unlock(pg);
    if (!writable || pg != last_pg) {
        last_pg = pg;
        times = 0;
        return;
    }
    if (++times == STUCK_FAULTS)
        sdsm_fatal("ibec: a thread cannot write shared page %p though it is writable: it lacks the "
                   "rights to its protection key (threads that write shared memory under ibec must be "
                   "created after sdsm_init, outside critical sections)",
                   (void *)sdsm_page_app(pg));
}

/* ibec's fault entry: check mode notes the reads (a read fault, or one of
 * unknown kind); a fault made by the runtime itself (a diffL applied at an
 * acquire) calls sdsm_home_fault directly and is no read of the program's. */
static int ibec_fault(uint32_t pg, int is_write)
{
    if (__builtin_expect(chk.on, 0) && is_write <= 0 && pg < sdsm_region.npages)
        __atomic_store_n(&chk.read_ep[pg], atomic_load(&chk.epoch), __ATOMIC_RELAXED);
    if (is_write > 0 && sdsm_ibec_cs_keyed()) {
        if (sdsm_ibec_key_fault(pg))
            return 0;
        stuck_check(pg);
    }
    return sdsm_home_fault(pg, is_write);
}

/* sdsm_prefetch: as hlrc's, except in check mode, where a page asked for
 * ahead would become readable before the program reads it and the read
 * would go unseen (the sequential prefetch is off there for the same
 * reason). */
static void ibec_prefetch(uint32_t first, uint32_t n)
{
    if (!chk.on)
        sdsm_home_prefetch(first, n);
}

static void ibec_acquire(sdsm_sync_kind_t kind)
{
    if (kind != SDSM_SYNC_BARRIER)
        return;
    ibs.barriers++;
    if (sdsm_cfg.unmap_barriers > 0 && ibs.barriers % (uint32_t)sdsm_cfg.unmap_barriers == 0)
        sweep();
    if (chk.on)
        check_new_epoch();
}

/* A second phase is needed when some rank has diffL for the homes to
 * forward or diffB to send (see settle_dirty). */
static uint32_t ibec_barrier_flags(void)
{
    return (uint32_t)atomic_exchange(&ibs.lock_diffs, 0) | (ibs.diffb_left > 0);
}

static void ibec_barrier_second(void)
{
    sdsm_count_wait_zero(&sdsm_home_lock_fwd_pending);
    send_diffb();
}

static int ibec_barrier_done(const uint8_t *pairs, uint32_t n)
{
    return sdsm_home_check_pairs(pairs, n); /* ibec sends no notices; stamps reset by epoch */
}

static void ibec_barrier_after(const uint8_t *pairs, uint32_t n)
{
    (void)pairs, (void)n;
    sdsm_home_forward_lock_diffs();
}

static int ibec_flush(uint32_t first, uint32_t n, int drop)
{
    for (uint32_t pg = first; pg < first + n; pg++) { /* the home pages flush_range diffs */
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        if (p->state == SDSM_PG_READ_WRITE && (p->flags & SDSM_PGF_TWIN))
            sdsm_ibec_mask_force(sdsm_ibec_mask_of(ibs.maskb, pg), sdsm_page_twin(pg), pg, MASK_B);
        sdsm_page_unlock(pg);
    }
    return sdsm_home_flush_range(first, n, drop, SDSM_DIFF_FORWARD);
}

static void ibec_free_range(uint32_t first, uint32_t n)
{
    for (uint32_t pg = first; pg < first + n; pg++) {
        sdsm_page_lock(pg);
        sdsm_ibec_mask_drop(sdsm_ibec_mask_of(ibs.maskb, pg), pg, MASK_B);
        sdsm_ibec_mask_drop(sdsm_ibec_mask_of(ibs.maskl, pg), pg, MASK_L);
        sdsm_page_unlock(pg);
    }
    sdsm_home_free_range(first, n);
}

static int ibec_init(void)
{
    int rc = sdsm_home_init();
    if (rc)
        return rc;
    ibs.me = sdsm_region.rank;
    ibs.n = sdsm_region.nprocs;
    ibs.ps = sdsm_region.page_size;
    pthread_mutex_init(&ibs.mtx, NULL);
    pthread_mutex_init(&ibs.out_mtx, NULL);
    ibs.twinl = sdsm_home_map_zeroed(sdsm_region.size);
    ibs.work = sdsm_home_per_page(sizeof *ibs.work);
    ibs.out = calloc((size_t)ibs.n, sizeof *ibs.out);
    ibs.maskb = sdsm_home_map_zeroed(sdsm_region.size / 8);
    ibs.maskl = sdsm_home_map_zeroed(sdsm_region.size / 8);
    ibs.masked = sdsm_home_per_page(sizeof *ibs.masked);
    if (!ibs.twinl || !ibs.work || !ibs.out || !ibs.maskb || !ibs.maskl || !ibs.masked || sdsm_ibec_cs_init())
        return SDSM_ENOMEM;
    sdsm_home_write_hook = sdsm_ibec_write_hook;
    sdsm_home_serve_hook = serve_hook;
    sdsm_alloc_on_free = ibec_free_range; /* a reused page starts without masks */
    sdsm_home_twins_at_home = 1;
    sdsm_home_twin2 = ibs.twinl;
    if (sdsm_cfg.ibec_check) {
        chk.read_ep = sdsm_home_per_page(sizeof *chk.read_ep);
        chk.reported = sdsm_home_per_page(sizeof *chk.reported);
        if (!chk.read_ep || !chk.reported)
            return SDSM_ENOMEM;
        atomic_store(&chk.epoch, 1);
        sdsm_cfg.prefetch = 0; /* a prefetched page would become readable unread */
        sdsm_home_check_hook = check_hook;
        chk.on = 1;
    }
    return 0;
}

const sdsm_proto_ops_t sdsm_proto_ibec = {
    .name = "ibec",
    .init = ibec_init,
    .fault = ibec_fault,
    .release = ibec_release,
    .acquire = ibec_acquire,
    .barrier_done = ibec_barrier_done,
    .barrier_flags = ibec_barrier_flags,
    .barrier_second = ibec_barrier_second,
    .barrier_after = ibec_barrier_after,
    .free_range = ibec_free_range,
    .flush = ibec_flush,
    .prefetch = ibec_prefetch,
    .lock_stamp = sdsm_ibec_lock_stamp,
    .release_lock = sdsm_ibec_release_lock,
    .acquire_lock = sdsm_ibec_acquire_lock,
    .lock_data = 1,
    .cs_slots = sdsm_ibec_cs_slots,
};
