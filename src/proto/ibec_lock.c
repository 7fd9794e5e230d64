/*
 * ibec_lock.c - ibec's writes bound to locks: a page written inside a
 * critical section gets twinL and belongs to the section (write_hook,
 * key_fault) until its segment closes, when the writes become diffL in the
 * buffer of the section's innermost lock; a release hands the diffL to the
 * lock manager with L's next stamp and to the pages' homes, an acquire
 * applies the grant's chain.  The barrier's side and the served masks are
 * ibec.c; the sections themselves ibec_cs.c.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/idmap.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/ibec_int.h"

typedef struct stamp {
    uint32_t id, stamp, epoch;
} stamp_t;

/* mtx held.  Stamps of an earlier barrier epoch count as 0. */
static stamp_t *stamp_of(uint32_t id)
{
    uint32_t ep = sdsm_net_epoch();
    int fresh;
    stamp_t *s = sdsm_idmap_get_or_new(&ibs.stamps, id, sizeof *s, &fresh);
    if (!s)
        sdsm_fatal("out of memory");
    if (fresh || s->epoch != ep) /* a stamp counts within one epoch */
        *s = (stamp_t){.id = id, .epoch = ep};
    return s;
}

/*
 * Critical sections (see ibec_cs.c).  A page written inside one has twinL
 * and belongs to that section (sdsm_ibec_owner) until the section's
 * segment closes (its thread acquires or releases a lock) or another
 * section takes the page: either way the writes made so far become diffL
 * in the buffer of the section's innermost lock.
 */

/* Stripe lock held; pg has twinL of s.  s->mtx is taken here (after the
 * page lock, as everywhere). */
static void segment_out(uint32_t pg, ibec_sec_t *s)
{
    sdsm_page_t *p = sdsm_page(pg);
    pthread_mutex_lock(&s->mtx);
    buf_t *b = s->depth > 0 ? &s->held[s->depth - 1].diff : NULL;
    if (b && p->state != SDSM_PG_INVALID) {
        size_t at = b->len;
        sdsm_ibec_mask_force(sdsm_ibec_mask_of(ibs.maskl, pg), sdsm_ibec_twinl(pg), pg, MASK_L);
        sdsm_batch_add(b, pg, sdsm_ibec_twinl(pg));
        uint32_t nb;
        memcpy(&nb, b->p + at + 4, 4);
        /* These bytes travel as diffL: keep them out of diffB. */
        if (nb && (p->flags & SDSM_PGF_TWIN))
            sdsm_diff_apply(sdsm_page_twin(pg), b->p + at + 8, nb);
        if (!nb)
            b->len = at; /* written back to the same bytes: nothing to say */
    }
    pthread_mutex_unlock(&s->mtx);
    p->flags &= (uint8_t)~SDSM_PGF_TWINL;
    sdsm_ibec_owner[pg] = 0;
    sdsm_ibec_mask_drop(sdsm_ibec_mask_of(ibs.maskl, pg), pg, MASK_L);
}

/* Stripe lock held: pg becomes s's, twinL taken now. */
static void claim(uint32_t pg, ibec_sec_t *s)
{
    uint16_t bit = (uint16_t)(1u << (s->index - 1));
    memcpy(sdsm_ibec_twinl(pg), sdsm_page_rt(pg), ibs.ps);
    sdsm_page(pg)->flags |= SDSM_PGF_TWINL;
    sdsm_ibec_owner[pg] = (uint8_t)s->index;
    if (!(sdsm_ibec_listed[pg] & bit)) {
        sdsm_ibec_listed[pg] |= bit;
        pthread_mutex_lock(&s->mtx);
        s->cs[s->ncs++] = pg;
        pthread_mutex_unlock(&s->mtx);
    }
}

/* Stripe lock held, pg not writable by the owner's thread any more: the
 * page leaves the section that has it for s (keyed mode). */
static void take(uint32_t pg, ibec_sec_t *s)
{
    int o = sdsm_ibec_owner[pg];
    if (o == s->index)
        return;
    if (o) {
        segment_out(pg, sdsm_ibec_cs_get(o));
        sdsm_stat_add(SDSM_ST_IBEC_HANDOVERS, 1);
    }
    claim(pg, s);
}

/* Without keys: the one section, while open. */
static ibec_sec_t *gate_section(void)
{
    ibec_sec_t *s = sdsm_ibec_cs_get(1);
    pthread_mutex_lock(&s->mtx);
    int open = s->depth > 0;
    pthread_mutex_unlock(&s->mtx);
    return open ? s : NULL;
}

/*
 * Fault path, stripe lock held, pg read-only and about to become writable.
 * A page only this home holds needs no diffL: whoever acquires the lock
 * and reads it fetches it, with these writes; it gets the free key.  With
 * keys, a write inside a critical section makes the page the section's;
 * a write outside leaves it with the section that has it, if any, else
 * gives it the common key.  Without keys, every write while the section is
 * open is bound to it.
 */
