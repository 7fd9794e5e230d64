/*
 * serve.c - the home's end of a page fetch: a FETCH is answered with the
 * pages as this rank's readers may see them (dense pages gathered into
 * runs, mostly-zero pages as a diff against zeros, or left to the asker to
 * read from this heap: zcopy.c).  Where homes serve twins, what is served
 * is a cut of this rank's writes, and the asker's copies of pages that
 * would contradict it go first (the guards).  A fetch of a page a publish
 * holds here is kept until the hold is lifted (lift.c).  The asker's end
 * is fetch.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "proto/zcopy.h"

/*
 * A page that is mostly zeros (fresh allocations, sparse data, a small
 * result in a big page) travels as a diff against a zero page: a few bytes
 * instead of 4 KB.  Counting zero words first keeps dense pages cheap.
 */
static int mostly_zero(const uint8_t *src)
{
    size_t zero = 0, words = hs.ps / 8;
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
    sdsm_buf_reserve(&hs.zbuf, sdsm_diff_bound(hs.ps));
    size_t n = sdsm_diff_encode(hs.zero, data, hs.ps, 1, 0, hs.zbuf.p, NULL, NULL);
    sdsm_net_send(to, SDSM_MSG_FETCH_REPZ, 0, seq, hdr, 8, hs.zbuf.p, n);
}

/* A run of n pages from first, gathered in hs.run: one message (FETCH_RUN)
 * the receiver installs with one mprotect. */
static void send_run(int to, uint32_t first, uint32_t n, uint32_t seq)
{
    if (!n)
        return;
    uint32_t hdr[2] = {first, n > 1 ? n : 0};
    sdsm_net_send(to, n > 1 ? SDSM_MSG_FETCH_RUN : SDSM_MSG_FETCH_REP, 0, seq, hdr, 8, hs.run.p,
                  (size_t)n * hs.ps);
    hs.run.len = 0;
}

/* Page lock held: what a reader of pg gets.  A home page with a twin under
 * hlrc and update has been written here since this rank's last release:
 * the twin holds it as of that release, with the diffs and atomics others
 * made since (apply_entry, atomic.c). */
static const uint8_t *served(uint32_t pg)
{
    const sdsm_page_t *m = sdsm_page(pg);
    if ((m->flags & SDSM_PGF_TWIN) && !sdsm_home_serve_hook)
        return sdsm_page_twin(pg);
    return sdsm_page_rt(pg);
}

/* Whether any page of the request has a twin here: then its bytes travel
 * (a zero-copy reader would copy the live page, unreleased writes and all). */
static int any_twin(uint32_t first, uint32_t count, int32_t stride)
{
    int any = 0;
    for (uint32_t i = 0; i < count && !any; i++) {
        uint32_t pg = (uint32_t)((int64_t)first + (int64_t)stride * i);
        sdsm_page_lock(pg);
        any = (sdsm_page(pg)->flags & SDSM_PGF_TWIN) != 0;
        sdsm_page_unlock(pg);
    }
    return any;
}

/* Whether the request holds a home page written here since the release
 * while nobody else held it (writable, no twin; not a page kept open,
 * which is announced whatever happens), or taken so by a release that has
 * not announced it yet (exposed): it goes out with those writes. */
static int unshared_written(uint32_t first, uint32_t count, int32_t stride)
{
    int any = 0;
    for (uint32_t i = 0; i < count && !any; i++) {
        uint32_t pg = (uint32_t)((int64_t)first + (int64_t)stride * i);
        sdsm_page_lock(pg);
        const sdsm_page_t *m = sdsm_page(pg);
        any = (m->state == SDSM_PG_READ_WRITE && !(m->flags & SDSM_PGF_TWIN) && sdsm_page_home(pg) == hs.me &&
               !sdsm_page_announced(pg) && !sdsm_home_hot(pg)) ||
              hs.exposed[pg];
        sdsm_page_unlock(pg);
    }
    return any;
}

/* Whether the request holds a page with another rank's unannounced
 * barrier diffs (inval.c, sdsm_home_inval_unannounced). */
static int any_unannounced(uint32_t first, uint32_t count, int32_t stride)
{
    for (uint32_t i = 0; i < count; i++)
        if (hs.unannounced[(uint32_t)((int64_t)first + (int64_t)stride * i)])
            return 1;
    return 0;
}

/* The asker's copies of the other pages go first: inval is
 * sdsm_home_inval_copies or sdsm_home_inval_unannounced (inval.c); the
 * pages asked for are left out. */
static void guard(int src, uint32_t first, uint32_t count, int32_t stride,
                  void (*inval)(int, const uint32_t *, uint32_t))
{
    uint32_t skip[1 + PREFETCH_MAX];
    for (uint32_t i = 0; i < count && i < 1 + PREFETCH_MAX; i++)
        skip[i] = (uint32_t)((int64_t)first + (int64_t)stride * i);
    inval(src, skip, count < 1 + PREFETCH_MAX ? count : 1 + PREFETCH_MAX);
}

