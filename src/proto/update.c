/*
 * update.c - SCASH's update protocol (seed 003 §2.2).  The memory barrier
 * has three steps: the barrier synchronization (carrying write notices),
 * the diffs flushed to the homes (before arriving), and the homes pushing
 * the new page contents to every rank holding a copy - instead of
 * invalidating it - so copies stay valid across barriers.  A copy that
 * others wrote waits (FETCHING) until its push arrives; the pushes are sent
 * after the epoch moved on, so they can never overtake the barrier release
 * that tells the receiver to expect them.  Locks behave as in hlrc.
 */
#include "proto/home.h"

static int update_init(void) { return sdsm_home_init(); }
static void nothing(sdsm_sync_kind_t kind) { (void)kind; }
static int update_barrier_done(const uint8_t *pairs, uint32_t n)
{
    return sdsm_home_barrier_notices(pairs, n, 1);
}
static void update_barrier_after(const uint8_t *pairs, uint32_t n)
{
    sdsm_home_push_notices(pairs, n);
}
static int update_flush(uint32_t first, uint32_t n, int drop)
{
    return sdsm_home_flush_range(first, n, drop, 0);
}
static uint32_t no_stamp(int id) { (void)id; return 0; }
static uint32_t no_flags(void) { return 0; }
static void no_second(void) {}
static int update_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    (void)id;
    *payload = NULL;
    *len = 0;
    *stamp = 0;
    return sdsm_home_release(SDSM_SYNC_LOCK, NULL, NULL);
}
static int update_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    (void)id, (void)chain;
    return len ? -1 : 0;
}

const sdsm_proto_ops_t sdsm_proto_update = {
    .name = "update",
    .init = update_init,
    .fault = sdsm_home_fault,
    .release = sdsm_home_release,
    .acquire = nothing,
    .barrier_done = update_barrier_done,
    .barrier_flags = no_flags,
    .barrier_second = no_second,
    .barrier_after = update_barrier_after,
    .free_range = sdsm_home_free_range,
    .flush = update_flush,
    .lock_stamp = no_stamp,
    .release_lock = update_release_lock,
    .acquire_lock = update_acquire_lock,
};
