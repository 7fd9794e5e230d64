/*
 * wait.h - how application threads wait for the service thread.
 *
 * A waiter watches a 32-bit word until it changes.  It first polls for
 * SDSM_SPIN_US microseconds, yielding the CPU each time round (on a small
 * machine the service threads that will produce the answer need that CPU),
 * then sleeps in futex(2).  Wakers change the word, then call
 * sdsm_wake_all().  There is no lost wake-up: futex_wait re-checks the word
 * atomically in the kernel.  No allocation, so usable in the fault handler.
 */
#ifndef SDSM_CORE_WAIT_H
#define SDSM_CORE_WAIT_H

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/config.h"
#include "core/stats.h"

static inline void sdsm_wake_all(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Block while *w == old.  Returns the new value. */
static inline uint32_t sdsm_wait_change(_Atomic uint32_t *w, uint32_t old)
{
    uint32_t v = atomic_load_explicit(w, memory_order_acquire);
    if (v != old)
        return v;
    if (sdsm_cfg.spin_us > 0) {
        uint64_t until = sdsm_now_ns() + (uint64_t)sdsm_cfg.spin_us * 1000u;
        do {
            sched_yield();
            v = atomic_load_explicit(w, memory_order_acquire);
            if (v != old)
                return v;
        } while (sdsm_now_ns() < until);
    }
    for (;;) {
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
        v = atomic_load_explicit(w, memory_order_acquire);
        if (v != old)
            return v;
    }
}

/* A counter of outstanding replies; the waiter sleeps until it reaches 0. */
static inline void sdsm_count_wait_zero(_Atomic uint32_t *c)
{
    uint32_t v;
    while ((v = atomic_load_explicit(c, memory_order_acquire)) != 0)
        sdsm_wait_change(c, v);
}

static inline void sdsm_count_done(_Atomic uint32_t *c)
{
    if (atomic_fetch_sub_explicit(c, 1, memory_order_acq_rel) == 1)
        sdsm_wake_all(c);
}

#endif