/*
 * Fetches of pages a publish holds (lift.c, DIFF_HOLD) wait here, whole,
 * in arrival order, and are tried again at each LIFT.  A fetch waits for
 * at most one round trip of the writer's (its acknowledgements, then its
 * LIFT); the requests are 20 bytes each.
 */
typedef struct kept {
    int src;
    sdsm_hdr_t h;
    uint8_t p[12];
} kept_t;

static struct {
    kept_t *k;
    uint32_t n, cap;
    int replaying;
} kept_fetches;

static int any_held(uint32_t first, uint32_t count, int32_t stride)
{
    int any = 0;
    for (uint32_t i = 0; i < count && !any; i++) {
        uint32_t pg = (uint32_t)((int64_t)first + (int64_t)stride * i);
        sdsm_page_lock(pg);
        any = hs.held[pg] != 0;
        sdsm_page_unlock(pg);
    }
    return any;
}

/* The fetch is kept whole, to be tried again (sdsm_home_fetch_replay). */
static void keep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (kept_fetches.n == kept_fetches.cap) {
        uint32_t cap = kept_fetches.cap ? 2 * kept_fetches.cap : 16;
        kept_t *k = realloc(kept_fetches.k, cap * sizeof *k);
        if (!k)
            sdsm_fatal("out of memory keeping a fetch of a held page");
        kept_fetches.k = k;
        kept_fetches.cap = cap;
    }
    kept_t *k = &kept_fetches.k[kept_fetches.n++];
    k->src = src;
    k->h = *h;
    memcpy(k->p, p, h->len);
}

int sdsm_home_fetch_held(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    int32_t stride = h->len == 12 ? (int32_t)rd32(p + 8) : 1;
    if (!any_held(first, count, stride))
        return 0;
    keep(src, h, p);
    sdsm_home_ask_lift(first, count, stride);
    return 1;
}

static int on_fetch(int src, const sdsm_hdr_t *h, const uint8_t *p);

void sdsm_home_fetch_replay(void)
{
    if (!kept_fetches.n || kept_fetches.replaying)
        return;
    kept_fetches.replaying = 1;
    atomic_store(&hs.deferred, 0); /* those deferred again set it again */
    uint32_t n = kept_fetches.n;
    kept_fetches.n = 0; /* those still held are kept again, in order: entry i is read before
                anything is kept at kept_fetches.n <= i */
    for (uint32_t i = 0; i < n; i++) {
        kept_t k = kept_fetches.k[i];
        on_fetch(k.src, &k.h, k.p);
    }
    kept_fetches.replaying = 0;
}

/* Page lock held: src holds a copy of pg from now on.  A home page kept
 * writable while nobody else held it is write-protected first. */
static void note_copy(int src, uint32_t pg)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state == SDSM_PG_READ_WRITE && !(m->flags & SDSM_PGF_TWIN)) {
        /* A home page kept writable while nobody else held it: from now
         * on its writes must be seen, and this interval's announced
         * (a page never write-protected, alloc.h, is announced by every
         * release from now on instead). */
        if (!sdsm_page_announced(pg) && !sdsm_home_hot(pg)) {
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 1, 1);
            m->flags |= SDSM_PGF_FLUSHED;
        }
        sdsm_page_mark_dirty(pg);
    }
    if (sdsm_copyset_add(pg, src))
        sdsm_fatal("out of memory recording a copy holder");
    if (hs.unannounced[pg]) /* its copy from now on is new enough (inval.c) */
        sdsm_home_unann_stale(pg)[src / 64] &= ~(1ull << (src % 64));
}

/* Page lock held: pg's copy joins the run being gathered (*nrun pages from
 * *run), or goes alone when it is mostly zero or the request is no run. */
static void serve_copy(int src, uint32_t pg, uint32_t seq, int32_t stride, uint32_t *run, uint32_t *nrun)
{
    sdsm_buf_reserve(&hs.run, hs.ps);
    uint8_t *copy = hs.run.p + hs.run.len;
    memcpy(copy, served(pg), hs.ps);
    if (sdsm_home_serve_hook)
        sdsm_home_serve_hook(pg, copy);
    if (mostly_zero(copy)) {
        send_run(src, *run, *nrun, seq); /* leaves copy where it is */
        *nrun = 0;
        send_zero_page(src, pg, seq, copy);
    } else {
        if ((*nrun)++ == 0)
            *run = pg;
        hs.run.len += hs.ps;
        if (stride != 1) { /* not a run: the page goes alone */
            send_run(src, *run, *nrun, seq);
            *nrun = 0;
        }
    }
}

