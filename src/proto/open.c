/*
 * open.c - a page becomes writable here: its twin (at a home too, where
 * others hold the page and its writes must stay unseen until a release),
 * the write hook, the dirty list before the mapping, and at the home the
 * write runs (write-ahead) that open the next pages of a stream with the
 * same fault.  The fault path (fetch.c) calls sdsm_home_open with the
 * page's lock held and a cut entered.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core/config.h"
#include "core/stats.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "proto/ahead.h"
#include "proto/home.h"
#include "proto/home_int.h"

/* Page lock held: the READ_ONLY page pg becomes READ_WRITE (twin, hook,
 * dirty list); the caller changes the mapping. */
void sdsm_home_twin_note(uint32_t pg)
{
    pthread_mutex_lock(&hs.twin_mtx);
    if (!hs.twin_listed[pg]) {
        hs.twin_listed[pg] = 1;
        sdsm_buf_reserve(&hs.twins, 4);
        memcpy(hs.twins.p + hs.twins.len, &pg, 4);
        hs.twins.len += 4;
    }
    pthread_mutex_unlock(&hs.twin_mtx);
}

static void open_write(uint32_t pg, int home)
{
    sdsm_page_t *p = sdsm_page(pg);
    /* A home page somebody else holds is twinned too where
     * SDSM_HOME_TWINS says so: its twin is what others are served until this
     * rank's next release (on_fetch), so they never see the home's writes
     * before its release announces them - a flag and the data written
     * before it become visible together (ibec keeps the twin for its own
     * diffs). */
    int twin =
        home != hs.me || ((sdsm_home_twins_at_home || sdsm_home_twins_shared) && sdsm_copyset_others(pg));
    if (twin && !(p->flags & SDSM_PGF_TWIN)) {
        memcpy(sdsm_page_twin(pg), sdsm_page_rt(pg), hs.ps);
        p->flags |= SDSM_PGF_TWIN;
        sdsm_stat_add(SDSM_ST_TWINS, 1);
        if (home == hs.me)
            sdsm_home_twin_note(pg);
    }
    if (sdsm_home_write_hook)
        sdsm_home_write_hook(pg);
    /* On the dirty list before it is writable: once the mapping allows
     * writes, another thread may write and release at once, and its release
     * must find the page (it cannot see that a fault is still in progress
     * here). */
    sdsm_page_mark_dirty(pg);
    sdsm_page_set(pg, SDSM_PG_READ_WRITE, home == hs.me, 0);
    if (twin && home != hs.me && !sdsm_home_write_hook)
        sdsm_wbuf_add(pg);
}

/*
 * Write runs at the home.  A home page others hold is write-protected at
 * every release, so a sweep writing such pages costs one fault per page per
 * interval (and a first touch is a fault per page too).  When a thread's
 * write faults follow a stream (ahead.c), the next home pages along it that
 * are read-only or untouched here are opened by the same fault.  Their locks are taken with trylock and held (opened_t) until the
 * caller has changed their mappings, so nobody sees a READ_WRITE page whose
 * mapping is still read-only.  A page opened but never written costs a
 * write notice at the next release (its readers fetch it again), so a run
 * stops at a page another rank wrote since the home's last write fault on
 * it (hs.foreign: the next part of a static loop, which would otherwise be
 * announced as the home's too, its writer's copy dropped, and its home
 * never migrate, migrate.c).  Not under ibec, whose write hook binds each
 * page written to a critical section.
 */
#define WRITE_AHEAD_MAX 128
/* Page locks one write-ahead may hold: ThreadSanitizer's deadlock detector
 * stops the program past 64 held locks (mem/page.h). */
#if defined(__SANITIZE_THREAD__)
#define WRITE_AHEAD_HELD 48u
#else
#define WRITE_AHEAD_HELD WRITE_AHEAD_MAX
#endif

