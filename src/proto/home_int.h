/*
 * home_int.h - state shared by the files of the home-based machinery
 * (home.c, fetch.c, open.c, serve.c, release.c, inval.c, lift.c, copies.c,
 * lockfwd.c, notice.c, control.c, and the smaller ones beside them).
 * Internal to src/proto; the protocols themselves use home.h.
 */
#ifndef SDSM_PROTO_HOME_INT_H
#define SDSM_PROTO_HOME_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/stats.h"
#include "mem/page.h"
#include "net/wire.h"
#include "proto/home.h"

/*
 * A home waiting for invalidation acks before it acknowledges an EAGER (or
 * FORWARD) diff.  remaining counts the acks still due plus the older
 * operations this one waits for: a copy holder removed from a page's copyset
 * by an older operation may not have dropped its copy yet, so a later diff
 * of the same page is acknowledged only after that older one is - otherwise
 * its writer could release a lock whose next holder still reads the stale
 * copy.  Operations complete in dependency order; each then releases the
 * operations waiting for it (dep).
 */
typedef struct pending {
    struct pending *next;
    uint32_t id, seq;
    int src;
    uint32_t remaining;
    uint32_t *dep, ndep, capdep; /* ids of operations waiting for this one */
    uint32_t *pages, npages;     /* its pages (their inflight is cleared at the end) */
} pending_t;

