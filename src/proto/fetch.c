/*
 * fetch.c - pages travel from their homes: the fault path (a page nobody
 * here holds is requested from its home, with a sequential prefetch
 * window), the replies being installed, and the first-touch claims that
 * decide a home (how many pages a claim asks for: claim.c).  The home's
 * end of a fetch is serve.c; a page made
 * writable, open.c.  A page is never readable before its contents are in
 * place, and never writable before it is on the dirty list.
 */
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
#include "proto/ahead.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "proto/proto.h"
#include "proto/zcopy.h"
#include "sdsm.h"

/*
 * Fetch tags.  Every request carries a tag (its header's seq), recorded
 * under the page lock for each page it asks for, and a reply is installed
 * only on a page still waiting for that very request: a reply overtaken by
 * sdsm_free, a new allocation of the same range and a new fetch of the page
 * (from another home, or the same one) is dropped, not taken for the new
 * contents.
 */
static _Atomic uint32_t last_tag;

static uint32_t new_tag(void)
{
    uint32_t t;
    while ((t = atomic_fetch_add(&last_tag, 1) + 1) == 0)
        ;
    return t;
}

/* Page lock held: pg becomes FETCHING for the request tagged tag. */
static void set_fetching(uint32_t pg, uint32_t tag)
{
    sdsm_page_set(pg, SDSM_PG_FETCHING, 0, 0);
    hs.ftag[pg] = tag;
}

/* Page lock held: is this reply (tagged tag) the one pg waits for? */
static int reply_wanted(uint32_t pg, uint32_t tag)
{
    const sdsm_page_t *m = sdsm_page(pg);
    return m->state == SDSM_PG_FETCHING && !(m->flags & SDSM_PGF_AWAIT_PUSH) && hs.ftag[pg] == tag;
}

/*
 * Automatic prefetch.  The faulting thread's stream (ahead.c) gives a
 * stride (forward, backward or longer) and a window; the pages along the
 * stride that are invalid, in the same block and at the same home, and whose
 * locks are free (trylock: we already hold one stripe lock, and stripes
 * wrap, so waiting could deadlock) are asked for in the same request as the
 * faulting page.  Pages taken ahead are marked (hs.ahead) until they are
 * seen in use or dropped, for the statistics.
 */

/* The stream went past the k pages its last window took before pg: used. */
static void ahead_passed(uint32_t pg, int32_t stride, uint32_t k)
{
    uint64_t used = 0;
    for (uint32_t i = 1; i <= k; i++) {
        int64_t q = (int64_t)pg - (int64_t)stride * i;
        if (q >= 0 && q < sdsm_region.npages)
            used += atomic_exchange_explicit(&hs.ahead[q], 0, memory_order_relaxed);
    }
    if (used)
        sdsm_stat_add(SDSM_ST_AHEAD_USED, used);
}

/*
 * Page q of block a, ahead of pg (whose lock the caller holds): if nobody
 * holds it or asks for it and its home is `home`, it becomes FETCHING for
 * the request *tag (made now if 0) and counts as prefetched.  1 taken, 0
 * not free, AHEAD_END no further: outside the block, or its lock is busy (a
 * prefetch never waits for a lock).  (Not an error: the window ends there.)
 */
#define AHEAD_END (-1)
static int take_ahead(uint32_t pg, int64_t q, const sdsm_alloc_rec_t *a, int home, uint32_t *tag)
{
    if (q < a->first || q >= (int64_t)a->first + a->npages)
        return AHEAD_END;
    /* A stride of a multiple of the stripes meets pg's own lock. */
    int own = q % SDSM_PAGE_STRIPES == pg % SDSM_PAGE_STRIPES;
    if (!own && pthread_mutex_trylock(&sdsm_page_stripes[q % SDSM_PAGE_STRIPES]))
        return AHEAD_END;
    const sdsm_page_t *p = sdsm_page((uint32_t)q);
    int ok =
        p->state == SDSM_PG_INVALID && !(p->flags & SDSM_PGF_PENDING) && sdsm_page_home((uint32_t)q) == home;
    if (ok) {
        if (!*tag)
            *tag = new_tag();
        set_fetching((uint32_t)q, *tag);
        atomic_store_explicit(&hs.ahead[q], 1, memory_order_relaxed);
    }
    if (!own)
        sdsm_page_unlock((uint32_t)q);
    return ok;
}

