/*
 * pt.h - helpers for the protocol tests: assertions that stop the job with
 * the rank, and this rank's statistics counters (the tests link the static
 * library to read them).
 */
#ifndef PT_H
#define PT_H

#include <sdsm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/stats.h"
#include "net/msg.h"

#define PT_CHECK(what, expected, actual)                                                                     \
    do {                                                                                                     \
        long long e_ = (long long)(expected), a_ = (long long)(actual);                                      \
        if (e_ != a_)                                                                                        \
            sdsm_abort(1, "%s: rank %d: %s: expected %lld, got %lld", PT_NAME, sdsm_rank(), what, e_, a_);   \
    } while (0)

static inline uint64_t pt_stat(sdsm_stat_t s) { return atomic_load(&sdsm_stats.v[s]); }
static inline uint64_t pt_msgs(unsigned type) { return atomic_load(&sdsm_stats.msgs_sent[type]); }

static inline void pt_ok(void)
{
    sdsm_barrier();
    if (sdsm_rank() == 0)
        printf("OK %s\n", PT_NAME);
    sdsm_finalize();
}

#endif