void sdsm_ibec_write_hook(uint32_t pg)
{
    if (sdsm_ibec_home_private(pg)) {
        sdsm_ibec_page_key(pg, IBEC_KEY_FREE, PROT_READ);
        return;
    }
    if (!sdsm_ibec_cs_keyed()) {
        ibec_sec_t *s = gate_section();
        if (s && !(sdsm_page(pg)->flags & SDSM_PGF_TWINL))
            claim(pg, s);
        return;
    }
    ibec_sec_t *s = sdsm_ibec_cs_mine();
    if (s)
        take(pg, s);
    ibec_sec_t *o = sdsm_ibec_cs_get(sdsm_ibec_owner[pg]);
    sdsm_ibec_page_key(pg, o ? o->key : IBEC_KEY_COMMON, PROT_READ);
}

/*
 * Keyed mode: a write fault of a thread inside a critical section on a
 * writable page, whose key it may not write (or a protection change still
 * on its way).  Takes the page for the thread's section, write-protecting
 * it first so the thread that had it stops writing before its diffL is
 * made.  Returns 1 if handled.
 */
int sdsm_ibec_key_fault(uint32_t pg)
{
    ibec_sec_t *s = sdsm_ibec_cs_mine();
    if (!s || !sdsm_ibec_cs_keyed() || pg >= sdsm_region.npages || !sdsm_alloc_find(pg))
        return 0;
    sdsm_page_lock(pg);
    if (sdsm_page(pg)->state != SDSM_PG_READ_WRITE) {
        sdsm_page_unlock(pg);
        return 0; /* the usual write fault: write_hook */
    }
    sdsm_stat_add(SDSM_ST_WRITE_FAULTS, 1);
    int rw = PROT_READ | PROT_WRITE, key = s->key;
    if (sdsm_ibec_home_private(pg)) {
        key = IBEC_KEY_FREE;
    } else if (sdsm_ibec_owner[pg] != s->index) {
        if (sdsm_ibec_owner[pg])
            sdsm_page_protect(pg, 1, SDSM_PG_READ_ONLY);
        take(pg, s);
    }
    if (!sdsm_ibec_page_key(pg, key, rw))
        sdsm_page_protect(pg, 1, SDSM_PG_READ_WRITE);
    sdsm_page_unlock(pg);
    return 1;
}

/* Without keys: write-protect every writable page, so the next write in a
 * new segment faults and makes its twinL.  twinB stays. */
static void protect_writable(void)
{
    pthread_mutex_lock(&sdsm_region.dirty_mtx);
    uint32_t n = sdsm_region.ndirty;
    memcpy(ibs.work, sdsm_region.dirty, (size_t)n * 4);
    pthread_mutex_unlock(&sdsm_region.dirty_mtx);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = ibs.work[i];
        sdsm_page_lock(pg);
        if (sdsm_page(pg)->state == SDSM_PG_READ_WRITE && !sdsm_ibec_home_private(pg))
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, sdsm_page_home(pg) == ibs.me, 1);
        sdsm_page_unlock(pg);
    }
}

/* s's thread: turn the current segment's writes into diffL appended to the
 * buffer of s's innermost lock (pages another section took since are in
 * that one's). */
static void close_segment(ibec_sec_t *s)
{
    uint16_t bit = (uint16_t)(1u << (s->index - 1));
    pthread_mutex_lock(&s->mtx);
    uint32_t ncs = s->ncs, *cs = s->cs;
    s->cs = s->cs_spare; /* writes from now on start the next segment */
    s->cs_spare = cs;
    s->ncs = 0;
    pthread_mutex_unlock(&s->mtx);
    for (uint32_t i = 0; i < ncs; i++) {
        uint32_t pg = cs[i];
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        sdsm_ibec_listed[pg] &= (uint16_t)~bit;
        if ((p->flags & SDSM_PGF_TWINL) && sdsm_ibec_owner[pg] == s->index) {
            if (p->state == SDSM_PG_READ_WRITE)
                sdsm_page_set(pg, SDSM_PG_READ_ONLY, sdsm_page_home(pg) == ibs.me, 1);
            segment_out(pg, s);
        }
        sdsm_page_unlock(pg);
    }
}

uint32_t sdsm_ibec_lock_stamp(int id)
{
    pthread_mutex_lock(&ibs.mtx);
    uint32_t s = stamp_of((uint32_t)id)->stamp;
    pthread_mutex_unlock(&ibs.mtx);
    return s;
}

/* Apply the grant's diffL chain: {u32 stamp, u32 len, batch}[] (checked).
 * Returns the newest stamp in it (0: none). */
