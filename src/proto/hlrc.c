/*
 * hlrc.c - home-based release consistency with multiple writers and
 * invalidation (SCASH's invalidate mode, seed 001's protocol).  Everything
 * but the barrier completion is the shared home machinery (home.c): eager
 * invalidation at lock releases, write notices at barriers, after which
 * copies others wrote are dropped.
 */
#include <stdlib.h>

#include "proto/home.h"

static int hlrc_init(void) { return sdsm_home_init(); }
static void nothing(sdsm_sync_kind_t kind) { (void)kind; }
static int hlrc_barrier_done(const uint8_t *pairs, uint32_t n)
{
    return sdsm_home_barrier_notices(pairs, n, 0);
}
static void hlrc_barrier_after(const uint8_t *pairs, uint32_t n) { (void)pairs, (void)n; }
static int hlrc_flush(uint32_t first, uint32_t n, int drop)
{
    return sdsm_home_flush_range(first, n, drop, 0);
}
static uint32_t no_stamp(int id) { (void)id; return 0; }
static uint32_t no_flags(void) { return 0; }
static void no_second(void) {}
static int hlrc_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    (void)id;
    *payload = NULL;
    *len = 0;
    *stamp = 0;
    return sdsm_home_release(SDSM_SYNC_LOCK, NULL, NULL);
}
static int hlrc_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    (void)id, (void)chain;
    return len ? -1 : 0; /* hlrc grants carry nothing */
}

const sdsm_proto_ops_t sdsm_proto_hlrc = {
    .name = "hlrc",
    .init = hlrc_init,
    .fault = sdsm_home_fault,
    .release = sdsm_home_release,
    .acquire = nothing,
    .barrier_done = hlrc_barrier_done,
    .barrier_flags = no_flags,
    .barrier_second = no_second,
    .barrier_after = hlrc_barrier_after,
    .free_range = sdsm_home_free_range,
    .flush = hlrc_flush,
    .lock_stamp = no_stamp,
    .release_lock = hlrc_release_lock,
    .acquire_lock = hlrc_acquire_lock,
};