static uint32_t read_ahead(uint32_t pg, int home, uint32_t tag, int32_t *stride)
{
    sdsm_ahead_t w = sdsm_ahead_fault(SDSM_AHEAD_READ, pg, (uint32_t)sdsm_cfg.prefetch);
    *stride = w.stride;
    ahead_passed(pg, w.stride, w.passed);
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    uint32_t k = 0;
    while (k < w.win && a && take_ahead(pg, (int64_t)pg + (int64_t)w.stride * (k + 1), a, home, &tag) > 0)
        k++;
    sdsm_ahead_taken(SDSM_AHEAD_READ, pg, w.stride, k);
    if (k)
        sdsm_stat_add(SDSM_ST_AHEAD_PAGES, k);
    return k;
}

/* The tag of this thread's last fault request (join_ahead). */
static __thread uint32_t my_tag __attribute__((tls_model("initial-exec")));

/*
 * Page lock held: this thread is about to wait for pg, which another thread
 * asked for.  The threads of a rank often sweep the same pages (each needs
 * all of a vector), and only the first to fault on a page reaches
 * read_ahead: the others' streams saw faults here and there and never grew
 * their windows, so with 4 threads cg sent twice the FETCHs of 1 thread.
 * The waiter's stream learns from pg as if it had faulted there, and the
 * pages of its window past those already in flight are asked for now, in
 * one run.  Returns the pages asked for.
 */
static uint32_t join_ahead(uint32_t pg, int home)
{
    sdsm_ahead_t w = sdsm_ahead_fault(SDSM_AHEAD_READ, pg, (uint32_t)sdsm_cfg.prefetch);
    ahead_passed(pg, w.stride, w.passed);
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (!a || home < 0 || home == hs.me || (w.stride != 1 && w.stride != -1))
        return 0;
    uint32_t k, n = 0, first = 0, tag = 0;
    for (k = 1; k <= w.win && n < PREFETCH_MAX; k++) {
        int64_t q = (int64_t)pg + (int64_t)w.stride * k;
        int ok = take_ahead(pg, q, a, home, &tag);
        if (ok == AHEAD_END || (!ok && n)) /* past the run: one request */
            break;
        if (ok) {
            if (!n++)
                my_tag = tag;
            first = (uint32_t)q;
        }
    }
    sdsm_ahead_taken(SDSM_AHEAD_READ, pg, w.stride, k - 1);
    if (n) {
        uint32_t q[2] = {w.stride > 0 ? first - (n - 1) : first, n};
        sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), tag, q, 8, NULL, 0);
        sdsm_stat_add(SDSM_ST_AHEAD_PAGES, n);
    }
    return n;
}

