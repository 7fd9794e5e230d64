/*
 * claim.c - first-touch claims: the manager's side, and the claimer's
 * runs of first touches that decide how many pages a claim asks for.
 *
 * The first rank to touch a first-touch page becomes its home; the page's
 * manager (alloc.h: runs of SDSM_MGR_CHUNK pages, round robin) arbitrates.
 * A claim may also ask for the pages after it, which the claimer's sweep is
 * about to touch (sdsm_home_claim_run, below): those are claimed softly.  The
 * claimer treats them as its own and touches them with no message; the
 * manager tells nobody else, and when another rank asks for one first, it
 * asks the claimer (SOFT_PROBE).  A claimer that has not touched the page
 * gives it up and the asker gets it, so a page's home is always the rank
 * that touched it first, as without claims ahead: a sweep that runs on into
 * a slower neighbour's block does not take that block's pages.  Requests
 * arriving while the claimer is asked wait here, and are all answered with
 * the outcome.
 *
 * Manager's view of a page: home1 is the home when it is decided (and, for
 * a page the manager itself claimed softly, itself, as its own threads see
 * it); hs.soft is the soft claimer + 1 (0: none), with SOFT_ASKING while a
 * SOFT_PROBE is out.  Both change under the page lock.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sdsm.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home_int.h"

#define SOFT_ASKING 0x8000u
#define SOFT_RANK   0x7fffu

/* Requests for a page whose soft claimer is being asked. */
typedef struct waiter {
    uint32_t pg, seq;
    int src;
} waiter_t;

static pthread_mutex_t waiters_mtx = PTHREAD_MUTEX_INITIALIZER;
static waiter_t *waiters;
static uint32_t nwaiters, capwaiters;

int sdsm_home_soft_owner(uint32_t pg) { return hs.soft[pg] ? (int)(hs.soft[pg] & SOFT_RANK) - 1 : -1; }

void sdsm_home_soft_clear(uint32_t pg)
{
    if (hs.soft[pg])
        hs.soft[pg] = 0;
}

static void add_waiter(uint32_t pg, int src, uint32_t seq)
{
    pthread_mutex_lock(&waiters_mtx);
    if (nwaiters == capwaiters) {
        uint32_t cap = capwaiters ? 2 * capwaiters : 16;
        waiter_t *w = realloc(waiters, cap * sizeof *w);
        if (!w)
            sdsm_fatal("out of memory queueing a first-touch claim");
        waiters = w;
        capwaiters = cap;
    }
    waiters[nwaiters++] = (waiter_t){pg, seq, src};
    pthread_mutex_unlock(&waiters_mtx);
}

/* The requests for pg, in arrival order, moved to out (capacity: cap). */
static uint32_t take_waiters(uint32_t pg, waiter_t *out, uint32_t cap)
{
    uint32_t n = 0, k = 0;
    pthread_mutex_lock(&waiters_mtx);
    for (uint32_t i = 0; i < nwaiters; i++) {
        if (waiters[i].pg == pg && n < cap)
            out[n++] = waiters[i];
        else
            waiters[k++] = waiters[i];
    }
    nwaiters = k;
    pthread_mutex_unlock(&waiters_mtx);
    return n;
}

/*
 * The answer to a claim: pg's home, then what the asker may learn of the
 * pages after it in the manager's run and the allocation: their homes
 * where decided, and the pages it claimed softly itself (-1 otherwise).
 */
static void home_reply(int to, uint32_t pg, int home, uint32_t seq)
{
    if (seq) { /* sdsm_proto_home_query: the page alone */
        int32_t rep[2] = {(int32_t)pg, home};
        sdsm_net_send(to, SDSM_MSG_HOME_REP, 0, seq, rep, 8, NULL, 0);
        return;
    }
    struct {
        int32_t pg, home;
        int16_t next[SDSM_MGR_CHUNK - 1];
    } rep = {(int32_t)pg, home, {0}};
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    uint32_t end = sdsm_mgr_run_end(pg, a), n = 0;
    for (uint32_t q = pg + 1; a && q < end; q++) {
        sdsm_page_lock(q);
        int soft = sdsm_home_soft_owner(q);
        /* A soft claim being asked about is nobody's yet: the claimer may
         * have given it up already (on_soft_probe), and learning it here
         * as its own again after that made two ranks its home, each
         * writing its own copy (an OpenMP Jacobi's boundary rows). */
        int asking = (hs.soft[q] & SOFT_ASKING) != 0;
        rep.next[n++] = (int16_t)(soft >= 0 ? (soft == to && !asking ? to : -1) : sdsm_page(q)->home1 - 1);
        sdsm_page_unlock(q);
    }
    sdsm_net_send(to, SDSM_MSG_HOME_REP, 0, 0, &rep, 8 + 2 * n, NULL, 0);
}

