/*
 * notice.c - barrier completion for the home-based protocols: the merged
 * list of pages written in the interval (write notices) drops stale copies
 * (hlrc) or makes them wait for the home's push of the new contents
 * (update); homes trim or keep their copysets and push.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
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
#include "proto/home_int.h"
#include "proto/proto.h"

/* update: a home's new contents for a copy we were told to wait for. */
static int on_push(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages)
        return SDSM_EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state == SDSM_PG_FETCHING && (m->flags & SDSM_PGF_AWAIT_PUSH)) {
        memcpy(sdsm_page_rt(pg), p + 8, hs.ps);
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
        sdsm_page_wake(pg, 1);
        return 0;
    }
    sdsm_page_unlock(pg);
    return 0; /* our copy went away meanwhile (prefetch made stale): nothing to do */
}

void sdsm_home_push(uint32_t pg, int to)
{
    uint32_t hdr[2] = {pg, 0};
    sdsm_net_send(to, SDSM_MSG_PUSH, 0, 0, hdr, 8, sdsm_page_rt(pg), hs.ps);
}

/* Check a merged notice list: {u32 page, i32 writer}[n]. */
int sdsm_home_check_pairs(const uint8_t *pairs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int32_t w = (int32_t)rd32(pairs + 8 * i + 4);
        if (rd32(pairs + 8 * i) >= sdsm_region.npages || w < -1 || w >= hs.n)
            return SDSM_EPROTO;
    }
    return 0;
}

/*
 * Barrier completion for hlrc (push == 0) and update (push == 1).  Homes:
 * hlrc keeps only the sole writer in the copyset; update keeps everyone.
 * Other ranks: a stale copy is dropped (hlrc) or waits for the home's push
 * (update: it becomes FETCHING; the push comes after the epoch moved on).
 * The list is sorted: consecutive pages are handled in chunks (at most
 * CHUNK, distinct stripe locks, all held), whose mappings lose their access
 * with one mprotect per stretch (see release.c for why holding them is safe).
 */
#define CHUNK SDSM_PAGE_LOCK_RUN

/* Page lock held: the notice for pg; 1 if its mapping must lose access. */
static int notice_page(uint32_t pg, int writer, int push)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (hs.migrate)
        sdsm_home_note_writer(pg, writer);
    if (sdsm_page_home(pg) == hs.me) { /* announced: readers get the page itself (release.c) */
        if (writer >= 0 && writer != hs.me)
            hs.foreign[pg] = 1;
        m->flags &= (uint8_t)~SDSM_PGF_TWIN;
        hs.exposed[pg] = 0;
        if (hs.unannounced[pg]) {
            hs.unannounced[pg] = 0;
            memset(sdsm_home_unann_stale(pg), 0, sdsm_region.copyset_words * sizeof(uint64_t));
        }
    }
    if (m->copyset) {
        if (!push) {
            int keep = writer >= 0 && sdsm_copyset_has(pg, writer);
            sdsm_copyset_clear(pg);
            if (keep)
                sdsm_copyset_add(pg, writer);
        }
    } else if (m->state == SDSM_PG_READ_ONLY && writer != hs.me && sdsm_page_home(pg) != hs.me) {
        if (push) {
            sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 0);
            m->flags |= SDSM_PGF_AWAIT_PUSH;
            m->pushes = 1;
        } else {
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0);
            sdsm_home_ahead_drop(pg);
            sdsm_home_reread_dropped(pg);
            sdsm_stat_add(SDSM_ST_INVALIDATIONS, 1);
        }
        return 1;
    } else if (m->state == SDSM_PG_FETCHING && writer != hs.me && (m->flags & SDSM_PGF_AWAIT_PUSH)) {
        /* Still waiting for an earlier barrier's push, which the next
         * barrier can overtake (it comes through the manager): that push
         * may hold contents older than this barrier's writes, so wait for
         * this barrier's push too (a home's pushes arrive in order). */
        if (m->pushes == UINT16_MAX)
            sdsm_fatal("page %u: too many barriers before its home's update arrived", pg);
        m->pushes++;
    } else if (m->state == SDSM_PG_FETCHING && writer != hs.me) {
        m->flags |= SDSM_PGF_STALE; /* a prefetch in flight may hold old data */
    }
    return 0;
}

int sdsm_home_barrier_notices(const uint8_t *pairs, uint32_t n, int push)
{
    if (sdsm_home_check_pairs(pairs, n))
        return SDSM_EPROTO;
    uint8_t cut[CHUNK];
    for (uint32_t i = 0; i < n;) {
        uint32_t first = rd32(pairs + 8 * i), m = 1;
        while (i + m < n && m < CHUNK && rd32(pairs + 8 * (i + m)) == first + m)
            m++;
        for (uint32_t k = 0; k < m; k++) {
            sdsm_page_lock(first + k);
            cut[k] = (uint8_t)notice_page(first + k, (int32_t)rd32(pairs + 8 * (i + k) + 4), push);
        }
        for (uint32_t k = 0; k < m;) {
            uint32_t e = k;
            while (e < m && cut[e])
                e++;
            if (e > k) /* INVALID and FETCHING: no access */
                sdsm_page_protect(first + k, e - k, SDSM_PG_INVALID);
            k = e + 1;
        }
        for (uint32_t k = 0; k < m; k++)
            sdsm_page_unlock(first + k);
        i += m;
    }
    sdsm_home_lift_arrivals();
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
            for (int r = 0; r < hs.n; r++)
                if (r != hs.me && r != writer && sdsm_copyset_has(pg, r))
                    sdsm_home_push(pg, r);
        sdsm_page_unlock(pg);
    }
}

void sdsm_home_notice_init(void) { sdsm_msg_set_handler(SDSM_MSG_PUSH, on_push); }
