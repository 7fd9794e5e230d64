/*
 * release.c - the HLRC release that hlrc and update share:
 *  - Lock release (eager, SCASH's ERC): the diffs go to the homes flagged
 *    EAGER; each home applies them, invalidates every other copy of those
 *    pages and only then acknowledges (inval.c).  When unlock returns no
 *    stale copy exists anywhere, so any acquire ordered after it - through
 *    any chain of locks or barriers - sees the writes.
 *  - Barrier: the diffs go to the homes (no invalidation round), and the
 *    list of pages each rank wrote rides on the barrier messages; the
 *    manager merges them and each protocol applies the merged list at
 *    barrier completion (notice.c).
 * A home page nobody else holds stays writable and costs nothing.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
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

#define BATCH_LIMIT (1u << 20) /* flush a per-home diff batch past this size */

/* Does a home page need its writes announced?  Someone else holds a copy,
 * or an invalidation of one is still on its way (the holder may still read
 * its old copy: our next release must wait for that, through on_diff).
 * Page lock held. */
static int home_shared(uint32_t pg) { return hs.inflight[pg] || sdsm_copyset_others(pg); }

/*
 * The release works through the sorted dirty pages in chunks of consecutive
 * pages (at most CHUNK, so their stripe locks are distinct), all locked at
 * once: the states change first, then the mappings of the pages going back
 * to read-only follow with one mprotect per stretch instead of one per page,
 * and only then are the diffs made.  Holding several stripe locks is safe:
 * releases take turns (release_mtx), and every other path that holds a page
 * lock takes further ones with trylock only.
 */
#define CHUNK SDSM_PAGE_LOCK_RUN

typedef struct chunk_page {
    uint8_t protect; /* READ_WRITE -> READ_ONLY: its mapping follows */
    uint8_t diff;    /* its diff goes to its home */
    uint8_t notice;  /* bare notice to its home (eager) */
    uint8_t written; /* announced at the barrier */
} chunk_page_t;

/* Page lock held, pg a home page written here that others hold: is it
 * kept open - never write-protected (alloc.h), or hot and kept so (hot.c)? */
static int kept_open(uint32_t pg, int written)
{
    return sdsm_page_announced(pg) ||
           (sdsm_home_hot(pg) &&
            sdsm_home_hot_keep(pg, atomic_load_explicit(&hs.interval, memory_order_relaxed), written));
}

/* Page lock held: the state change of pg (pass 1).  written: whether the
 * kernel saw the home write pg since the last release (-1: not asked). */
static chunk_page_t release_state(uint32_t pg, int eager, int written)
{
    chunk_page_t c = {0, 0, 0, 0};
    sdsm_page_t *p = sdsm_page(pg);
    int home = sdsm_page_home(pg);
    /* FLUSHED on a home page kept writable: written through the runtime
     * view (an atomic done here, atomic.c), which the kernel's written-page
     * tracking cannot see. */
    int flushed = (p->flags & SDSM_PGF_FLUSHED) != 0;
    p->flags &= (uint8_t) ~(SDSM_PGF_DIRTY | SDSM_PGF_FLUSHED);
    if (p->state == SDSM_PG_READ_WRITE && home == hs.me && !home_shared(pg)) {
        /* Nobody else holds this home page: nothing to announce, and it
         * stays writable, so the next interval's writes cost no fault.
         * A fetch of it (on_fetch) write-protects it again first. */
    } else if (p->state == SDSM_PG_READ_WRITE && home == hs.me && kept_open(pg, written)) {
        /* Never write-protected (alloc.h), or hot (hot.c): taken as written
         * in every interval while others hold copies, unless the kernel
         * says it was not written (written-page tracking, for both kinds:
         * the master's stack of an OpenMP program is announced, and an
         * unwritten page of main's variables, announced at every release,
         * made every other rank fetch it again after each of rank 0's
         * unlocks), and kept on the dirty list. */
        int announce = written != 0 || flushed;
        sdsm_stat_add(announce ? SDSM_ST_HOT_KEPT : SDSM_ST_HOT_CLEAN, 1);
        c.notice = eager && announce;
        c.written = announce;
        sdsm_page_mark_dirty(pg);
    } else if (p->state == SDSM_PG_READ_WRITE) {
        /* Protect before the diff: a write by another thread after this
         * faults and waits for the lock instead of racing with the diff. */
        sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == hs.me, 0);
        if (home != hs.me)
            p->flags &= (uint8_t)~SDSM_PGF_TWIN;
        c.protect = 1;
        c.diff = home != hs.me;
        c.notice = home == hs.me && eager;
        /* A page written only at its home, of which nobody else holds a
         * copy, needs no notice: whoever fetches it later gets it whole.
         * (Copysets change under the page lock, which we hold.) */
        c.written = home != hs.me || home_shared(pg);
        /* Written while nobody held it (an invalidation of the last copy
         * still in flight): until announced, it is served as it is. */
        if (home == hs.me && c.written && !(p->flags & SDSM_PGF_TWIN))
            hs.exposed[pg] = 1;
    } else if (flushed) {
        c.notice = eager && home >= 0;
        c.written = 1;
    }
    /* A home page's twin is what others are served while the home writes
     * it (serve.c): it goes when the writes are announced - with the
     * invalidations of the home's own notice (inval.c, on_diff), or at the
     * barrier's completion (notice.c) - so no reader sees the new contents
     * of one page while its copy of another the home wrote before is
     * still valid.  Unannounced, it goes now. */
    if (home == hs.me && !c.notice && !c.written)
        p->flags &= (uint8_t)~SDSM_PGF_TWIN;
    return c;
}