#define DEFERRED (-100)

/*
 * pg's lock held: src asks for pg's home, claiming it unless claim is 0.
 * Returns the home (-1: nobody's yet), or DEFERRED when the soft claimer
 * must be asked first (the request waits).
 */
static int decide(uint32_t pg, int src, int claim, uint32_t seq)
{
    sdsm_page_t *m = sdsm_page(pg);
    uint16_t s = hs.soft[pg];
    if (s) {
        int owner = (int)(s & SOFT_RANK) - 1;
        if (seq && !claim) /* sdsm_home_of: the claimer, as things stand */
            return owner;
        if (s & SOFT_ASKING) {
            add_waiter(pg, src, seq);
            return DEFERRED;
        }
        if (owner == src || (owner == hs.me && m->state != SDSM_PG_INVALID)) {
            hs.soft[pg] = 0; /* touched (or about to be) by its claimer: decided */
            m->home1 = owner + 1;
            return owner;
        }
        if (owner == hs.me) { /* claimed ahead here and never touched: given up */
            hs.soft[pg] = 0;
            m->home1 = src + 1;
            return src;
        }
        /* The claimer is asked about the whole run it claimed from pg on
         * (a neighbour that started late wants it all, page by page). */
        uint32_t q[2] = {pg, 1};
        hs.soft[pg] = s | SOFT_ASKING;
        add_waiter(pg, src, seq);
        while (q[1] < SDSM_MGR_CHUNK - pg % SDSM_MGR_CHUNK && pg + q[1] < sdsm_region.npages &&
               !pthread_mutex_trylock(&sdsm_page_stripes[(pg + q[1]) % SDSM_PAGE_STRIPES])) {
            uint32_t r = pg + q[1];
            int same = r % SDSM_PAGE_STRIPES != pg % SDSM_PAGE_STRIPES && hs.soft[r] == s;
            if (same)
                hs.soft[r] = s | SOFT_ASKING;
            if (r % SDSM_PAGE_STRIPES != pg % SDSM_PAGE_STRIPES)
                sdsm_page_unlock(r);
            if (!same)
                break;
            q[1]++;
        }
        sdsm_net_send(owner, SDSM_MSG_SOFT_PROBE, 0, 0, q, 8, NULL, 0);
        return DEFERRED;
    }
    if (!m->home1 && claim)
        m->home1 = src + 1; /* the first claim wins */
    return m->home1 - 1;
}

/*
 * The pages after pg that src claims ahead: softly, up to the first page
 * another rank has (a neighbour's block has begun there: its pages are its
 * own, and claiming past it would only make it ask for them back).
 */
static void claim_ahead(uint32_t pg, uint32_t n, int src)
{
    for (uint32_t q = pg + 1; q < pg + n; q++) {
        sdsm_page_lock(q);
        sdsm_page_t *m = sdsm_page(q);
        int owner = hs.soft[q] ? sdsm_home_soft_owner(q) : m->home1 - 1;
        if (owner < 0) {
            hs.soft[q] = (uint16_t)(src + 1);
            if (src == hs.me) /* this rank's threads see it as theirs */
                m->home1 = src + 1;
        }
        sdsm_page_unlock(q);
        if (owner >= 0 && owner != src)
            break;
    }
}

static int on_home_req(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p), claim = rd32(p + 4);
    if (pg >= sdsm_region.npages || sdsm_page_manager(pg, hs.n) != hs.me ||
        claim > SDSM_MGR_CHUNK - pg % SDSM_MGR_CHUNK)
        return SDSM_EPROTO;
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (a && a->home != SDSM_HOME_FIRST_TOUCH)
        return SDSM_EPROTO;
    /* Pages ahead only within the allocation as this rank knows it: the
     * asker may have recorded a new allocation before this rank did. */
    if (!a && claim > 1)
        claim = 1;
    if (a && claim > a->first + a->npages - pg)
        claim = a->first + a->npages - pg;
    sdsm_page_lock(pg);
    int home = decide(pg, src, claim > 0, h->seq);
    sdsm_page_unlock(pg);
    if (home == DEFERRED)
        return 0;
    if (home == src && claim > 1)
        claim_ahead(pg, claim, src);
    home_reply(src, pg, home, h->seq);
    return 0;
}

