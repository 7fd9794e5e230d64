/*
 * reread.c - pages read again after every barrier (SDSM_REREAD, hlrc).
 *
 * An iterative program reads, after each barrier, pages that another rank
 * wrote before it: NPB CG's vector p, a stencil's boundary rows.  Each
 * costs a read fault and a round trip to its home, one page at a time in
 * the order the program touches them (CG reads p through an index: no
 * stream the sequential prefetch could follow).  A page whose copy a
 * barrier dropped, and which this rank read again before the next barrier,
 * twice in a row, is fetched again as soon as the next barrier that drops
 * it ends: every such page at once, one request per run of pages of one
 * home, while the program goes on.
 *
 * Such a copy is installed without access (its state says READ_ONLY, its
 * mapping does not yet), so that its first read takes a local fault - no
 * message - which says the page was wanted.  A page not read before the
 * next barrier drops it loses its streak and is not fetched again until it
 * has earned one anew: a program that moves on to other data costs at most
 * one needless fetch per page.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "mem/page.h"
#include "proto/home.h"
#include "proto/home_int.h"

#define REREAD_DROPPED  0x80u /* a barrier dropped its copy; not read since */
#define REREAD_INFLIGHT 0x40u /* fetched again: its reply is installed without access */
#define REREAD_STREAK   0x03u /* barriers in a row after which it was read again */
#define REREAD_AFTER    2u    /* the streak that makes it fetched again */

static pthread_mutex_t list_mtx = PTHREAD_MUTEX_INITIALIZER;
static buf_t list; /* pages to fetch again when this barrier ends (u32[]) */

int sdsm_home_reread_init(void)
{
    if (!sdsm_cfg.reread || sdsm_cfg.protocol != SDSM_PROTO_HLRC)
        return 0;
    hs.reread = calloc(sdsm_region.npages, 1);
    return hs.reread ? 0 : SDSM_ENOMEM;
}

void sdsm_home_reread_dropped(uint32_t pg)
{
    if (!hs.reread)
        return;
    uint8_t r = hs.reread[pg];
    uint8_t streak = r & REREAD_DROPPED ? 0 : r & REREAD_STREAK; /* not read since the last drop */
    hs.reread[pg] = (uint8_t)(REREAD_DROPPED | streak);
    if (streak < REREAD_AFTER)
        return;
    pthread_mutex_lock(&list_mtx);
    sdsm_buf_reserve(&list, 4);
    memcpy(list.p + list.len, &pg, 4);
    list.len += 4;
    pthread_mutex_unlock(&list_mtx);
}

void sdsm_home_reread_fault(uint32_t pg)
{
    if (!hs.reread)
        return;
    uint8_t r = hs.reread[pg];
    if (!(r & REREAD_DROPPED))
        return;
    uint8_t streak = r & REREAD_STREAK;
    if (r & REREAD_INFLIGHT || streak >= REREAD_AFTER)
        sdsm_stat_add(SDSM_ST_REREAD_USED, 1);
    hs.reread[pg] = (uint8_t)(streak < REREAD_STREAK ? streak + 1 : streak);
}

int sdsm_home_reread_lazy(uint32_t pg)
{
    if (!hs.reread || !(hs.reread[pg] & REREAD_INFLIGHT))
        return 0;
    hs.reread[pg] &= (uint8_t)~REREAD_INFLIGHT;
    return 1;
}

/* Page lock held: pg is asked for again. */
static void mark(uint32_t pg) { hs.reread[pg] |= REREAD_INFLIGHT; }

void sdsm_home_reread_fetch(void)
{
    if (!hs.reread)
        return;
    /* The last barrier (sdsm_finalize's): nothing is read after it, and a
     * request now would be answered while the ranks trade their BYEs. */
    int last = sdsm_coll_current()->kind == SDSM_COLL_FINALIZE;
    pthread_mutex_lock(&list_mtx);
    if (last)
        list.len = 0;
    uint32_t n = (uint32_t)(list.len / 4), *pages = n ? malloc(list.len) : NULL;
    if (pages)
        memcpy(pages, list.p, list.len);
    list.len = 0;
    pthread_mutex_unlock(&list_mtx);
    if (!pages)
        return; /* (out of memory: the pages are fetched when read) */
    qsort(pages, n, sizeof *pages, sdsm_cmp_u32);
    sdsm_home_prefetch_list(pages, n, mark);
    free(pages);
}