void sdsm_home_cut_begin(void)
{
    atomic_fetch_add(&hs.cut, 1);
    while (atomic_load(&hs.opening)) /* a fault past the gate: a few copies and a system call */
        sched_yield();
}

void sdsm_home_cut_end(void)
{
    atomic_fetch_sub(&hs.cut, 1);
    atomic_fetch_add(&hs.cut_gen, 1);
    sdsm_wake_all(&hs.cut_gen);
}

int sdsm_home_cut_enter(void)
{
    atomic_fetch_add(&hs.opening, 1);
    if (!atomic_load(&hs.cut))
        return 1;
    atomic_fetch_sub(&hs.opening, 1);
    return 0;
}

void sdsm_home_cut_leave(void) { atomic_fetch_sub(&hs.opening, 1); }

void sdsm_home_cut_wait(void)
{
    for (;;) {
        uint32_t g = atomic_load(&hs.cut_gen);
        if (!atomic_load(&hs.cut))
            return;
        sdsm_wait_change(&hs.cut_gen, g);
    }
}

/* How a batch of diffs to home goes: eager (a lock release: the home
 * invalidates the other copies before it acknowledges), or unacknowledged
 * to the rank a barrier's arrival goes to next (via, proto.h).  hold: a
 * publish or an arrival to several homes (below). */
static unsigned batch_flags(int eager, int home, int via, uint8_t hold)
{
    unsigned held = hold ? SDSM_DIFF_HOLD | (unsigned)hold << 8 : 0;
    if (eager)
        return SDSM_DIFF_EAGER | held;
    return (home == via ? SDSM_DIFF_NOACK : 0) | held;
}

/*
 * A publish is read by threads that make no synchronization: one that sees
 * a flag from one home must not read its old copy of data homed at another
 * whose invalidation is still on its way.  So a publish whose pages have
 * several homes holds them at every home (lift.c, DIFF_HOLD) until all
 * homes have acknowledged - every old copy is gone - and then lifts them
 * (LIFT).  Pages of one home need no hold: that home invalidates a
 * holder's copies in one message, ahead of any reply to it.  A barrier's
 * arrival to several homes is held without the invalidations (lift.c,
 * hold): the barrier's completion lifts it, or publish_arrival below.
 */
static int several_homes(const uint32_t *pages, uint32_t n)
{
    int first = -1;
    for (uint32_t i = 0; i < n; i++) {
        int h = sdsm_page_home(pages[i]);
        if (h < 0)
            continue;
        if (first >= 0 && h != first)
            return 1;
        first = h;
    }
    return 0;
}