/* Returns the pages asked for (for the trace). */
static uint32_t start_fetch(uint32_t pg, int home)
{
    uint32_t tag = my_tag = new_tag();
    set_fetching(pg, tag);
    if (home < 0) {
        uint32_t q[2] = {pg, sdsm_home_claim_run(pg)};
        int mgr = sdsm_page_manager(pg, hs.n);
        sdsm_net_pin(mgr); /* the fault waits for the answer (net/pin.c) */
        sdsm_net_send(mgr, SDSM_MSG_HOME_REQ, 0, 0, q, 8, NULL, 0);
        return 1;
    }
    int32_t stride = 1;
    uint32_t k = read_ahead(pg, home, tag, &stride);
    sdsm_net_pin(home);
    /* At most SDSM_FETCH_RUN_MAX pages a request, the one holding pg first:
     * the fault waits for that reply only, and a long window's other
     * requests stream in behind it while the thread reads the first. */
    for (uint32_t done = 0; done < 1 + k;) {
        uint32_t n = 1 + k - done < SDSM_FETCH_RUN_MAX ? 1 + k - done : SDSM_FETCH_RUN_MAX;
        uint32_t from = (uint32_t)((int64_t)pg + (int64_t)stride * done);
        if (stride == 1 || stride == -1 || n == 1) { /* a run: one reply message */
            uint32_t q[2] = {stride < 0 ? from - (n - 1) : from, n};
            sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), tag, q, 8, NULL, 0);
        } else {
            uint32_t q[3] = {from, n, (uint32_t)stride};
            sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), tag, q, 12, NULL, 0);
        }
        done += n;
    }
    return 1 + k;
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
static void prefetch_send(int home, uint32_t first, uint32_t n, uint32_t tag, int call)
{
    if (!n)
        return;
    uint32_t q[2] = {first, n};
    sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), tag, q, 8, NULL, 0);
    sdsm_stat_add(call ? SDSM_ST_PREFETCH_PAGES : SDSM_ST_REREAD_PAGES, n);
    sdsm_stat_add(call ? SDSM_ST_PREFETCH_REQS : SDSM_ST_REREAD_REQS, 1);
}

/* The run being gathered by a prefetch: pages from run at run_home. */
typedef struct {
    uint32_t run, nrun, tag;
    int run_home;
    int call; /* sdsm_prefetch's (its statistics), or SDSM_REREAD's */
} prefetch_run_t;

/* pg joins the prefetch if it is invalid here and homed elsewhere (its run
 * goes when pg cannot extend it); mark, if given, is called for each page
 * asked for (page lock held). */
static void prefetch_page(prefetch_run_t *r, uint32_t pg, void (*mark)(uint32_t))
{
    sdsm_page_lock(pg);
    sdsm_page_t *p = sdsm_page(pg);
    int home = sdsm_page_home(pg);
    int ask = sdsm_alloc_find(pg) && p->state == SDSM_PG_INVALID && !(p->flags & SDSM_PGF_PENDING) &&
              home >= 0 && home != hs.me;
    if (!ask || home != r->run_home || r->nrun == SDSM_FETCH_RUN_MAX || pg != r->run + r->nrun) {
        prefetch_send(r->run_home, r->run, r->nrun, r->tag, r->call);
        r->nrun = 0;
    }
    if (ask && r->nrun++ == 0) {
        r->run = pg;
        r->run_home = home;
        r->tag = new_tag();
    }
    if (ask) {
        set_fetching(pg, r->tag);
        if (mark)
            mark(pg);
    }
    sdsm_page_unlock(pg);
}

void sdsm_home_prefetch(uint32_t first, uint32_t n)
{
    prefetch_run_t r = {0, 0, 0, -1, 1};
    for (uint32_t pg = first; pg < first + n; pg++)
        prefetch_page(&r, pg, NULL);
    prefetch_send(r.run_home, r.run, r.nrun, r.tag, 1);
}

void sdsm_home_prefetch_list(const uint32_t *pages, uint32_t n, void (*mark)(uint32_t))
{
    prefetch_run_t r = {0, 0, 0, -1, 0};
    for (uint32_t i = 0; i < n; i++)
        if (!i || pages[i] != pages[i - 1])
            prefetch_page(&r, pages[i], mark);
    prefetch_send(r.run_home, r.run, r.nrun, r.tag, 0);
}

static int home_fault(uint32_t pg, int is_write);

int sdsm_home_fault(uint32_t pg, int is_write)
{
    int rc = home_fault(pg, is_write);
    sdsm_net_unpin(); /* if no wait ended the request pins (net/pin.c) */
    return rc;
}

/* Page lock held, pg shielded (another rank's diffs are landing, lift.c):
 * wait for it; if a publish holds it, its writers are asked once to
 * publish now. */