typedef struct sdsm_home_state {
    int me, n;
    size_t ps;
    pthread_mutex_t release_mtx; /* one release at a time per rank */
    uint32_t *work;              /* release: dirty pages (npages capacity) */
    uint32_t *notices;           /* release: pages written, for the barrier */
    buf_t *out;                  /* release: per-home batches */
    uint8_t *lift;               /* release: per home, a held batch went there (release.c):
                                     LIFT_EAGER, LIFT_ARRIVAL (the arrival's, lifted there at the
                                     barrier's completion unless publish_arrival lifts it first) */
    _Atomic uint8_t *lift_due;   /* per home: the generation of an early diff batch held there
                                     that waits for a publish to lift it (copies.c,
                                     early_publish; 0: none) */
    _Atomic uint8_t hold_gen;    /* the generation of the last publish's holds (never 0) */
    /* service thread only */
    uint32_t **tgt; /* per-rank invalidation lists */
    uint32_t *tgt_n, *tgt_cap;
    buf_t *fwd;    /* per-rank forwarded diffs (ibec) */
    uint8_t *zero; /* a page of zeros */
    buf_t zbuf;    /* a page encoded against it (handlers only) */
    buf_t run;     /* pages gathered for a fetch reply (handlers only) */
    pending_t *pending;
    uint32_t next_id;
    uint32_t *inflight; /* per page, under its lock: the last operation that may still
                                     be invalidating copies of it (0: none) */
    uint32_t *deps;     /* on_diff: older operations the current one waits for */
    uint32_t ndeps, capdeps;
    _Atomic uint32_t home_data_in; /* pages received for sdsm_set_home moves */
    uint32_t home_data_expected;   /* ...and expected so far (both only grow) */
    uint32_t *ftag;                /* per page, under its lock: tag of the fetch it waits for */
    uint8_t *hot;                  /* per page, under its lock, at its home: written in hot_streak
                                     intervals in a row (HOT_ON: kept open, release.c) */
    uint16_t *hot_last;            /* ...the interval of its last write fault (mod 2^16) */
    _Atomic uint32_t interval;     /* releases so far (written under release_mtx) */
    uint16_t *soft;                /* per page, under its lock, at its manager: claimed ahead by
                                     rank soft - 1 and maybe never touched (claim.c) */
    _Atomic uint8_t *ahead;        /* per page: asked for ahead of a fault, not seen in use yet */
    uint8_t *published;            /* per page, under release_mtx: the last quiet publish that
                                     announced it (its number mod 256; release.c) */
    uint8_t publish_no;            /* ...and the current one */
    uint16_t *applying;            /* per page, under its lock, at its home: batches of other
                                     ranks' diffs being applied or held on it; its mapping has no
                                     access meanwhile (lift.c, SDSM_HOME_TWINS) */
    uint16_t *held;                /* per page, under its lock, at its home: DIFF_HOLD batches
                                     holding it (fetches of it wait, serve.c) */
    uint8_t *solo;                 /* per page, hlrc with SDSM_HOME_MIGRATE: the last barrier that
                                     named it had this rank, not its home, as its only writer */
    int migrate;                   /* home migration on (migrate.c) */
    uint8_t *foreign;              /* per page, under its lock, at its home: another rank wrote it
                                     (its diff came here, or a barrier named it the only writer)
                                     since the home's own last write fault on it; open.c's write
                                     runs stop there (that rank's part of a loop) */
    uint8_t *exposed;              /* per page, under its lock, at its home: written here, taken by
                                     a release that has not announced it yet, with no twin to hide
                                     those writes from readers (release.c); a fetch of it is
                                     guarded as one of a page written unshared (serve.c) */
    uint8_t *unannounced;          /* service thread, per page, at its home: holds diffs of
                                     another rank's barrier release whose other copies are
                                     still valid (inval.c, SDSM_HOME_TWINS) ... */
    buf_t unann_list;              /* ...those pages (u32[], some no longer marked) */
    uint64_t *unann_stale;         /* ...per page, copyset_words words: the ranks whose copy
                                     predates those diffs (under its lock) */
    pthread_mutex_t twin_mtx;      /* guards the two below */
    buf_t twins;                   /* home pages twinned since the last guard (u32[]; some
                                     twins are gone; open.c, open_write) */
    uint8_t *twin_listed;          /* per page: in twins */
    buf_t *holds;                  /* service thread, per rank: the pages its held batches hold
                                     here ({u32 page, u32 gen, u32 shielded}[]) */
    _Atomic uint32_t early;        /* early_publish batches not yet acknowledged (copies.c) */
    _Atomic uint32_t cut;          /* cuts being taken (release.c: sdsm_home_cut_begin) */
    pthread_mutex_t take_mtx;      /* held by a release from taking the dirty list until its
                                     diffs are queued, and by an invalidation that sends
                                     diffs (copies.c): neither overtakes the other's */
    _Atomic uint32_t opening;      /* write faults opening pages past the cut gate */
    _Atomic uint32_t cut_gen;      /* moves when a cut ends (writers wait on it) */
    uint32_t arrived;              /* under release_mtx: pages of this rank's barrier arrival
                                     (notices[0, arrived)) not yet announced eagerly, while the
                                     barrier is not complete (0: none) */
    uint8_t arrival_gen;           /* under release_mtx: the generation that arrival's batches
                                     are held under at their homes (0: not held; release.c) */
    _Atomic uint32_t arrival_open; /* arrived != 0, for the service thread */
    uint8_t *reread;               /* per page, under its lock: reread.c's state (NULL: off) */
    _Atomic uint32_t releasing;    /* releases between taking their pages and their end */
    _Atomic uint32_t deferred;     /* fetches wait for a publish (serve.c, defer_fetch) */
    pthread_mutex_t lockfwd_mtx;
    buf_t lockfwd; /* ibec: diffL applied here since the barrier, in order:
                                     {u32 writer, u32 len, batch[len]}[] */
} sdsm_home_state_t;

static inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The one instance (home.c); hs is the short name every home file uses. */
extern sdsm_home_state_t sdsm_home_state;
#define hs sdsm_home_state

/* The ranks whose copy of pg predates another rank's unannounced barrier
 * diffs at this home (inval.c). */
static inline uint64_t *sdsm_home_unann_stale(uint32_t pg)
{
    return hs.unann_stale + (size_t)pg * sdsm_region.copyset_words;
}

/* pg's copy goes away (invalidated, freed, its reply dropped): if it was
 * taken ahead of a fault and never seen in use, the prefetch was wasted. */