enum { LIFT_EAGER = 1, LIFT_ARRIVAL = 2 };

static void send_batch(int home, unsigned flags, sdsm_rpc_t *r, uint32_t id)
{
    if (hs.out[home].len && (flags & SDSM_DIFF_HOLD))
        hs.lift[home] |= flags & SDSM_DIFF_EAGER ? LIFT_EAGER : LIFT_ARRIVAL;
    sdsm_batch_send(&hs.out[home], home, flags, r, id);
}

/* The generation of a publish's holds: those of early batches sent
 * before this are lifted with it too (copies.c, early_publish), the later
 * ones wait for the next. */
static uint8_t next_gen(void)
{
    uint8_t g = (uint8_t)(atomic_load(&hs.hold_gen) + 1);
    g = g ? g : 1;
    atomic_store(&hs.hold_gen, g);
    return g;
}

/* Generation gen's publish: the homes holding early batches of gen or
 * older get its LIFT too. */
static void take_dues(uint8_t gen)
{
    for (int h = 0; h < hs.n; h++) {
        uint8_t d = atomic_load(&hs.lift_due[h]);
        if (d && (int8_t)(uint8_t)(gen - d) >= 0 && atomic_compare_exchange_strong(&hs.lift_due[h], &d, 0))
            hs.lift[h] |= LIFT_EAGER;
    }
}

/* The homes marked with any of mask get a LIFT; every mark goes. */
static void lift(uint8_t gen, unsigned mask)
{
    uint32_t g = gen;
    for (int h = 0; h < hs.n; h++) {
        if (hs.lift[h] & mask)
            sdsm_net_send(h, SDSM_MSG_LIFT, 0, 0, &g, 4, NULL, 0);
        hs.lift[h] = 0;
    }
}

/*
 * The release proper.  notices: collect the pages written into hs.notices
 * for a barrier (which reads them after release_mtx is dropped, until its
 * next release: a quiet publish must not overwrite them).  *written: how
 * many pages it announced; *again (publish only): how many of them the
 * previous publish had announced too.
 */
static uint32_t publish_arrival(void);

/* Release mutex held: a release begins.  Returns its hold generation (0:
 * none) and whether threads may read flags here (*flags_read); a publish's
 * cut is begun, and the early batches its lift covers are taken. */
static uint8_t release_begin(sdsm_sync_kind_t kind, int eager, const uint32_t *again, int *flags_read)
{
    /* A held arrival is lifted before any later generation's lift could
     * (a barrier whose threads are not all in it). */
    if (hs.arrival_gen)
        publish_arrival();
    atomic_fetch_add_explicit(&hs.interval, 1, memory_order_relaxed);
    /* A publish is read by threads that make no synchronization (flags):
     * it must be a consistent cut.  A release need not be - the program
     * orders the writes it must carry before the release. */
    /* (At a barrier every thread of this rank has stopped writing.)  The
     * generation before the cut: an early batch that took it took its
     * pages before the cut. */
    /* Where threads may spin on flags (a quiet publisher runs), every
     * release over several homes is held (below): it has a generation. */
    *flags_read = sdsm_home_twins_shared && sdsm_home_publish_soon;
    uint8_t gen = again || kind == SDSM_SYNC_BARRIER || (eager && *flags_read) ? next_gen() : 0;
    if (again)
        sdsm_home_cut_begin();
    if (gen)
        take_dues(gen);
    return gen;
}

/* One release's pass over its sorted dirty pages (release_run). */
typedef struct release_pass {
    int eager, via, notices;
    uint32_t *again; /* a publish: pages the previous publish announced too */
    uint8_t pno;     /* a publish: its number (publish_no) */
    uint8_t hold;    /* the generation its batches are held under (0: not held) */
    uint32_t nn;     /* pages written, announced (hs.notices[0, nn) for a barrier) */
    uint32_t npend;  /* pages marked PENDING, kept in work[0, npend) */
    sdsm_rpc_t *r;   /* the homes' acknowledgements */
    uint32_t id;
} release_pass_t;

