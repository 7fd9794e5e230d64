/*
 * wait.c - the shared state that core/wait.h declares: the sleepers per
 * word, the poll scores, the poll hold and its policy, and the one table
 * of operations the layers above plug into a wait (sdsm_wait_ops).  The
 * waiting itself is inline in wait.h, so that the fault handler can use it.
 */
#include "wait.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

_Atomic int sdsm_sleepers[SDSM_SLEEP_BUCKETS];
_Atomic int sdsm_spin_score[SDSM_SLEEP_BUCKETS];
_Atomic unsigned sdsm_spin_probes;
_Atomic uint64_t sdsm_spin_held_until;
_Atomic int sdsm_spin_hold_level;
_Atomic int sdsm_spin_sleepy;
static _Atomic uint64_t spin_last_stolen;

_Atomic int sdsm_wait_local_threads;

static int foreign_load(uint64_t now)
{
    static _Atomic uint64_t checked;
    static _Atomic int last;
    uint64_t at = atomic_load_explicit(&checked, memory_order_relaxed);
    if (at && now - at < 10000000ull)
        return atomic_load_explicit(&last, memory_order_relaxed);
    int running = -1, fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[128];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        double a, b, c;
        if (n > 0) {
            buf[n] = '\0';
            if (sscanf(buf, "%lf %lf %lf %d/", &a, &b, &c, &running) != 4)
                running = -1;
        }
    }
    int ours = atomic_load_explicit(&sdsm_wait_local_threads, memory_order_relaxed);
    if (ours <= 0)
        ours = sdsm_cpus_here();
    int yes = running < 0 || running > ours; /* unknown: as before this check */
    atomic_store_explicit(&last, yes, memory_order_relaxed);
    atomic_store_explicit(&checked, now, memory_order_relaxed);
    return yes;
}

sdsm_wait_ops_t sdsm_wait_ops = {.spin_foreign = foreign_load};
_Atomic(_Atomic uint32_t *) sdsm_wait_lead_word;
int sdsm_wait_yields = 1;
_Atomic long sdsm_wait_spin_us = 50;
_Atomic int sdsm_wait_hiding;

void sdsm_spin_stolen(uint64_t now)
{
    if (sdsm_wait_ops.spin_foreign(now))
        sdsm_spin_hold(now);
}

/* Races between threads only lose a doubling or a halving. */
void sdsm_spin_hold(uint64_t now)
{
    int k = atomic_load_explicit(&sdsm_spin_hold_level, memory_order_relaxed);
    uint64_t last = atomic_load_explicit(&spin_last_stolen, memory_order_relaxed);
    if (k < SDSM_SPIN_HOLD_MAX && last && now - last < 4 * (SDSM_SPIN_HOLD_NS << k))
        k++;
    atomic_store_explicit(&sdsm_spin_hold_level, k, memory_order_relaxed);
    atomic_store_explicit(&spin_last_stolen, now, memory_order_relaxed);
    atomic_store_explicit(&sdsm_spin_held_until, now + (SDSM_SPIN_HOLD_NS << k), memory_order_relaxed);
    sdsm_stat_add(SDSM_ST_SPIN_STOLEN, 1);
}

void sdsm_spin_kept(uint64_t now)
{
    int k = atomic_load_explicit(&sdsm_spin_hold_level, memory_order_relaxed);
    uint64_t last = atomic_load_explicit(&spin_last_stolen, memory_order_relaxed);
    if (k > 0 && now - last >= 4 * (SDSM_SPIN_HOLD_NS << k))
        atomic_store_explicit(&sdsm_spin_hold_level, k - 1, memory_order_relaxed);
}