static void wait_shielded(uint32_t pg, int *asked_lift)
{
    if (hs.held[pg] && !*asked_lift) { /* held: its writers may publish now (lift.c) */
        *asked_lift = 1;
        sdsm_net_send(hs.me, SDSM_MSG_PUBLISH_ASK, 0, 0, &pg, 4, NULL, 0);
    }
    sdsm_page_wait(pg);
}

/* Page lock held, pg on its way (FETCHING or INVALID, or a write waiting
 * for its pending diff): wait for it.  The first wait for another thread's
 * fetch joins that thread's stream (join_ahead).  Returns the pages asked
 * for. */
static uint32_t wait_arrival(uint32_t pg, int home, int *joined)
{
    const sdsm_page_t *p = sdsm_page(pg);
    uint32_t asked = 0;
    if (atomic_exchange_explicit(&hs.ahead[pg], 0, memory_order_relaxed))
        sdsm_stat_add(SDSM_ST_AHEAD_USED, 1); /* taken ahead, wanted before it came */
    if (!*joined && p->state == SDSM_PG_FETCHING && hs.ftag[pg] != my_tag && sdsm_cfg.prefetch > 0) {
        *joined = 1;
        asked = join_ahead(pg, home);
    }
    sdsm_page_wait(pg);
    return asked;
}

/* Page lock held, a write to READ_ONLY pg: 1 when it is open (the cut
 * entered: the caller leaves it), 0 when a cut was being taken and has
 * been waited for (the page lock dropped meanwhile: look again). */
static int open_for_write(uint32_t pg, int home, int is_write)
{
    if (!sdsm_home_cut_enter()) { /* a cut is being taken: after it */
        sdsm_page_unlock(pg);
        sdsm_home_cut_wait();
        sdsm_page_lock(pg);
        return 0;
    }
    sdsm_home_open(pg, home, is_write);
    return 1;
}

/* Page lock held: the access is allowed by pg's state: another thread
 * resolved it, or a batched protection change is still on its way.  Repair
 * it, unless we waited for it to arrive: an installer maps a page before it
 * publishes its state (install_run), so the mapping is right already (and
 * if a batched change is still on its way after all, the access faults
 * once more and is repaired then). */
static void repair_mapping(uint32_t pg, int waited)
{
    if (!waited)
        sdsm_page_protect(pg, 1, sdsm_page(pg)->state);
}

static int home_fault(uint32_t pg, int is_write)
{
    if (!sdsm_alloc_find(pg))
        return SDSM_EINVAL; /* not in a live block: the fault is the program's (mem/fault.c chains it) */
    sdsm_stat_add(is_write > 0 ? SDSM_ST_WRITE_FAULTS : SDSM_ST_READ_FAULTS, 1);
    uint64_t t0 = sdsm_trace_t0(), asked = 0;
    int joined = 0, waited = 0, entered = 0, asked_lift = 0;
    sdsm_page_lock(pg);
    sdsm_home_reread_fault(pg);
    for (;;) {
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        if (hs.applying[pg]) { /* another rank's diffs are landing (lift.c, shield) */
            wait_shielded(pg, &asked_lift);
            waited = 1;
            continue;
        }
        if (p->state == SDSM_PG_INVALID && home == hs.me) {
            /* First touch at the home: read-only first, so a write takes the
             * write path below (twins and hooks in one place). */
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 1, !is_write);
            sdsm_home_ft_touched(pg);
            continue;
        }
        p->flags &= (uint8_t)~SDSM_PGF_IDLE; /* used: the unmap time-out starts again */
        if (p->state == SDSM_PG_INVALID && !(p->flags & SDSM_PGF_PENDING))
            asked += start_fetch(pg, home);
        /* A write to a page whose diff another thread's release has made but
         * not sent yet waits until it is on its way: the page's next diff -
         * sent early if an invalidation meets it dirty (copies.c) - must not
         * reach the home before it, or the home applies the older diff last
         * and the newer writes it overlaps are lost. */
        int pending_write = p->state == SDSM_PG_READ_ONLY && is_write && (p->flags & SDSM_PGF_PENDING);
        if (p->state == SDSM_PG_FETCHING || p->state == SDSM_PG_INVALID || pending_write) {
            asked += wait_arrival(pg, home, &joined);
            waited = 1;
            continue;
        }
        if (p->state == SDSM_PG_READ_ONLY && is_write) {
            if (!open_for_write(pg, home, is_write)) {
                waited = 1;
                continue;
            }
            entered = 1;
            break;
        }
        repair_mapping(pg, waited);
        break;
    }
    sdsm_page_unlock(pg);
    if (entered)
        sdsm_home_cut_leave();
    SDSM_TRACE(is_write > 0 ? SDSM_TR_FAULT_WRITE : SDSM_TR_FAULT_READ, t0, pg, sdsm_page_home(pg),
               asked * hs.ps);
    return 0;
}

