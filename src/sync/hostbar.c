/*
 * hostbar.c - the barrier of a job whose ranks share one copy of the memory
 * (SDSM_HOST_SHARE: proto/host.c).  There are no write notices to merge, so
 * the ranks meet in shared memory instead of through the manager's
 * messages: a counter, and a generation word the last arrival bumps and the
 * others wait on (polling for SDSM_SPIN_US, then asleep in futex(2)).  Two
 * to eight ranks on one machine: one cache line passed around instead of
 * 2(P-1) messages and their wake-ups.
 *
 * What the message barrier gives is kept.  The manager's payload (an
 * OpenMP fork's descriptor) is written before its arrival into one of two
 * slots, by the generation's parity: a slot is rewritten two barriers
 * later, when every rank has read it.  Every arrival leaves its collective
 * call in its own slot and the last arrival compares them; a rank whose
 * wait lasts announces its call to rank 0 (as a barrier of another manager
 * does), so a rank that is in another kind of collective call (an
 * allocation, whose requests go to rank 0) is reported, not waited for.  A
 * rank that dies ends the job through its lost connection, as before.
 */
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/coll.h"
#include "core/log.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/page.h"
#include "net/net.h"
#include "net/msg.h"
#include "sync.h"

typedef struct hostbar {
    _Atomic uint32_t arrived;
    _Atomic uint32_t gen; /* barriers completed: the futex word */
    _Atomic uint32_t sleepers;
    uint32_t plen[2];
    uint8_t payload[2][SDSM_BARRIER_PAYLOAD_MAX];
    sdsm_coll_t calls[]; /* one per rank, then a u32 per rank: the barrier (gen + 1) it is in */
} hostbar_t;

static hostbar_t *hb;
static size_t hb_len;
static _Atomic int cur_manager = -1; /* of the barrier this rank is in, else -1 */

static _Atomic uint32_t *in_barrier(int rank)
{
    return (_Atomic uint32_t *)(void *)&hb->calls[sdsm_region.nprocs] + rank;
}

/* The barrier's part of the control block: the lock table follows. */
static size_t bar_bytes(int nprocs)
{
    size_t need = sizeof(hostbar_t) + (size_t)nprocs * (sizeof(sdsm_coll_t) + 4);
    return (need + 63) / 64 * 64;
}

size_t sdsm_hostbar_bytes(int nprocs)
{
    size_t need = bar_bytes(nprocs) + sdsm_hostlock_bytes(), page = (size_t)getpagesize();
    return (need + page - 1) / page * page;
}

void *sdsm_hostbar_locks(void) { return hb ? (uint8_t *)hb + bar_bytes(sdsm_region.nprocs) : NULL; }

int sdsm_hostbar_init(void)
{
    const sdsm_region_t *R = &sdsm_region;
    if (!R->host_shared)
        return 0;
    hb_len = sdsm_hostbar_bytes(R->nprocs);
    void *m =
        mmap(NULL, hb_len, PROT_READ | PROT_WRITE, MAP_SHARED, R->memfd, (off_t)(R->size + R->page_size));
    if (m == MAP_FAILED) {
        sdsm_error_log("cannot map the host's barrier (SDSM_HOST_SHARE): %m");
        return SDSM_ESYS;
    }
    hb = m;
    return 0;
}

void sdsm_hostbar_fini(void)
{
    if (hb)
        munmap(hb, hb_len);
    hb = NULL;
}

int sdsm_hostbar_on(void) { return hb != NULL; }

/* The last arrival: every rank's call must be the manager's. */
static void compare_calls(int manager)
{
    for (int r = 0; r < sdsm_region.nprocs; r++) {
        if (r == manager || sdsm_coll_same(&hb->calls[manager], &hb->calls[r]))
            continue;
        char a[256], b[256];
        sdsm_coll_describe(&hb->calls[manager], a, sizeof a);
        sdsm_coll_describe(&hb->calls[r], b, sizeof b);
        sdsm_fatal("collective mismatch: rank %d is in %s, rank %d in %s; every rank must make the "
                   "same collective calls in the same order",
                   manager, a, r, b);
    }
}

/* More compute threads on the host than CPUs (fixed once the job runs;
 * asking the kernel for the CPUs each time cost a system call per poll). */
int sdsm_hostbar_crowded(void)
{
    static _Atomic int known = -1;
    int c = atomic_load_explicit(&known, memory_order_relaxed);
    if (c < 0) {
        c = atomic_load(&sdsm_wait_local_threads) > sdsm_cpus_here();
        atomic_store_explicit(&known, c, memory_order_relaxed);
    }
    return c;
}

/* One round of polls of *w, as the runtime's other waits poll (core/wait.h):
 * not where polls lately lost their CPU to another job, and ended when one
 * does.  Nonzero if *w moved away from old. */