static uint32_t apply_chain(const uint8_t *chain, size_t len)
{
    uint32_t top = 0;
    for (size_t off = 0; off < len;) {
        uint32_t st, bl;
        memcpy(&st, chain + off, 4);
        memcpy(&bl, chain + off + 4, 4);
        const uint8_t *b = chain + off + 8;
        for (size_t e = 0; e < bl;) {
            uint32_t pg, nb;
            memcpy(&pg, b + e, 4);
            memcpy(&nb, b + e + 4, 4);
            /* Our own pages have every diffL already, applied as they came
             * (before their lock moved on); applied again, an entry's bytes
             * written outside the critical section - another thread's, caught
             * in its twinL - could undo newer ones. */
            sdsm_page_lock(pg); /* home1 changes under the page lock (first touch) */
            int not_ours = sdsm_page_home(pg) != ibs.me;
            uint8_t st_now = sdsm_page(pg)->state;
            sdsm_page_unlock(pg);
            if (not_ours) { /* a page we do not hold is fetched first */
                if ((st_now == SDSM_PG_INVALID || st_now == SDSM_PG_FETCHING) && sdsm_alloc_find(pg)) {
                    sdsm_home_fault(pg, 0);
                    sdsm_ibec_check_unread(pg); /* fetched to apply the diffL: no read of the program's */
                }
                sdsm_home_apply_to_copies(b + e, 8 + nb, ibs.twinl);
            }
            e += 8 + nb;
        }
        if (st > top)
            top = st;
        off += 8 + bl;
    }
    return top;
}

/* Acquire of lock id: the grant's diffL chain, {u32 stamp, u32 len,
 * batch}[], applied, and the calling thread's section enters the lock. */
int sdsm_ibec_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    if (sdsm_diff_chain_check(chain, len, sdsm_region.npages,
                              ibs.ps)) /* check everything before using anything */
        return SDSM_EPROTO;
    uint32_t top = apply_chain(chain, len);
    pthread_mutex_lock(&ibs.mtx);
    stamp_t *st = stamp_of((uint32_t)id);
    if (top > st->stamp)
        st->stamp = top;
    pthread_mutex_unlock(&ibs.mtx);
    ibec_sec_t *s = sdsm_ibec_cs_mine();
    if (!s) {
        int others;
        s = sdsm_ibec_cs_take(&others);
        if (others) /* another thread of this rank is inside a critical section */
            sdsm_stat_add(SDSM_ST_IBEC_OVERLAPS, 1);
    }
    close_segment(s); /* writes so far belong to the enclosing lock, if any */
    pthread_mutex_lock(&s->mtx);
    if (s->depth == IBEC_MAX_DEPTH) {
        pthread_mutex_unlock(&s->mtx);
        sdsm_fatal("more than %d locks held at once by one thread", IBEC_MAX_DEPTH);
    }
    s->held[s->depth].id = id;
    s->held[s->depth].diff.len = 0;
    s->depth++;
    pthread_mutex_unlock(&s->mtx);
    if (!sdsm_ibec_cs_keyed())
        protect_writable();
    return 0;
}

/*
 * The homes get every diffL too, and acknowledge it before the lock moves
 * on, so each home applies a lock's diffL in lock order; at the barrier it
 * forwards them, in that order, to the copy holders (barrier_second).
 */
static void send_to_homes(const uint8_t *b, size_t len)
{
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    pthread_mutex_lock(&ibs.out_mtx); /* threads of this rank release different locks at once */
    for (size_t off = 0; off < len;) {
        uint32_t pg, nb;
        memcpy(&pg, b + off, 4);
        memcpy(&nb, b + off + 4, 4);
        int home = sdsm_page_home(pg);
        sdsm_buf_reserve(&ibs.out[home], 8 + nb);
        memcpy(ibs.out[home].p + ibs.out[home].len, b + off, 8 + nb);
        ibs.out[home].len += 8 + nb;
        off += 8 + nb;
    }
    for (int h = 0; h < ibs.n; h++)
        sdsm_batch_send(&ibs.out[h], h, SDSM_DIFF_LOCK, &r, id);
    pthread_mutex_unlock(&ibs.out_mtx);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    atomic_store(&ibs.lock_diffs, 1);
}

/* s->mtx held: the depth of lock id in s's stack, or -1. */
static int held_at(ibec_sec_t *s, int id)
{
    int k = s->depth - 1;
    while (k >= 0 && s->held[k].id != id)
        k--;
    return k;
}

int sdsm_ibec_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    ibec_sec_t *s = sdsm_ibec_cs_mine();
    if (s) {
        pthread_mutex_lock(&s->mtx);
        int k = held_at(s, id);
        pthread_mutex_unlock(&s->mtx);
        if (k < 0)
            s = NULL;
    }
    if (!s) /* sdsm_finalize releases the locks of every thread */
        s = sdsm_ibec_cs_holding(id);
    *payload = NULL;
    *len = 0;
    buf_t d = {0};
    int last = 0;
    if (s) {
        close_segment(s);
        pthread_mutex_lock(&s->mtx);
        int k = held_at(s, id);
        d = s->held[k].diff;
        for (int j = k; j < s->depth - 1; j++)
            s->held[j] = s->held[j + 1];
        s->depth--;
        s->held[s->depth].diff = (buf_t){0};
        last = s->depth == 0;
        pthread_mutex_unlock(&s->mtx);
    }
    pthread_mutex_lock(&ibs.mtx);
    stamp_t *st = stamp_of((uint32_t)id);
    if (d.len) {
        *payload = d.p;
        *len = d.len;
        st->stamp++;
    } else {
        free(d.p);
    }
    *stamp = st->stamp;
    pthread_mutex_unlock(&ibs.mtx);
    if (last)
        sdsm_ibec_cs_give(s);
    if (*len)
        send_to_homes(*payload, *len);
    return 0;
}