static int on_fetch_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages ||
        (h->type == SDSM_MSG_FETCH_REPZ && sdsm_diff_check(p + 8, h->len - 8, hs.ps)))
        return SDSM_EPROTO;
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (!reply_wanted(pg, h->seq)) { /* overtaken by sdsm_free (and a new fetch): drop it */
        sdsm_page_unlock(pg);
        return 0;
    }
    if (m->flags & SDSM_PGF_STALE) { /* served before a barrier that made it stale */
        m->flags &= (uint8_t)~SDSM_PGF_STALE;
        sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0);
        sdsm_home_ahead_drop(pg);
        sdsm_page_unlock(pg);
        sdsm_page_wake(pg, 1);
        return 0;
    }
    if (h->type == SDSM_MSG_FETCH_REPZ) { /* checked on entry */
        memset(sdsm_page_rt(pg), 0, hs.ps);
        sdsm_diff_apply(sdsm_page_rt(pg), p + 8, h->len - 8);
    } else {
        memcpy(sdsm_page_rt(pg), p + 8, hs.ps);
    }
    sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, !sdsm_home_reread_lazy(pg));
    sdsm_page_unlock(pg);
    sdsm_stat_add(SDSM_ST_PAGES_FETCHED, 1);
    sdsm_stat_add(SDSM_ST_BYTES_FETCHED, hs.ps); /* the contents; what travelled is in FETCH_REP* */
    sdsm_page_wake(pg, 1);
    return 0;
}

/* Ask for pg again over TCP, with the same tag (page lock held): its heap
 * could not be read. */
static void refetch(int home, uint32_t pg)
{
    uint32_t q[2] = {pg, 1};
    sdsm_net_send(home, SDSM_MSG_FETCH, 0, hs.ftag[pg], q, 8, NULL, 0);
}

/* Whether a reply tagged tag still fills pg (page lock held); if not, pg is
 * left as it must be: dropped if overtaken by sdsm_free (and a new fetch),
 * invalid if a barrier made it stale while the reply travelled. */
static int reply_fills(uint32_t pg, uint32_t tag)
{
    sdsm_page_t *m = sdsm_page(pg);
    if (!reply_wanted(pg, tag))
        return 0;
    if (m->flags & SDSM_PGF_STALE) {
        m->flags &= (uint8_t)~SDSM_PGF_STALE;
        sdsm_page_set(pg, SDSM_PG_INVALID, 0, 0);
        sdsm_home_ahead_drop(pg);
        return 0;
    }
    return 1;
}

/*
 * A run of pages.  Each page still waiting for its contents gets them
 * first, copied under its lock: from the reply (data), or from the home's
 * heap (data NULL: FETCH_ZC), one copy per stretch of pages that want it
 * (zcopy.c says why a later copy is right).  A failed read gives
 * the heap up, and the pages stay FETCHING, asked for again over TCP.
 * Then the run is made readable with one mprotect (per stretch of pages
 * that were installed), and only then are the states published: a thread
 * faulting on one of these pages meanwhile waits for the state, and a page
 * is never READ_ONLY before its mapping is.
 */