/* The pages of src's request, copied (or, zero-copy, left for src to read
 * from this heap) and answered. */
static void serve_pages(int src, const sdsm_hdr_t *h, const uint8_t *p, uint32_t first, uint32_t count,
                        int32_t stride, int zc)
{
    uint32_t run = first, nrun = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t pg = (uint32_t)((int64_t)first + (int64_t)stride * i);
        /* Copy-holder and copy are recorded together, under the page lock,
         * so a release at this home sees either both or neither. */
        sdsm_page_lock(pg);
        note_copy(src, pg);
        if (zc) {
            sdsm_page_unlock(pg);
            if (stride != 1) { /* not a run: each page is read alone */
                uint32_t one[2] = {pg, 1};
                sdsm_net_send(src, SDSM_MSG_FETCH_ZC, 0, h->seq, one, 8, NULL, 0);
            }
            continue;
        }
        serve_copy(src, pg, h->seq, stride, &run, &nrun);
        sdsm_page_unlock(pg);
    }
    if (zc && stride == 1)
        sdsm_net_send(src, SDSM_MSG_FETCH_ZC, 0, h->seq, p, 8, NULL, 0);
    else if (!zc)
        send_run(src, run, nrun, h->seq);
}

/*
 * Inside the cut, a request with a home page written here unannounced (no
 * twin: it is served with writes this rank has not released).  The guard
 * removes the asker's copies of this rank's other home pages, but not of
 * pages homed elsewhere: if this rank holds writes to those that have not
 * reached their homes, the asker could see a flag here, then fetch the
 * data's old contents from its home (NPB LU's pipeline with its rows and
 * flags homed at different ranks).  Then the fetch waits for a publish,
 * which the quiet publisher makes now, and is tried again when it has
 * ended (sdsm_home_publish): served then unless this rank has written
 * elsewhere again, which it stops doing at the latest when its threads
 * wait.
 */
static int defer_fetch(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (!sdsm_home_publish_soon || !sdsm_home_unpublished())
        return 0;
    keep(src, h, p);
    atomic_store(&hs.deferred, 1);
    sdsm_home_ask_publish();
    return 1;
}

/*
 * FETCH: {u32 first, u32 count} asks for a run of pages, {u32 first, u32
 * count, i32 stride} for count pages stride apart (a strided prefetch: each
 * page travels alone).  The replies carry the request's tag (seq).
 */
static int on_fetch(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    int32_t stride = h->len == 12 ? (int32_t)rd32(p + 8) : 1;
    int64_t last = (int64_t)first + (int64_t)stride * ((int64_t)count - 1);
    if ((h->len != 8 && h->len != 12) || first >= sdsm_region.npages || count == 0 ||
        count > 1 + PREFETCH_MAX || stride == 0 || last < 0 || last >= sdsm_region.npages || src == hs.me)
        return SDSM_EPROTO;
    if (sdsm_home_fetch_held(src, h, p))
        return 0; /* answered at the LIFT */
    /* The asker reads the pages from this heap itself (zcopy.c says why a
     * later copy is right), unless a serve hook must see what it gets. */
    int zc = (h->flags & SDSM_FETCH_ZC) && !sdsm_home_serve_hook && sdsm_zcopy_offered(src);
    if (zc && any_twin(first, count, stride)) {
        zc = 0;
        sdsm_stat_add(SDSM_ST_ZC_DECLINED, count);
    }
    /* Dense pages are gathered into runs.  Each page is copied while its
     * lock is held, and the copy is what the reader gets (and what ibec's
     * serve hook sees): a write by this rank's threads after that is
     * announced as usual (the page is write-protected, or twinned at the
     * home). */
    /* Where homes serve twins, what is served is a cut of this rank's
     * writes: a page twinned after the guard looked, but written before a
     * flag copied below, would keep the asker's old copy of it valid. */
    int cut = sdsm_home_twins_shared;
    if (cut)
        sdsm_home_cut_begin();
    if (sdsm_home_twins_shared && unshared_written(first, count, stride)) {
        if (defer_fetch(src, h, p)) {
            sdsm_home_cut_end();
            return 0;
        }
        guard(src, first, count, stride, sdsm_home_inval_copies);
    }
    if (sdsm_home_twins_shared && any_unannounced(first, count, stride))
        guard(src, first, count, stride, sdsm_home_inval_unannounced);
    serve_pages(src, h, p, first, count, stride, zc);
    if (cut)
        sdsm_home_cut_end();
    sdsm_stat_add(SDSM_ST_PAGES_SERVED, count);
    return 0;
}

void sdsm_home_serve_init(void) { sdsm_msg_set_handler(SDSM_MSG_FETCH, on_fetch); }