/* At the soft claimer: keep the pages of the run a thread here has
 * touched; give up the others. */
static int on_soft_probe(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t pg = rd32(p), n = rd32(p + 4);
    if (pg >= sdsm_region.npages || sdsm_page_manager(pg, hs.n) != src || n == 0 ||
        n > SDSM_MGR_CHUNK - pg % SDSM_MGR_CHUNK || n > sdsm_region.npages - pg)
        return SDSM_EPROTO;
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        sdsm_page_lock(pg + i);
        sdsm_page_t *m = sdsm_page(pg + i);
        if (m->home1 == hs.me + 1 && m->state != SDSM_PG_INVALID)
            kept |= 1ull << i;
        else if (m->home1 == hs.me + 1)
            m->home1 = 0; /* a later touch here asks the manager */
        sdsm_page_unlock(pg + i);
    }
    uint32_t rep[4] = {pg, n, (uint32_t)kept, (uint32_t)(kept >> 32)};
    sdsm_net_send(src, SDSM_MSG_SOFT_REP, 0, 0, rep, 16, NULL, 0);
    return 0;
}

/* One page of a run the claimer answered for: kept, or given to the first
 * request waiting for it, or nobody's again. */
static void soft_decided(uint32_t pg, int claimer, int kept)
{
    waiter_t w[64];
    sdsm_page_lock(pg);
    uint32_t n = take_waiters(pg, w, 64);
    int home = kept ? claimer : n ? w[0].src : -1;
    hs.soft[pg] = 0; /* decided: no request waits for pg from now on */
    sdsm_page(pg)->home1 = home + 1;
    sdsm_page_unlock(pg);
    do
        for (uint32_t i = 0; i < n; i++)
            home_reply(w[i].src, pg, home, w[i].seq);
    while ((n = take_waiters(pg, w, 64)));
}

/* At the manager: the claimer's answer decides the run's pages. */
static int on_soft_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t pg = rd32(p), n = rd32(p + 4);
    uint64_t kept = rd32(p + 8) | (uint64_t)rd32(p + 12) << 32;
    if (pg >= sdsm_region.npages || sdsm_page_manager(pg, hs.n) != hs.me || n == 0 ||
        n > SDSM_MGR_CHUNK - pg % SDSM_MGR_CHUNK || n > sdsm_region.npages - pg || (n < 64 && kept >> n))
        return SDSM_EPROTO;
    for (uint32_t i = 0; i < n; i++) {
        sdsm_page_lock(pg + i);
        uint16_t s = hs.soft[pg + i];
        int asking = (s & SOFT_ASKING) && (int)(s & SOFT_RANK) - 1 == src;
        sdsm_page_unlock(pg + i);
        if (!asking)
            return SDSM_EPROTO;
    }
    for (uint32_t i = 0; i < n; i++)
        soft_decided(pg + i, src, (int)(kept >> i & 1));
    return 0;
}

/* At the manager: src touched these pages it claimed ahead: decided. */
static int on_soft_confirm(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t first = rd32(p), n = rd32(p + 4);
    if (first >= sdsm_region.npages || sdsm_page_manager(first, hs.n) != hs.me || n == 0 ||
        n > SDSM_MGR_CHUNK - first % SDSM_MGR_CHUNK || n > sdsm_region.npages - first)
        return SDSM_EPROTO;
    for (uint32_t q = first; q < first + n; q++) {
        sdsm_page_lock(q);
        if (hs.soft[q] == src + 1) { /* not being asked: that answer decides */
            hs.soft[q] = 0;
            sdsm_page(q)->home1 = src + 1;
        }
        sdsm_page_unlock(q);
    }
    return 0;
}

void sdsm_home_claim_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_SOFT_CONFIRM, on_soft_confirm);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REQ, on_home_req);
    sdsm_msg_set_handler(SDSM_MSG_SOFT_PROBE, on_soft_probe);
    sdsm_msg_set_handler(SDSM_MSG_SOFT_REP, on_soft_rep);
}