static inline void sdsm_home_ahead_drop(uint32_t pg)
{
    if (atomic_exchange_explicit(&hs.ahead[pg], 0, memory_order_relaxed))
        sdsm_stat_add(SDSM_ST_AHEAD_WASTED, 1);
}

/* Have the quiet publisher publish now, if one runs (home.h,
 * sdsm_home_publish_soon; any thread, a handler too). */
static inline void sdsm_home_ask_publish(void)
{
    void (*soon)(void) = sdsm_home_publish_soon;
    if (soon)
        soon();
}

/* The write buffer (wbuf.c): init (0 or SDSM_ENOMEM); a page homed elsewhere
 * became writable here (its lock held); a release waits for the early
 * diffs (after sending its own; 0 or a negative status). */
int sdsm_wbuf_init(void);
void sdsm_wbuf_add(uint32_t pg);
int sdsm_wbuf_drain(void);

/* The most pages a fetch asks for beside the one it faulted on (a reply
 * carries at most SDSM_FETCH_RUN_MAX pages; fetch.c, serve.c). */
#define PREFETCH_MAX (SDSM_FETCH_RUN_MAX - 1)

/* open.c, page lock held: home page pg was twinned (its twin is served). */
void sdsm_home_twin_note(uint32_t pg);
/* open.c, page lock held, pg READ_ONLY, a cut entered (sdsm_home_cut_enter):
 * pg becomes writable (twin, hook, dirty list, mapping), and at its home a
 * write fault (is_write > 0) opens the next pages of its stream too. */
void sdsm_home_open(uint32_t pg, int home, int is_write);
/* claim.c, page lock held: this thread first-touched pg as its home (the
 * first-touch claims in runs); and how many pages a claim of pg asks for. */
void sdsm_home_ft_touched(uint32_t pg);
uint32_t sdsm_home_claim_run(uint32_t pg);

/* serve.c, service thread: a fetch of a held page waits (it is kept);
 * the fetches kept are tried again (pages were lifted). */
int sdsm_home_fetch_held(int src, const sdsm_hdr_t *h, const uint8_t *p);
void sdsm_home_fetch_replay(void);
/* fetch.c: the invalid pages of the sorted list (duplicates allowed) homed
 * elsewhere are asked for, one FETCH per run of one home; mark, if given,
 * is called for each (page lock held).  Application thread, no lock held. */
void sdsm_home_prefetch_list(const uint32_t *pages, uint32_t n, void (*mark)(uint32_t));
/* reread.c (SDSM_REREAD): init (0 or SDSM_ENOMEM); a barrier dropped pg's
 * copy, a thread faults on pg, a reply installs pg (1: leave it without
 * access) - page lock held; a barrier ended (application thread): the
 * pages read again after the barriers before are asked for at once. */
int sdsm_home_reread_init(void);
void sdsm_home_reread_dropped(uint32_t pg);
void sdsm_home_reread_fault(uint32_t pg);
int sdsm_home_reread_lazy(uint32_t pg);
void sdsm_home_reread_fetch(void);
/* release.c, service thread inside a cut: does this rank hold writes to
 * pages homed elsewhere that are not yet at their homes with every other
 * copy gone (taken by no release yet, or by one still in progress, early
 * diffs unacknowledged or held, a barrier arrival not announced)? */
int sdsm_home_unpublished(void);
/* Service thread, at a barrier's completion: every rank's arrival holds
 * here end (lift.c). */
void sdsm_home_lift_arrivals(void);
/* Service thread: the ranks whose barrier arrival holds any of count pages
 * from first, stride apart (0: first alone), here, are asked to publish now
 * (lift.c). */
void sdsm_home_ask_lift(uint32_t first, uint32_t count, int32_t stride);
/* A barrier completed at this rank: its arrival is done with (release.c). */
void sdsm_home_arrival_done(void);

