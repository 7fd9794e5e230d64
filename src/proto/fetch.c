/*
 * fetch.c - pages travel from their homes: the fault path (a page nobody
 * here holds is requested from its home, with a sequential prefetch
 * window), the home serving a request (dense pages as one run, mostly-zero
 * pages as a diff against zeros), the replies being installed, and the
 * first-touch claims that decide a home.  A page is never readable before
 * its contents are in place, and never writable before it is on the dirty
 * list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
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
#include "proto/zcopy.h"

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

/* Returns the pages asked for (for the trace). */
static uint32_t start_fetch(uint32_t pg, int home)
{
    sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 0);
    if (home < 0) {
        uint32_t q[2] = {pg, 1};
        sdsm_net_send(sdsm_page_manager(pg, H.n), SDSM_MSG_HOME_REQ, 0, 0, q, 8, NULL, 0);
        return 1;
    }
    uint32_t q[2] = {pg, 1 + prefetch_window(pg, home)};
    sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), 0, q, 8, NULL, 0);
    return q[1];
}

/*
 * sdsm_prefetch: the pages of [first, first + n) that are invalid here and
 * homed elsewhere become FETCHING and are asked for in one FETCH per run of
 * consecutive pages at the same home (at most SDSM_FETCH_RUN_MAX pages a
 * request, the most a reply carries).  It does not wait: the replies are
 * installed as the sequential prefetch's are, and a fault on a page still
 * FETCHING waits for its reply.  Pages with a diff in an unsent release
 * batch, first-touch pages whose home is not decided yet and pages homed
 * here are left to the fault path.  Application thread, no page lock held,
 * so each page lock is simply taken.
 */
static void prefetch_send(int home, uint32_t first, uint32_t n)
{
    if (!n)
        return;
    uint32_t q[2] = {first, n};
    sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), 0, q, 8, NULL, 0);
    sdsm_stat_add(SDSM_ST_PREFETCH_PAGES, n);
    sdsm_stat_add(SDSM_ST_PREFETCH_REQS, 1);
}

void sdsm_home_prefetch(uint32_t first, uint32_t n)
{
    uint32_t run = first, nrun = 0;
    int run_home = -1;
    for (uint32_t pg = first; pg < first + n; pg++) {
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        int ask = sdsm_alloc_find(pg) && p->state == SDSM_PG_INVALID &&
                  !(p->flags & SDSM_PGF_PENDING) && home >= 0 && home != H.me;
        if (ask)
            sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 0);
        sdsm_page_unlock(pg);
        if (!ask || home != run_home || nrun == SDSM_FETCH_RUN_MAX) {
            prefetch_send(run_home, run, nrun);
            nrun = 0;
        }
        if (ask && nrun++ == 0) {
            run = pg;
            run_home = home;
        }
    }
    prefetch_send(run_home, run, nrun);
}

int sdsm_home_fault(uint32_t pg, int is_write)
{
    if (!sdsm_alloc_find(pg))
        return -1;
    sdsm_stat_add(is_write > 0 ? SDSM_ST_WRITE_FAULTS : SDSM_ST_READ_FAULTS, 1);
    uint64_t t0 = sdsm_trace_t0(), asked = 0;
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
            asked += start_fetch(pg, home);
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
    SDSM_TRACE(is_write > 0 ? SDSM_TR_FAULT_WRITE : SDSM_TR_FAULT_READ, t0, pg,
               sdsm_page_home(pg), asked * H.ps);
    return 0;
}

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
    /* The asker reads the pages from this heap itself (zcopy.c says why a
     * later copy is right), unless a serve hook must see what it gets. */
    int zc = (h->flags & SDSM_FETCH_ZC) && !sdsm_home_serve_hook && sdsm_zcopy_offered(src);
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
             * on its writes must be seen, and this interval's announced
             * (a page never write-protected, alloc.h, is announced by every
             * release from now on instead). */
            if (!sdsm_alloc_announced(pg)) {
                sdsm_page_set(pg, SDSM_PG_READ_ONLY, 1, 1);
                m->flags |= SDSM_PGF_FLUSHED;
            }
            sdsm_page_mark_dirty(pg);
        }
        if (sdsm_copyset_add(pg, src))
            sdsm_fatal("out of memory recording a copy holder");
        if (zc) {
            sdsm_page_unlock(pg);
            continue;
        }
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
    if (zc)
        sdsm_net_send(src, SDSM_MSG_FETCH_ZC, 0, h->seq, p, 8, NULL, 0);
    else
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
 * A page's contents arrive in its runtime view (page lock held): from the
 * reply (data), or read from the home's heap (data NULL: FETCH_ZC).  A
 * failed read gives the heap up; the page stays FETCHING and is asked for
 * again over TCP.  1 if the page got its contents.
 */
static int copy_in(int home, uint32_t pg, const uint8_t *data)
{
    if (data) {
        memcpy(sdsm_page_rt(pg), data, H.ps);
        return 1;
    }
    if (!sdsm_zcopy_read(home, pg, sdsm_page_rt(pg)))
        return 1;
    uint32_t q[2] = {pg, 1};
    sdsm_net_send(home, SDSM_MSG_FETCH, 0, 0, q, 8, NULL, 0);
    return 0;
}

/*
 * A run of pages.  Each page still waiting for its contents gets them
 * first; then the run is made readable with one mprotect (per stretch of
 * pages that were installed), and only then are the states published: a
 * thread faulting on one of these pages meanwhile waits for the state, and
 * a page is never READ_ONLY before its mapping is.
 */
static void install_run(int src, uint32_t first, uint32_t count, const uint8_t *data)
{
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
            got[i] = (uint8_t)copy_in(src, pg, data ? data + (size_t)i * H.ps : NULL);
            ngot += got[i];
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
    if (data) /* bytes that travelled: a zero-copy read counts only in its own row */
        sdsm_stat_add(SDSM_ST_BYTES_FETCHED, (uint64_t)ngot * H.ps);
    sdsm_page_wake();
}

static int on_fetch_run(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count < 2 || count > SDSM_FETCH_RUN_MAX ||
        count > sdsm_region.npages - first || (size_t)count * H.ps != h->len - 8)
        return -EPROTO;
    install_run(src, first, count, p + 8);
    return 0;
}

/* The home served [first, first + count) and left the copying to us. */
static int on_fetch_zc(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count < 1 || count > SDSM_FETCH_RUN_MAX ||
        count > sdsm_region.npages - first)
        return -EPROTO;
    install_run(src, first, count, NULL); /* a heap we cannot read: asked for again (copy_in) */
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
    sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), 0, q, 8, NULL, 0);
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

void sdsm_home_fetch_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_FETCH, on_fetch);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REQ, on_home_req);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REP, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REPZ, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_RUN, on_fetch_run);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_ZC, on_fetch_zc);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REP, on_home_rep);
}