/*
 * First-touch claims in runs.  A thread writing a first-touch block in
 * order (initialising its part of an array, or of a few arrays row by row)
 * would claim each page with its own round trip to the page's manager.
 * When a claim continues one of this thread's recent runs of first touches,
 * it asks for as many pages after it as the run has so far (up to the end
 * of the manager's run and of the allocation): the manager grants those
 * nobody has claimed yet, and the write-ahead then opens them as home pages.
 * A page claimed ahead but never touched here is homed here although
 * another rank touches it first: a placement cost, never a wrong answer,
 * and bounded by the doubling (a run that ends at a neighbour's block
 * claims at most as many of its pages as it wrote of its own).
 */
#define FT_STREAMS 4

typedef struct ft_streams {
    uint32_t next[FT_STREAMS]; /* the page after a run of first touches */
    uint32_t len[FT_STREAMS];  /* the run's length */
    uint32_t soft[FT_STREAMS]; /* first page it claimed ahead in its manager's run, + 1 */
    uint32_t victim;
} ft_streams_t;

static __thread ft_streams_t ft __attribute__((tls_model("initial-exec")));

#define NO_STREAM (-1) /* ft_stream: pg continues no run (not an error) */

/* The stream whose run pg continues, or NO_STREAM. */
static int ft_stream(uint32_t pg)
{
    for (int i = 0; i < FT_STREAMS; i++)
        if (ft.next[i] == pg && pg)
            return i;
    return NO_STREAM;
}

/*
 * This thread first-touched pg (as its home).  A run that leaves a
 * manager's run has touched every page it claimed ahead there: the manager
 * is told (SOFT_CONFIRM), so others learn those homes from its answers and
 * it need not ask (claim.c).  Pages claimed ahead where a run ends are
 * asked about when somebody else wants them.
 */
static void ft_confirm(int i, uint32_t upto)
{
    uint32_t s = ft.soft[i], q[2] = {s - 1, upto - (s - 1)};
    if (upto > s - 1 && q[1] <= SDSM_MGR_CHUNK - q[0] % SDSM_MGR_CHUNK)
        sdsm_net_send(sdsm_page_manager(s - 1, hs.n), SDSM_MSG_SOFT_CONFIRM, 0, 0, q, 8, NULL, 0);
}

/* A release: the pages this thread's runs claimed ahead and touched so far
 * are confirmed now, before the others, synchronised by it, ask for them. */
void sdsm_home_claims_flush(void)
{
    for (int i = 0; i < FT_STREAMS; i++) {
        uint32_t s = ft.soft[i], next = ft.next[i];
        if (!s)
            continue;
        ft_confirm(i, next);
        /* the rest of its manager's run may still be claimed softly */
        ft.soft[i] = next / SDSM_MGR_CHUNK == (s - 1) / SDSM_MGR_CHUNK ? next + 1 : 0;
    }
}

void sdsm_home_ft_touched(uint32_t pg)
{
    int i = ft_stream(pg);
    if (i == NO_STREAM) {
        i = (int)(ft.victim++ % FT_STREAMS);
        ft.len[i] = 0;
        ft.soft[i] = 0;
    }
    uint32_t s = ft.soft[i];
    if (s && pg / SDSM_MGR_CHUNK != (s - 1) / SDSM_MGR_CHUNK) {
        ft_confirm(i, pg);
        ft.soft[i] = 0;
    }
    ft.next[i] = pg + 1;
    ft.len[i]++;
}

/* The pages to claim from pg on: 1, or more when pg continues one of this
 * thread's runs of first touches (start_fetch's HOME_REQ, fetch.c). */
uint32_t sdsm_home_claim_run(uint32_t pg)
{
    int i = ft_stream(pg);
    const sdsm_alloc_rec_t *a = i == NO_STREAM ? NULL : sdsm_alloc_find(pg);
    if (!a)
        return 1;
    uint64_t end = sdsm_mgr_run_end(pg, a);
    if (end > (uint64_t)pg + ft.len[i])
        end = (uint64_t)pg + ft.len[i];
    if (end <= (uint64_t)pg + 1)
        return 1;
    if (ft.soft[i] && (ft.soft[i] - 1) / SDSM_MGR_CHUNK != pg / SDSM_MGR_CHUNK) {
        ft_confirm(i, pg); /* the run left that manager's run: all touched */
        ft.soft[i] = 0;
    }
    if (!ft.soft[i])
        ft.soft[i] = pg + 2; /* pg + 1 onwards are claimed softly */
    return (uint32_t)(end - pg);
}