static int poll_word(_Atomic uint32_t *w, uint32_t old)
{
    long spin_us = atomic_load_explicit(&sdsm_wait_spin_us, memory_order_relaxed);
    _Atomic int *score = &sdsm_spin_score[sdsm_sleep_bucket(w)];
    uint64_t now = sdsm_now_ns(), then;
    if (spin_us <= 0 || !sdsm_spin_pays(score, now))
        return 0;
    uint64_t until = now + (uint64_t)spin_us * 1000u;
    int moved = 0, stolen = 0;
    do {
        /* The clock only now and then: a poll must see the word move at once. */
        for (int i = 0; i < 32 && !moved; i++) {
            if (sdsm_hostbar_crowded())
                sched_yield();
#if defined(__x86_64__) || defined(__i386__)
            else
                __builtin_ia32_pause();
#endif
            moved = atomic_load_explicit(w, memory_order_acquire) != old;
        }
        then = now;
        now = sdsm_now_ns();
        stolen = now - then >= SDSM_SPIN_STOLEN_NS;
    } while (!moved && now < until && !stolen);
    if (stolen)
        sdsm_spin_stolen(now);
    sdsm_spin_scored(score, moved && !stolen);
    return moved;
}

void sdsm_host_wait(_Atomic uint32_t *w, uint32_t old, _Atomic uint32_t *sleepers, const sdsm_coll_t *call)
{
    uint64_t t0 = sdsm_now_ns();
    if (poll_word(w, old))
        return;
    sdsm_wait_blocking(); /* asleep, a compute thread's run slot goes to another */
    while (atomic_load_explicit(w, memory_order_acquire) == old) {
        atomic_fetch_add(sleepers, 1);
        struct timespec nap = {0, 100 * 1000 * 1000};
        sdsm_futex_wait_shared(w, old, &nap);
        atomic_fetch_sub(sleepers, 1);
        if (sdsm_now_ns() - t0 > 1000ull * 1000 * 1000 && call) {
            if (sdsm_region.rank == 0)
                sdsm_net_post_local(SDSM_MSG_COLL, 0, 0, call, sizeof *call, NULL, 0);
            else
                sdsm_net_send(0, SDSM_MSG_COLL, 0, 0, call, sizeof *call, NULL, 0);
            call = NULL;
        }
    }
}

void sdsm_host_wake(_Atomic uint32_t *w, _Atomic uint32_t *sleepers)
{
    if (atomic_load(sleepers))
        sdsm_futex_wake_shared(w, INT32_MAX);
}

size_t sdsm_hostbar_run(int manager, const sdsm_coll_t *call, const void *out, uint32_t out_len, void *in)
{
    int me = sdsm_region.rank, n = sdsm_region.nprocs;
    uint32_t g = atomic_load_explicit(&hb->gen, memory_order_acquire), slot = (g + 1) & 1;
    hb->calls[me] = *call;
    /* For hang reports only: the arrival below publishes them. */
    atomic_store_explicit(&cur_manager, manager, memory_order_relaxed);
    atomic_store_explicit(in_barrier(me), g + 1, memory_order_relaxed);
    if (me == manager) {
        memcpy(hb->payload[slot], out, out_len);
        hb->plen[slot] = out_len;
    }
    if (atomic_fetch_add_explicit(&hb->arrived, 1, memory_order_acq_rel) == (uint32_t)n - 1) {
        compare_calls(manager);
        atomic_store_explicit(&hb->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&hb->gen, g + 1, memory_order_release);
        sdsm_host_wake(&hb->gen, &hb->sleepers);
    } else {
        sdsm_host_wait(&hb->gen, g, &hb->sleepers, call);
    }
    atomic_store_explicit(&cur_manager, -1, memory_order_relaxed);
    uint32_t len = hb->plen[slot];
    if (len > SDSM_BARRIER_PAYLOAD_MAX)
        sdsm_fatal("the host's barrier holds a payload of %u bytes: shared memory was overwritten", len);
    memcpy(in, hb->payload[slot], len);
    return len;
}

int sdsm_hostbar_describe(char *buf, size_t len)
{
    int n = sdsm_region.nprocs, shown = 0;
    if (!hb || atomic_load(&cur_manager) != sdsm_region.rank || !len)
        return 0;
    uint32_t g = atomic_load(&hb->gen) + 1, arrived = 0;
    for (int r = 0; r < n; r++)
        arrived += atomic_load(in_barrier(r)) == g;
    size_t off = (size_t)snprintf(buf, len,
                                  "manages a barrier that %u of %d ranks reached; "
                                  "waiting for rank%s",
                                  arrived, n, n - (int)arrived > 1 ? "s" : "");
    for (int r = 0; r < n && off < len; r++)
        if (atomic_load(in_barrier(r)) != g && shown++ < 16)
            off += (size_t)snprintf(buf + off, len - off, shown > 1 ? ", %d" : " %d", r);
    if (shown > 16 && off < len)
        snprintf(buf + off, len - off, " and %d more", shown - 16);
    return 1;
}
