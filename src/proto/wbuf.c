/*
 * wbuf.c - the write buffer (SDSM_WRITE_BUFFER=N pages, ArgoDSM's): at most
 * N pages written here and homed elsewhere wait for the release with their
 * diffs unmade.  The write fault that would make it N + 1 makes and sends
 * the oldest one's diff now: that page goes back to read-only, keeps its
 * place on the dirty list marked FLUSHED (the release announces it, and a
 * lock release has its home invalidate the other copies, as for a diff sent
 * early by an invalidation), and a later write to it faults and twins it
 * again.  A release then has at most N diffs left to make; it waits for the
 * early diffs' acknowledgements as for its own, so they are applied at their
 * homes before anybody can acquire after it.
 *
 * hlrc and update only (ibec binds each written page to a critical section).
 * The fault path calls in with a page lock held: other page locks are only
 * tried, and the diff goes through a buffer sized once, without malloc.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/status.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/home_int.h"

static struct {
    pthread_mutex_t mtx;
    uint32_t *ring; /* pages in the order they became writable */
    uint32_t head, n, cap;
    /* Acknowledgements of the early diffs of this interval (slot cur) and
     * of the last one, which a release may still be waiting for: releases
     * take turns (release_mtx), so two slots suffice. */
    sdsm_rpc_t r[2];
    uint32_t id[2]; /* 0: none sent yet */
    int cur;
    buf_t b; /* one diff */
} wbuf;

int sdsm_wbuf_init(void)
{
    pthread_mutex_init(&wbuf.mtx, NULL);
    wbuf.cap = (uint32_t)sdsm_cfg.write_buffer;
    wbuf.head = wbuf.n = 0;
    wbuf.id[0] = wbuf.id[1] = 0;
    wbuf.cur = 0;
    if (!wbuf.cap)
        return 0;
    wbuf.ring = calloc(wbuf.cap + 1, sizeof *wbuf.ring);
    if (!wbuf.ring)
        return SDSM_ENOMEM;
    sdsm_buf_reserve(&wbuf.b, 8 + sdsm_diff_bound(hs.ps));
    return 0;
}

/* held: the stripe lock the caller holds.  q's diff goes home now, if q is
 * still written here with a twin and its lock is free. */
static void flush_early(uint32_t q, uint32_t held)
{
    int own = q % SDSM_PAGE_STRIPES == held % SDSM_PAGE_STRIPES;
    if (!own && pthread_mutex_trylock(&sdsm_page_stripes[q % SDSM_PAGE_STRIPES]))
        return; /* busy: it waits for the release like the others */
    sdsm_page_t *p = sdsm_page(q);
    int home = sdsm_page_home(q);
    if (p->state == SDSM_PG_READ_WRITE && (p->flags & SDSM_PGF_TWIN) && home >= 0 && home != hs.me &&
        !(p->flags & SDSM_PGF_PENDING)) {
        /* Protect first: a write after this faults and waits for the lock. */
        sdsm_page_set(q, SDSM_PG_READ_ONLY, 0, 1);
        wbuf.b.len = 0;
        sdsm_batch_add(&wbuf.b, q, sdsm_page_twin(q));
        p->flags = (uint8_t)((p->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
        int c = wbuf.cur;
        if (!wbuf.id[c]) {
            memset(&wbuf.r[c], 0, sizeof wbuf.r[c]);
            wbuf.id[c] = sdsm_rpc_open(&wbuf.r[c], 0);
        }
        sdsm_rpc_expect(&wbuf.r[c], 1);
        /* Sent under the page lock: a fetch of q by this rank comes after it. */
        sdsm_net_send(home, SDSM_MSG_DIFF, 0, wbuf.id[c], wbuf.b.p, wbuf.b.len, NULL, 0);
        sdsm_stat_add(SDSM_ST_WBUF_FLUSHES, 1);
    }
    if (!own)
        sdsm_page_unlock(q);
}

void sdsm_wbuf_add(uint32_t pg)
{
    if (!wbuf.cap)
        return;
    pthread_mutex_lock(&wbuf.mtx);
    wbuf.ring[(wbuf.head + wbuf.n++) % (wbuf.cap + 1)] = pg;
    if (wbuf.n > wbuf.cap) {
        uint32_t q = wbuf.ring[wbuf.head];
        wbuf.head = (wbuf.head + 1) % (wbuf.cap + 1);
        wbuf.n--;
        if (q != pg)
            flush_early(q, pg);
    }
    pthread_mutex_unlock(&wbuf.mtx);
}

int sdsm_wbuf_drain(void)
{
    if (!wbuf.cap)
        return 0;
    pthread_mutex_lock(&wbuf.mtx);
    wbuf.head = wbuf.n = 0; /* the release takes every dirty page from here */
    int c = wbuf.cur;
    uint32_t id = wbuf.id[c];
    wbuf.id[c] = 0;
    wbuf.cur = !c; /* early diffs from now on belong to the next release */
    pthread_mutex_unlock(&wbuf.mtx);
    if (!id)
        return 0;
    sdsm_rpc_wait(&wbuf.r[c]);
    sdsm_rpc_close(id);
    return wbuf.r[c].status;
}