/* FWD_DIFF flags: 2 marks diffL forwarded at a barrier; in check mode a
 * forwarded diffB names its writer (FWD_WRITER | writer << 3), so the
 * holder can say who wrote what it read.  One writer per message: a
 * forward carries one arriving batch. */
enum { FWD_WRITER = 4, FWD_WRITER_MAX = 0xffff >> 3 };

/* inval.c, page lock held: a diff entry applied to pg and to its twins
 * (twin2_base: ibec's twinL area, or NULL). */
void sdsm_home_apply_entry(uint32_t pg, const uint8_t *diff, uint32_t nb, uint8_t *twin2_base);

/* lift.c, service thread: the pages of another rank's diff batch p (len
 * bytes) homed here give this rank's threads no access while it lands
 * (their numbers appended to got, u32[]); they are given back. */
void sdsm_home_shield_on(const uint8_t *p, uint32_t len, buf_t *got);
void sdsm_home_shield_off(const uint8_t *pages, size_t len);
/* lift.c, service thread: src's batch p, of hold generation gen (an
 * arrival's, or an eager one's), holds its pages here until lifted;
 * shielded: those of its pages sdsm_home_shield_on shielded. */
void sdsm_home_hold(int src, unsigned gen, int arrival, const uint8_t *p, uint32_t len,
                    const buf_t *shielded);

/* Each file registers the handlers of its messages (from sdsm_home_init). */
void sdsm_home_fetch_init(void);
void sdsm_home_serve_init(void);
void sdsm_home_inval_init(void);
void sdsm_home_copies_init(void);
void sdsm_home_lift_init(void);
void sdsm_home_notice_init(void);
void sdsm_home_control_init(void);
void sdsm_home_atomic_init(void);
void sdsm_home_claim_init(void);

/* claim.c: pg's lock held, at its manager: the rank that claimed pg ahead
 * of use (-1: none); forget it (a move or a free decides the page). */
int sdsm_home_soft_owner(uint32_t pg);
/* May the home open pages before their writes (write-ahead, hot pages)?
 * Not under ibec, whose write hook binds each page written to a critical
 * section and which twins home pages. */
static inline int sdsm_home_opens_ahead(void) { return !sdsm_home_write_hook && !sdsm_home_twins_at_home; }

/* hot.c, page lock held, at the home (SDSM_HOME_HOT): pg took a write
 * fault while others hold it; is pg kept open (never write-protected)?;
 * forget pg (freed or moved). */
void sdsm_home_hot_fault(uint32_t pg);
int sdsm_home_hot(uint32_t pg);
void sdsm_home_hot_clear(uint32_t pg);
/* hot.c, for a release: a hot home page others hold is kept open (1) or
 * checked again this interval (0); written: what the kernel says (1, 0;
 * -1 when it does not track).  And for the locked pages [first, first + m):
 * whether the kernel saw each hot or announced home page written (-1: not
 * asked). */
int sdsm_home_hot_keep(uint32_t pg, uint32_t interval, int written);
void sdsm_home_hot_written(uint32_t first, uint32_t m, int8_t *wr);
/*
 * The cut (release.c).  A quiet publish, or the early diffs an invalidation
 * sends (copies.c), take a consistent cut of this rank's writes: every
 * write made before it travels, none made after does, whatever order the
 * pages are taken in.  From its beginning to its end no write fault opens
 * a page here (a page taken is protected, a page not written yet is not on
 * the dirty list), so a thread that writes data, then a flag, cannot put
 * the flag into the cut without the data.  The fault path enters (1) or
 * finds a cut being taken (0: it drops its page lock and waits), and
 * leaves once the pages it opened are on the dirty list and writable.
 */
void sdsm_home_cut_begin(void);
void sdsm_home_cut_end(void);
int sdsm_home_cut_enter(void);
void sdsm_home_cut_leave(void);
void sdsm_home_cut_wait(void);

/* fetch.c: a release confirms the calling thread's touched soft claims. */
void sdsm_home_claims_flush(void);
void sdsm_home_soft_clear(uint32_t pg);

#endif