/* Page first + i locked and wanted, its contents in src's heap (FETCH_ZC):
 * the stretch of wanted pages from it whose locks are free is filled with
 * one copy; their locks are released.  Returns the index to go on from. */
static uint32_t copy_from_heap(int src, uint32_t first, uint32_t i, uint32_t count, uint8_t *got,
                               uint32_t tag)
{
    uint32_t pg = first + i;
    /* From the home's heap: the stretch of wanted pages whose locks are
     * free (trylock: a stretch may wrap round the lock stripes), held
     * while one copy fills them. */
    uint32_t j = i + 1, next = 0; /* next: past j, which was seen unwanted */
    while (j < count && !sdsm_page_trylock(first + j)) {
        got[j] = (uint8_t)reply_fills(first + j, tag);
        if (!got[j]) {
            sdsm_page_unlock(first + j);
            next = j + 1;
            break;
        }
        j++;
    }
    int bad = sdsm_zcopy_read(src, pg, j - i, sdsm_page_rt(pg)) != 0;
    for (uint32_t k = i; k < j; k++) {
        if (bad) {
            refetch(src, first + k);
            got[k] = 0;
        }
        sdsm_page_unlock(first + k);
    }
    return next ? next : j;
}

/* The pages of the run that got their contents (got) are made readable,
 * one mprotect per stretch, and only then their states published. */
static void publish_run(uint32_t first, uint32_t count, const uint8_t *got, uint32_t tag)
{
    /* Pages fetched again after a barrier stay without access (reread.c;
     * hs.reread is set once, at init: with it off, no page lock here). */
    uint8_t map[SDSM_FETCH_RUN_MAX];
    for (uint32_t i = 0; i < count; i++) {
        map[i] = got[i];
        if (got[i] && hs.reread) {
            sdsm_page_lock(first + i);
            map[i] = !sdsm_home_reread_lazy(first + i);
            sdsm_page_unlock(first + i);
        }
    }
    for (uint32_t i = 0; i < count;) {
        uint32_t j = i;
        while (j < count && map[j])
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
        if (reply_wanted(pg, tag))
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, 0, 0);
        else /* changed by this rank's threads in between: its mapping follows its state */
            sdsm_page_protect(pg, 1, (sdsm_pstate_t)m->state);
        sdsm_page_unlock(pg);
    }
}

static void install_run(int src, uint32_t first, uint32_t count, const uint8_t *data, uint32_t tag)
{
    uint8_t got[SDSM_FETCH_RUN_MAX];
    uint32_t ngot = 0;
    for (uint32_t i = 0; i < count;) {
        uint32_t pg = first + i;
        sdsm_page_lock(pg);
        got[i] = (uint8_t)reply_fills(pg, tag);
        if (!got[i] || data) {
            if (got[i])
                memcpy(sdsm_page_rt(pg), data + (size_t)i * hs.ps, hs.ps);
            sdsm_page_unlock(pg);
            i++;
            continue;
        }
        i = copy_from_heap(src, first, i, count, got, tag);
    }
    for (uint32_t i = 0; i < count; i++)
        ngot += got[i];
    publish_run(first, count, got, tag);
    sdsm_stat_add(SDSM_ST_PAGES_FETCHED, ngot);
    /* Zero-copy reads too: a user compares it with the pages; the wire's share is in the messages. */
    sdsm_stat_add(SDSM_ST_BYTES_FETCHED, (uint64_t)ngot * hs.ps);
    sdsm_page_wake(first, count);
}

static int on_fetch_run(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count < 2 || count > SDSM_FETCH_RUN_MAX ||
        count > sdsm_region.npages - first || (size_t)count * hs.ps != h->len - 8)
        return SDSM_EPROTO;
    install_run(src, first, count, p + 8, h->seq);
    return 0;
}