/*
 * Where flags are read, a lock release over several homes is held like a
 * publish: a thread spinning on a flag it carries makes no acquire (a
 * thread ending its share of a pipeline releases as it leaves: the flag
 * reached one home, the data's invalidation at another was still on its
 * way).  A barrier's arrival there reaches its homes unannounced, so a
 * reader served the flag at one home would keep its old copy of data homed
 * at another until the barrier completed (a pipeline's last flag is
 * written just before the barrier): over several homes it is held too,
 * until the barrier completes or publish_arrival has announced it.  Sets
 * rp->hold for the n pages in work; returns whether the release is such a
 * held arrival.
 */
static int release_hold(release_pass_t *rp, sdsm_sync_kind_t kind, int flags_read, uint32_t n, uint8_t gen)
{
    int several = (rp->again || flags_read) && several_homes(hs.work, n);
    int held_arrival = kind == SDSM_SYNC_BARRIER && rp->notices && flags_read && several;
    rp->hold = several && (rp->again || rp->eager || held_arrival) ? gen : 0;
    return held_arrival;
}

/* Page lock held, pass 2 of a chunk: pg's diff (or bare notice) joins its
 * home's batch, which goes once it is big; the lock is dropped. */
static void release_page(release_pass_t *rp, uint32_t pg, chunk_page_t c)
{
    int home = sdsm_page_home(pg);
    if (c.diff) {
        sdsm_batch_add(&hs.out[home], pg, sdsm_page_twin(pg));
        sdsm_page(pg)->flags |= SDSM_PGF_PENDING;
        hs.work[rp->npend++] = pg;
    } else if (c.notice) {
        sdsm_batch_add(&hs.out[home], pg, NULL);
    }
    sdsm_page_unlock(pg);
    if (c.written && rp->notices)
        hs.notices[rp->nn] = pg;
    if (c.written && rp->again) {
        *rp->again += hs.published[pg] == (uint8_t)(rp->pno - 1 ? rp->pno - 1 : 255);
        hs.published[pg] = rp->pno;
    }
    rp->nn += c.written;
    if (home >= 0 && hs.out[home].len >= BATCH_LIMIT)
        send_batch(home, batch_flags(rp->eager, home, rp->via, rp->hold), rp->r, rp->id);
}

/* The chunk of consecutive dirty pages from work[i] (of n): all locked,
 * their states changed, their mappings protected per stretch, then their
 * diffs made.  Returns how many pages it took. */
static uint32_t release_chunk(release_pass_t *rp, uint32_t i, uint32_t n)
{
    chunk_page_t c[CHUNK];
    uint32_t m = 1;
    while (i + m < n && m < CHUNK && hs.work[i + m] == hs.work[i] + m)
        m++;
    uint32_t first = hs.work[i];
    for (uint32_t k = 0; k < m; k++)
        sdsm_page_lock(first + k);
    int8_t wr[CHUNK];
    sdsm_home_hot_written(first, m, wr);
    for (uint32_t k = 0; k < m; k++)
        c[k] = release_state(first + k, rp->eager, wr[k]);
    for (uint32_t k = 0; k < m;) {
        uint32_t e = k;
        while (e < m && c[e].protect)
            e++;
        if (e > k)
            sdsm_page_protect(first + k, e - k, SDSM_PG_READ_ONLY);
        k = e + 1;
    }
    for (uint32_t k = 0; k < m; k++)
        release_page(rp, first + k, c[k]);
    return m;
}

/* The diffs are queued on their connections: a fetch sent from now on
 * reaches each home after them, so the pages may be fetched again, and
 * written again (a faulting thread may wait for either: fetch.c). */
static void pending_clear(uint32_t npend)
{
    for (uint32_t i = 0; i < npend; i++) {
        sdsm_page_t *p = sdsm_page(hs.work[i]);
        sdsm_page_lock(hs.work[i]);
        p->flags &= (uint8_t)~SDSM_PGF_PENDING;
        sdsm_page_unlock(hs.work[i]);
    }
    /* A system call only where a thread sleeps (every bucket once for
     * many pages). */
    if (npend >= SDSM_PAGE_WAKE_BUCKETS)
        sdsm_page_wake(0, SDSM_PAGE_WAKE_BUCKETS);
    else
        for (uint32_t i = 0; i < npend; i++)
            sdsm_page_wake(hs.work[i], 1);
}

