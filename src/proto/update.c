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

static int update_barrier_done(const uint8_t *pairs, uint32_t n)
{
    return sdsm_home_barrier_notices(pairs, n, 1);
}

static void update_barrier_after(const uint8_t *pairs, uint32_t n) { sdsm_home_push_notices(pairs, n); }

const sdsm_proto_ops_t sdsm_proto_update = {
    .name = "update",
    .init = sdsm_home_init,
    .fault = sdsm_home_fault,
    .release = sdsm_home_release,
    .publish = sdsm_home_publish,
    .acquire = sdsm_home_no_acquire,
    .barrier_done = update_barrier_done,
    .barrier_flags = sdsm_home_no_flags,
    .barrier_second = sdsm_home_no_second,
    .barrier_after = update_barrier_after,
    .free_range = sdsm_home_free_range,
    .flush = sdsm_home_flush,
    .prefetch = sdsm_home_prefetch,
    .lock_stamp = sdsm_home_no_stamp,
    .release_lock = sdsm_home_release_lock,
    .acquire_lock = sdsm_home_acquire_lock,
};
