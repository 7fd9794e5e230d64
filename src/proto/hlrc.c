/*
 * hlrc.c - home-based release consistency with multiple writers and
 * invalidation (SCASH's invalidate mode, seed 001's protocol).  It is the
 * shared home machinery as it is: eager invalidation at lock releases
 * (release.c, inval.c), write notices at barriers, after which copies others
 * wrote are dropped (notice.c).
 */
#include "proto/home.h"
#include "proto/home_int.h"

static int hlrc_barrier_done(const uint8_t *pairs, uint32_t n)
{
    return sdsm_home_barrier_notices(pairs, n, 0);
}

static void hlrc_barrier_after(const uint8_t *pairs, uint32_t n) { (void)pairs, (void)n; }

/* A barrier's end: the pages read again after each barrier are asked for
 * at once (reread.c). */
static void hlrc_acquire(sdsm_sync_kind_t kind)
{
    if (kind == SDSM_SYNC_BARRIER)
        sdsm_home_reread_fetch();
}

const sdsm_proto_ops_t sdsm_proto_hlrc = {
    .name = "hlrc",
    .init = sdsm_home_init,
    .fault = sdsm_home_fault,
    .release = sdsm_home_release,
    .publish = sdsm_home_publish,
    .acquire = hlrc_acquire,
    .barrier_done = hlrc_barrier_done,
    .barrier_flags = sdsm_home_no_flags,
    .barrier_second = sdsm_home_no_second,
    .barrier_after = hlrc_barrier_after,
    .free_range = sdsm_home_free_range,
    .flush = sdsm_home_flush,
    .prefetch = sdsm_home_prefetch,
    .lock_stamp = sdsm_home_no_stamp,
    .release_lock = sdsm_home_release_lock,
    .acquire_lock = sdsm_home_acquire_lock,
};