/* Both mutexes held, no page taken (the common case of a lock or barrier
 * without writes): the release ends at once; both are dropped. */
static void release_none(uint8_t gen, const uint32_t *again)
{
    pthread_mutex_unlock(&hs.take_mtx);
    sdsm_count_wait_zero(&hs.early);
    lift(gen, LIFT_EAGER);
    if (again)
        sdsm_home_cut_end();
    atomic_fetch_sub(&hs.releasing, 1);
    pthread_mutex_unlock(&hs.release_mtx);
}

static int release_run(sdsm_sync_kind_t kind, int via, int notices, uint32_t *written, uint32_t *again)
{
    int eager = kind == SDSM_SYNC_LOCK, flags_read;
    sdsm_home_claims_flush();
    pthread_mutex_lock(&hs.release_mtx);
    uint8_t gen = release_begin(kind, eager, again, &flags_read);
    atomic_fetch_add(&hs.releasing, 1);
    pthread_mutex_lock(&hs.take_mtx);
    uint32_t n = sdsm_page_take_dirty(hs.work);
    *written = 0;
    if (again)
        *again = 0;
    if (n == 0) {
        release_none(gen, again);
        return 0;
    }
    release_pass_t rp = {.eager = eager, .via = via, .notices = notices, .again = again};
    if (again) /* 0 stands for "never published" */
        rp.pno = ++hs.publish_no ? hs.publish_no : ++hs.publish_no;
    int held_arrival = release_hold(&rp, kind, flags_read, n, gen);
    qsort(hs.work, n, sizeof *hs.work, sdsm_cmp_u32);
    sdsm_rpc_t r = {0};
    rp.r = &r;
    rp.id = sdsm_rpc_open(&r, 1); /* 1: guard until every batch is sent */
    for (uint32_t i = 0; i < n;)
        i += release_chunk(&rp, i, n);
    for (int h = 0; h < hs.n; h++)
        send_batch(h, batch_flags(eager, h, via, rp.hold), &r, rp.id);
    /* Queued: an invalidation's diffs may follow now (copies.c).  (Before
     * anything below, which may wait for the service thread.) */
    pthread_mutex_unlock(&hs.take_mtx);
    int wst = sdsm_wbuf_drain(); /* the write buffer's early diffs of pages announced here (FLUSHED) */
    pending_clear(rp.npend);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(rp.id);
    /* Diffs an invalidation sent early (copies.c) are this interval's too. */
    sdsm_count_wait_zero(&hs.early);
    /* (A held arrival's early batches wait with it: sdsm_home_arrival_done.) */
    if (held_arrival)
        hs.arrival_gen = gen;
    else
        lift(gen, LIFT_EAGER);
    if (again)
        sdsm_home_cut_end();
    if (kind == SDSM_SYNC_BARRIER && notices) { /* under release_mtx, which publish_arrival reads it under */
        hs.arrived = rp.nn;
        atomic_store(&hs.arrival_open, rp.nn != 0);
    }
    atomic_fetch_sub(&hs.releasing, 1);
    pthread_mutex_unlock(&hs.release_mtx);
    if (r.status || wst)
        sdsm_fatal("a home rejected this rank's diffs (protocol error)");
    *written = rp.nn;
    return 0;
}

/*
 * Release mutex held: the pages of this rank's barrier arrival announced to
 * their homes eagerly (bare notices: their diffs are there already), so
 * that the other copies go now instead of at the barrier's completion.  A
 * rank that reached the barrier may hold the last flag a thread of another
 * rank spins on before it can reach the barrier itself (a pipeline's last
 * stage).  Returns how many pages.
 */