/* The home served [first, first + count) and left the copying to us. */
static int on_fetch_zc(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t first = rd32(p), count = rd32(p + 4);
    if (first >= sdsm_region.npages || count < 1 || count > SDSM_FETCH_RUN_MAX ||
        count > sdsm_region.npages - first)
        return SDSM_EPROTO;
    install_run(src, first, count, NULL, h->seq); /* a heap we cannot read: asked for again (refetch) */
    return 0;
}

/*
 * Homes learned from a manager's answer: the pages after pg in its run that
 * somebody has claimed.  Only pages of pg's own first-touch allocation,
 * whose homes, once claimed, change only by a collective move or free; a
 * page whose home is known here already keeps it.
 */
static void learn_homes(uint32_t pg, const uint8_t *next, uint32_t n)
{
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (!a || a->home != SDSM_HOME_FIRST_TOUCH)
        return;
    for (uint32_t i = 0; i < n && pg + 1 + i < a->first + a->npages; i++) {
        int16_t home;
        memcpy(&home, next + 2 * i, 2);
        if (home < 0)
            continue;
        uint32_t q = pg + 1 + i;
        sdsm_page_lock(q);
        sdsm_page_t *m = sdsm_page(q);
        if (!m->home1)
            m->home1 = home + 1;
        sdsm_page_unlock(q);
    }
}

static int on_home_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    int32_t home = (int32_t)rd32(p + 4);
    if (h->seq) { /* answer to sdsm_proto_home_query (or a reply nobody waits for) */
        if (home < -1 || home >= hs.n || h->len != 8)
            return SDSM_EPROTO;
        return sdsm_rpc_reply(h->seq, 0, &home, 4) ? SDSM_EPROTO : 0;
    }
    uint32_t nnext = (h->len - 8) / 2;
    if (pg >= sdsm_region.npages || home < 0 || home >= hs.n || src != sdsm_page_manager(pg, hs.n) ||
        nnext > SDSM_MGR_CHUNK - 1 - pg % SDSM_MGR_CHUNK)
        return SDSM_EPROTO;
    for (uint32_t i = 0; i < nnext; i++) {
        int16_t hq;
        memcpy(&hq, p + 8 + 2 * i, 2);
        if (hq < -1 || hq >= hs.n)
            return SDSM_EPROTO;
    }
    learn_homes(pg, p + 8, nnext); /* before pg: a waiter on pg finds them known */
    sdsm_page_lock(pg);
    sdsm_page_t *m = sdsm_page(pg);
    if (m->state != SDSM_PG_FETCHING) {
        sdsm_page_unlock(pg);
        return SDSM_EPROTO;
    }
    m->home1 = home + 1;
    if (home == hs.me) { /* we won the claim: the page is ours, and zero */
        sdsm_page_set(pg, SDSM_PG_INVALID, 1, 0);
        sdsm_page_unlock(pg);
        sdsm_page_wake(pg, 1);
        return 0;
    }
    uint32_t q[2] = {pg, 1};
    sdsm_net_send(home, SDSM_MSG_FETCH, sdsm_zcopy_flags(home), hs.ftag[pg], q, 8, NULL, 0);
    sdsm_page_unlock(pg);
    return 0;
}

int sdsm_proto_home_query(uint32_t pg)
{
    int32_t home = -1;
    uint32_t q[2] = {pg, 0};
    sdsm_rpc_t r = {.buf = &home, .cap = 4};
    uint32_t id = sdsm_rpc_open(&r, 1);
    sdsm_net_send(sdsm_page_manager(pg, hs.n), SDSM_MSG_HOME_REQ, 0, id, q, 8, NULL, 0);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    return home >= 0 ? home : SDSM_ENOHOME;
}

void sdsm_home_fetch_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REP, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_REPZ, on_fetch_rep);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_RUN, on_fetch_run);
    sdsm_msg_set_handler(SDSM_MSG_FETCH_ZC, on_fetch_zc);
    sdsm_msg_set_handler(SDSM_MSG_HOME_REP, on_home_rep);
}