typedef struct opened {
    uint32_t n; /* pages opened ahead */
    uint32_t pg[WRITE_AHEAD_MAX];
    uint8_t locked[WRITE_AHEAD_MAX];       /* this one took its stripe lock */
    uint64_t held[SDSM_PAGE_STRIPES / 64]; /* stripes this thread holds */
} opened_t;

static void write_ahead(uint32_t pg, opened_t *o, int32_t *stride)
{
    o->n = 0;
    if (!sdsm_home_opens_ahead() || !sdsm_cfg.write_ahead)
        return;
    uint32_t cap = (uint32_t)sdsm_cfg.write_ahead;
    sdsm_ahead_t w = sdsm_ahead_fault(SDSM_AHEAD_WRITE, pg, cap < WRITE_AHEAD_HELD ? cap : WRITE_AHEAD_HELD);
    *stride = w.stride;
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    memset(o->held, 0, sizeof o->held);
    uint32_t s0 = pg % SDSM_PAGE_STRIPES; /* ours already: a stride may meet it again */
    o->held[s0 / 64] |= 1ull << (s0 % 64);
    while (o->n < w.win && a) {
        int64_t q = (int64_t)pg + (int64_t)w.stride * (o->n + 1);
        if (q < a->first || q >= (int64_t)a->first + a->npages)
            break;
        uint32_t s = (uint32_t)(q % SDSM_PAGE_STRIPES);
        int own = (o->held[s / 64] >> (s % 64)) & 1;
        if (!own && pthread_mutex_trylock(&sdsm_page_stripes[s]))
            break;
        const sdsm_page_t *p = sdsm_page((uint32_t)q);
        if ((p->state != SDSM_PG_READ_ONLY && p->state != SDSM_PG_INVALID) || (p->flags & SDSM_PGF_IDLE) ||
            sdsm_page_home((uint32_t)q) != hs.me || hs.foreign[q]) {
            if (!own)
                sdsm_page_unlock((uint32_t)q);
            break;
        }
        if (p->state == SDSM_PG_INVALID) { /* first touch, as in the fault path */
            sdsm_page_set((uint32_t)q, SDSM_PG_READ_ONLY, 1, 0);
            sdsm_home_ft_touched((uint32_t)q);
        }
        o->held[s / 64] |= 1ull << (s % 64);
        if (p->state == SDSM_PG_READ_ONLY)
            sdsm_home_hot_fault((uint32_t)q); /* the stream's next page: about to be written */
        open_write((uint32_t)q, hs.me);
        o->locked[o->n] = (uint8_t)!own;
        o->pg[o->n++] = (uint32_t)q;
    }
    sdsm_ahead_taken(SDSM_AHEAD_WRITE, pg, w.stride, o->n);
    if (o->n)
        sdsm_stat_add(SDSM_ST_WRITE_AHEAD, o->n);
}

/* pg's lock held: pg and the pages write_ahead opened become writable
 * (one mprotect when they are contiguous); their locks are released. */
static void open_mappings(uint32_t pg, const opened_t *o, int32_t stride)
{
    if (o->n && (stride == 1 || stride == -1)) {
        sdsm_page_protect(stride > 0 ? pg : pg - o->n, o->n + 1, SDSM_PG_READ_WRITE);
    } else {
        sdsm_page_protect(pg, 1, SDSM_PG_READ_WRITE);
        for (uint32_t i = 0; i < o->n; i++)
            sdsm_page_protect(o->pg[i], 1, SDSM_PG_READ_WRITE);
    }
    for (uint32_t i = 0; i < o->n; i++)
        if (o->locked[i])
            sdsm_page_unlock(o->pg[i]);
}

void sdsm_home_open(uint32_t pg, int home, int is_write)
{
    opened_t o;
    int32_t stride = 1;
    o.n = 0;
    open_write(pg, home);
    if (home == hs.me && is_write > 0) {
        hs.foreign[pg] = 0; /* the home writes it itself */
        sdsm_home_hot_fault(pg);
    }
    if (home == hs.me && is_write > 0)
        write_ahead(pg, &o, &stride);
    open_mappings(pg, &o, stride);
}