static uint32_t publish_arrival(void)
{
    uint32_t n = hs.arrived;
    if (!n)
        return 0;
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    /* The arrival's generation, or the last publish's: no early batch that
     * came after it is lifted with these. */
    uint8_t gen = hs.arrival_gen ? hs.arrival_gen : atomic_load(&hs.hold_gen);
    gen = gen ? gen : next_gen();
    unsigned flags =
        SDSM_DIFF_EAGER | (several_homes(hs.notices, n) ? SDSM_DIFF_HOLD | (unsigned)gen << 8 : 0);
    for (uint32_t i = 0; i < n; i++) {
        int home = sdsm_page_home(hs.notices[i]);
        if (home >= 0)
            sdsm_batch_add(&hs.out[home], hs.notices[i], NULL);
    }
    for (int h = 0; h < hs.n; h++)
        send_batch(h, flags, &r, id);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    lift(gen, LIFT_EAGER | LIFT_ARRIVAL); /* every home the arrival went to too */
    if (r.status)
        sdsm_fatal("a home rejected this rank's notices (protocol error)");
    hs.arrived = 0;
    atomic_store(&hs.arrival_open, 0);
    hs.arrival_gen = 0;
    return n;
}

void sdsm_home_arrival_done(void)
{
    pthread_mutex_lock(&hs.release_mtx);
    hs.arrived = 0;
    atomic_store(&hs.arrival_open, 0);
    /* Its homes lifted the arrival's own holds as the barrier completed
     * there (lift.c); the early batches that waited for it go now. */
    if (hs.arrival_gen)
        lift(hs.arrival_gen, LIFT_EAGER);
    hs.arrival_gen = 0;
    pthread_mutex_unlock(&hs.release_mtx);
}

int sdsm_home_release(sdsm_sync_kind_t kind, int via, const uint32_t **pages, uint32_t *npages)
{
    uint32_t nn;
    int rc = release_run(kind, via, pages != NULL, &nn, NULL);
    if (pages) {
        *pages = hs.notices;
        *npages = nn;
    }
    return rc;
}

void (*volatile sdsm_home_publish_soon)(void);

/* Page lock held: is pg homed elsewhere and written here since its last
 * diff, or in a release batch not sent yet? */
static int written_for_other(uint32_t pg)
{
    int home = sdsm_page_home(pg);
    const sdsm_page_t *m = sdsm_page(pg);
    return home >= 0 && home != hs.me && (m->state == SDSM_PG_READ_WRITE || (m->flags & SDSM_PGF_PENDING));
}

int sdsm_home_unpublished(void)
{
    if (atomic_load(&hs.releasing) || atomic_load(&hs.early) || atomic_load(&hs.arrival_open))
        return 1;
    for (int h = 0; h < hs.n; h++)
        if (atomic_load(&hs.lift_due[h]))
            return 1;
    uint32_t nd = sdsm_page_dirty_count();
    if (!nd)
        return 0;
    uint32_t *list = malloc((size_t)nd * sizeof *list);
    if (!list)
        return 1; /* (the fetch waits for a publish: slower, not wrong) */
    nd = sdsm_page_dirty_copy(list, nd);
    int any = 0;
    for (uint32_t i = 0; i < nd && !any; i++) {
        sdsm_page_lock(list[i]);
        any = written_for_other(list[i]);
        sdsm_page_unlock(list[i]);
    }
    free(list);
    return any;
}

int sdsm_home_publish(uint32_t *written, uint32_t *again)
{
    int rc = 0;
    *written = *again = 0;
    int due = 0;
    for (int h = 0; h < hs.n && !due; h++)
        due = atomic_load(&hs.lift_due[h]);
    if (due || sdsm_page_dirty_count()) /* (an empty release would still count an interval) */
        rc = release_run(SDSM_SYNC_LOCK, -1, 0, written, again);
    /* (A flush spinning on a flag calls this in a loop: no mutex while
     * there is no arrival to publish.) */
    if (atomic_load(&hs.arrival_open)) {
        pthread_mutex_lock(&hs.release_mtx);
        *written += publish_arrival();
        pthread_mutex_unlock(&hs.release_mtx);
    }
    /* Fetches that waited for this rank's writes to be published are
     * tried again by the service thread (serve.c, defer_fetch). */
    if (atomic_exchange(&hs.deferred, 0))
        sdsm_net_send(hs.me, SDSM_MSG_PUBLISH_ASK, SDSM_PUBLISH_DONE, 0, NULL, 0, NULL, 0);
    return rc;
}