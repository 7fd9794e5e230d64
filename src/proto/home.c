/*
 * home.c - what the home-based protocols (hlrc, update, ibec) share: their
 * state, its set-up (which starts every part), and the operations hlrc and
 * update take as they are.  The helpers every part uses (diff batches,
 * copysets, per-page arrays) are batch.c.  The machinery is split by object: fetch.c (pages from their homes: the
 * fault path and the replies), open.c (pages made writable), serve.c (a
 * home serving a fetch), release.c (a rank's writes to the homes), inval.c
 * (a home applying diffs and invalidating or updating other copies),
 * lift.c (pages held there until their writer lifts them), copies.c (the
 * copy holder's side), lockfwd.c (ibec's lock diffs forwarded at a
 * barrier), notice.c (barrier write notices), control.c (flush, refresh,
 * broadcast, home moves, free).
 * hlrc.c, update.c and ibec.c build their operations tables from these
 * pieces; each keeps its own state.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
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

sdsm_home_state_t sdsm_home_state;

sdsm_write_hook_t sdsm_home_write_hook;

sdsm_serve_hook_t sdsm_home_serve_hook;

int sdsm_home_twins_at_home;
int sdsm_home_twins_shared;

/* Operations hlrc and update share (no lock-bound data, no second phase). */
uint32_t sdsm_home_no_stamp(int id)
{
    (void)id;
    return 0;
}
uint32_t sdsm_home_no_flags(void) { return 0; }
void sdsm_home_no_second(void) {}
/* A barrier completed: its notices did their work (sdsm_home_publish). */
void sdsm_home_no_acquire(sdsm_sync_kind_t kind)
{
    if (kind == SDSM_SYNC_BARRIER)
        sdsm_home_arrival_done();
}
int sdsm_home_flush(uint32_t first, uint32_t n, int drop) { return sdsm_home_flush_range(first, n, drop, 0); }

int sdsm_home_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    (void)id;
    *payload = NULL;
    *len = 0;
    *stamp = 0;
    return sdsm_home_release(SDSM_SYNC_LOCK, -1, NULL, NULL);
}

int sdsm_home_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    (void)id, (void)chain;
    return len ? SDSM_EPROTO : 0; /* their grants carry nothing */
}

/* The state's arrays: per page (mapped, so untouched pages cost nothing)
 * and per rank.  0 or SDSM_ENOMEM. */
static int alloc_state(void)
{
    hs.work = sdsm_home_per_page(sizeof *hs.work);
    hs.notices = sdsm_home_per_page(sizeof *hs.notices);
    hs.inflight = sdsm_home_per_page(sizeof *hs.inflight);
    hs.ftag = sdsm_home_per_page(sizeof *hs.ftag);
    hs.hot = sdsm_home_per_page(sizeof *hs.hot);
    hs.hot_last = sdsm_home_per_page(sizeof *hs.hot_last);
    hs.soft = sdsm_home_per_page(sizeof *hs.soft);
    hs.ahead = sdsm_home_per_page(sizeof *hs.ahead);
    hs.applying = sdsm_home_per_page(sizeof *hs.applying);
    hs.unann_stale = sdsm_home_per_page(sdsm_region.copyset_words * sizeof *hs.unann_stale);
    hs.twin_listed = sdsm_home_per_page(sizeof *hs.twin_listed);
    hs.unannounced = sdsm_home_per_page(sizeof *hs.unannounced);
    hs.exposed = sdsm_home_per_page(sizeof *hs.exposed);
    hs.solo = sdsm_home_per_page(sizeof *hs.solo);
    hs.foreign = sdsm_home_per_page(sizeof *hs.foreign);
    hs.held = sdsm_home_per_page(sizeof *hs.held);
    hs.published = sdsm_home_per_page(sizeof *hs.published);
    hs.holds = calloc((size_t)hs.n, sizeof *hs.holds);
    hs.lift = calloc((size_t)hs.n, 1);
    hs.lift_due = calloc((size_t)hs.n, 1);
    hs.out = calloc((size_t)hs.n, sizeof *hs.out);
    hs.fwd = calloc((size_t)hs.n, sizeof *hs.fwd);
    hs.zero = calloc(1, hs.ps);
    hs.tgt = calloc((size_t)hs.n, sizeof *hs.tgt);
    hs.tgt_n = calloc((size_t)hs.n, sizeof *hs.tgt_n);
    hs.tgt_cap = calloc((size_t)hs.n, sizeof *hs.tgt_cap);
    if (!hs.work || !hs.notices || !hs.inflight || !hs.ftag || !hs.hot || !hs.hot_last || !hs.soft ||
        !hs.ahead || !hs.applying || !hs.unann_stale || !hs.twin_listed || !hs.unannounced || !hs.exposed ||
        !hs.solo || !hs.foreign || !hs.held || !hs.published || !hs.holds || !hs.lift || !hs.lift_due ||
        !hs.out || !hs.fwd || !hs.zero || !hs.tgt || !hs.tgt_n || !hs.tgt_cap)
        return SDSM_ENOMEM;
    return 0;
}

int sdsm_home_init(void)
{
    hs.me = sdsm_region.rank;
    hs.n = sdsm_region.nprocs;
    hs.ps = sdsm_region.page_size;
    pthread_mutex_init(&hs.release_mtx, NULL);
    pthread_mutex_init(&hs.lockfwd_mtx, NULL);
    pthread_mutex_init(&hs.twin_mtx, NULL);
    pthread_mutex_init(&hs.take_mtx, NULL);
    if (alloc_state())
        return SDSM_ENOMEM;
    sdsm_home_write_hook = NULL;
    sdsm_home_serve_hook = NULL;
    sdsm_home_twins_at_home = 0;
    sdsm_home_twins_shared = sdsm_cfg.home_twins < 0 ? sdsm_region_adopt.fences : sdsm_cfg.home_twins > 0;
    hs.migrate = sdsm_cfg.home_migrate && sdsm_cfg.protocol == SDSM_PROTO_HLRC && !sdsm_home_twins_shared;
    if (sdsm_wbuf_init() || sdsm_home_reread_init())
        return SDSM_ENOMEM;
    sdsm_home_fetch_init();
    sdsm_home_serve_init();
    sdsm_home_atomic_init();
    sdsm_home_claim_init();
    sdsm_home_inval_init();
    sdsm_home_copies_init();
    sdsm_home_lift_init();
    sdsm_home_notice_init();
    sdsm_home_control_init();
    sdsm_alloc_on_free = sdsm_home_free_range;
    return 0;
}
