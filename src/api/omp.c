/*
 * omp.c - the entry points libsdsm-omp (the OpenMP runtime that sdsmcc links
 * into a program) needs beyond the public API.  Not in sdsm.h: a program
 * has no use for them.
 */
#include <stdint.h>

#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/crash.h"
#include "mem/fault.h"
#include "mem/page.h"
#include "proto/proto.h"
#include "sdsm.h"
#include "sync/sync.h"
#include "thread/sched.h"

/*
 * Before sdsm_init: the program's writable data [start, start + len) becomes
 * the shared region's first pages (rank 0's image is everyone's), `gap`
 * bytes after it are left to the brk heap, and the region follows.  start,
 * len and gap are multiples of the page size.  fences: the program's code
 * holds memory fences (omp flush), so plain flags need the flag support:
 * 1, some are fence instructions; 2, sdsmcc made some calls of
 * sdsm_omp_fence (sdsm__omp_flush).
 */
SDSM_API int sdsm__omp_adopt(void *start, size_t len, size_t gap, int fences)
{
    uintptr_t s = (uintptr_t)start;
    if (!len || (s | len | gap) & 4095)
        return SDSM_EINVAL;
    sdsm_region_adopt = (sdsm_region_adopt_t){.start = s, .len = len, .gap = gap, .fences = fences & 3};
    return 0;
}

/*
 * Collective, after sdsm_init and before the program's main: home the
 * adopted data as the heap (SDSM_OMP_HOME: first touch unless it says
 * otherwise) if every rank's copy is rank 0's; else it stays at rank 0 and
 * the log says why (SDSM_VERBOSE).  0, or a failure of the exchange.
 */
SDSM_API int sdsm__omp_data_home(int home)
{
    char why[769] = "";
    sdsm_coll_begin(SDSM_COLL_INIT, 1, 0, 0);
    int rc = sdsm_alloc_adopt_home(home, why, sizeof why);
    if (rc == SDSM_EMISMATCH) {
        if (sdsm_rank() == 0)
            sdsm_info("OpenMP program: its globals stay homed at rank 0: %s", why);
        return 0;
    }
    return rc;
}

/*
 * Nonzero if p is in a live block of the shared region (no error report).
 * A page this rank holds (read-only or writable) is in one: only the
 * others need the search of the blocks (the system-call wrappers ask on
 * every call, mostly about buffers already here).
 */
SDSM_API int sdsm__omp_is_shared(const void *p)
{
    uint32_t pg;
    if (!sdsm_region.app || !sdsm_region_page_of(p, &pg))
        return 0;
    uint8_t st = __atomic_load_n(&sdsm_page(pg)->state, __ATOMIC_RELAXED);
    return st == SDSM_PG_READ_ONLY || st == SDSM_PG_READ_WRITE || sdsm_alloc_find(pg) != NULL;
}

/*
 * One copy of the memory for the host (SDSM_HOST_SHARE): a pthreads
 * program's mutex is then a futex word in the mutex itself, taken with an
 * atomic instruction and no call here; these two are its slow paths
 * (sync/sync.h, sdsm_hostword_take), the wait reported as lock report_id.
 */
SDSM_API int sdsm__omp_one_copy(void) { return sdsm_region.host_shared; }

SDSM_API int sdsm__omp_word_take(void *word, int report_id, int clock, const struct timespec *abs)
{
    int rc = sdsm_hostword_take(word, report_id, (clockid_t)clock, abs);
    sdsm_wait_resume(); /* a compute thread that slept takes a run slot again */
    return rc;
}

/*
 * Under the protocol a pthreads mutex is its lock id, held from lock to
 * unlock; trylock and timedlock take it if this rank can have it within
 * wait_ns (sync/sync.h, sdsm_lock_try).  0 taken, 1 not, else SDSM_E*.
 */
SDSM_API int sdsm__omp_lock_try(int id, long wait_ns)
{
    if (id < 0 || wait_ns < 0)
        return SDSM_EINVAL;
    if (sdsm_lock_held(id))
        return SDSM_EHELD;
    int rc = sdsm_lock_try(id, (uint64_t)wait_ns);
    sdsm_wait_resume(); /* a compute thread that slept takes a run slot again */
    if (rc == 1)        /* a thread polling trylock lets the rank's ready threads run */
        sdsm_sched_spin_point();
    return rc;
}

/* OpenMP locks may be their data lock alone (omp/api.c): where a bounded
 * acquire can leave its request behind (sdsm_lock_try). */
SDSM_API int sdsm__omp_locks_direct(void) { return !sdsm_region.host_shared && !sdsm_proto->lock_data; }

/* The giver has set the word to 0 from 2 itself: only the wake is left. */
SDSM_API void sdsm__omp_word_wake(void *word) { sdsm_futex_wake_shared(word, 1); }

/* The application view's bounds [*lo, *hi) (both 0 before sdsm_init), for
 * a check of addresses outside it without a call. */
SDSM_API void sdsm__omp_region(uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)sdsm_region.app;
    *hi = *lo ? *lo + sdsm_region.size : 0;
}

SDSM_API void *sdsm__omp_stacks_alloc(size_t len, size_t guard, int home, int count, const char *overflow);

/*
 * Collective: the OpenMP master's stack, homed at rank 0, whose home never
 * write-protects it (alloc.h, sdsm_alloc_set_announce): the C library
 * writes the stack with its own locks held, where a fault must not happen.
 * Rank 0 touches every page before returning, so it never faults on it.
 * Below the len bytes returned, `guard` bytes are never touched: at rank
 * 0, which runs on the stack, an access there stops the job with
 * `overflow` (fault.h, sdsm_fault_guard).
 */
SDSM_API void *sdsm__omp_stack_alloc(size_t len, size_t guard, const char *overflow)
{
    return sdsm__omp_stacks_alloc(len, guard, 0, 1, overflow);
}

/*
 * Collective: `count` such stacks homed at rank `home`, one after the
 * other, each `guard` bytes of guard and then len bytes (the first stack's
 * guard at the address returned): the stacks the home rank's compute
 * threads run the program's pthreads on.  Pages are touched at the home.
 * With count 1 the guard is the process's one stack guard, else the row of
 * stacks' (fault.h).
 */
SDSM_API void *sdsm__omp_stacks_alloc(size_t len, size_t guard, int home, int count, const char *overflow)
{
    size_t page = sdsm_region.page_size, one = guard + len;
    if (((guard | len) & (page - 1)) || count < 1)
        return NULL;
    uint8_t *p = sdsm_alloc(one * (size_t)count, home);
    uint32_t pg;
    if (!p || !sdsm_region_page_of(p, &pg) || sdsm_alloc_set_announce(pg))
        return NULL;
    if (sdsm_rank() != home)
        return count == 1 ? p + guard : p;
    uint32_t gpages = (uint32_t)(guard >> sdsm_region.shift);
    if (count == 1)
        sdsm_fault_guard(pg, gpages, overflow);
    else
        sdsm_fault_guards(pg, gpages, (uint32_t)(one >> sdsm_region.shift), (uint32_t)count, overflow);
    for (int k = 0; k < count; k++)
        for (size_t off = guard; off < one; off += page)
            ((volatile uint8_t *)p)[(size_t)k * one + off] = 0;
    return count == 1 ? p + guard : p;
}

/*
 * An atomic operation on a shared address, done at its page's home
 * (proto.h, sdsm_proto_atomic; op: SDSM_AOP_*).  1 done, 0 compare failed,
 * -EAGAIN: ask again (the home moved); an SDSM_E* code: take a lock
 * instead (ibec, not a shared address, ...).
 */
SDSM_API int sdsm__omp_atomic(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                              uint64_t *old)
{
    return sdsm_region.app ? sdsm_proto_atomic(addr, size, op, val, expected, old) : SDSM_EINVAL;
}

/* The rank's unreleased writes published now (sdsm_proto->publish);
 * *written: pages published.  Nonzero, said why, if it failed. */
static int publish_now(const char *what, uint32_t *written)
{
    uint32_t again = 0;
    *written = 0;
    if (sdsm_proto->publish(written, &again)) {
        sdsm_error_log("%s: the rank's writes could not be published", what);
        return 1;
    }
    return 0;
}

/*
 * Before an atomic store or release done at a home (libsdsm-omp's
 * atomic.c): the writes this rank's threads made and have not released go
 * to their homes, which take every other copy of those pages before they
 * answer, so whoever reads the stored value at its home finds no stale
 * copy of the data written before it.  Nothing to do with one copy of the
 * memory, one rank, or a protocol without a publish (ibec, whose atomics
 * take a lock).  Nonzero if the publish failed: the job cannot go on.
 */
SDSM_API int sdsm__omp_publish(void)
{
    uint32_t written;
    if (!sdsm_region.app || !sdsm_proto->publish || sdsm_nprocs() < 2 || sdsm_region.host_shared)
        return 0;
    return publish_now("atomic store", &written);
}

/*
 * The calling thread's thread-local storage as the crash report records it
 * (0, or -1), and another rank's thread's, learned from that rank (the
 * master's, through the control block): a worker that follows a pointer
 * into the master's TLS (a threadprivate variable, copyin) then hears that
 * it is rank 0's private memory, not just an unmapped address.
 */
SDSM_API int sdsm__omp_my_tls(uintptr_t *lo, uintptr_t *hi) { return sdsm_crash_my_tls(lo, hi); }

SDSM_API void sdsm__omp_note_tls(int rank, int tid, uintptr_t lo, uintptr_t hi)
{
    sdsm_crash_note_tls(rank, tid, lo, hi);
}

/*
 * sdsm_barrier whose release carries len bytes (at most
 * SDSM_BARRIER_PAYLOAD_MAX) from the barrier manager's caller's `in` to
 * every caller's `out`: an OpenMP fork's region, which the workers would
 * otherwise fetch from a page the master has just written.  The manager's
 * caller passes in, the others NULL.  0, or SDSM_EINVAL (too long),
 * SDSM_ESTATE (the release brought no such payload: `in` was given on a
 * rank that does not manage the barrier), or sdsm_barrier's code.
 */
SDSM_API int sdsm__omp_barrier_bcast(const void *in, void *out, size_t len)
{
    if (in && sdsm_barrier_set_payload(in, len))
        return SDSM_EINVAL;
    int rc = sdsm_barrier();
    if (rc)
        return rc;
    return sdsm_barrier_payload(out, len) == len ? 0 : SDSM_ESTATE;
}

/* The rank that manages barriers (SDSM_BARRIER_MANAGER). */
SDSM_API int sdsm__omp_barrier_manager(void) { return sdsm_barrier_manager(); }

/* The master started a parallel region on the whole team (statistics). */
SDSM_API void sdsm__omp_note_region(void) { sdsm_stat_add(SDSM_ST_OMP_REGIONS, 1); }

/*
 * Whether a flush that sdsmcc made a call (omp/fences.c) publishes this
 * rank's pending writes: the program has such calls, the protocol can
 * publish, there are other ranks with copies of their own, and
 * SDSM_FLUSH_PUBLISH is not 0.  Fixed once sdsm_init has run.
 */
SDSM_API int sdsm__omp_flush_mode(void)
{
    return (sdsm_region_adopt.fences & 2) && sdsm_cfg.flush_publish && sdsm_proto->publish &&
           sdsm_nprocs() > 1 && !sdsm_region.host_shared;
}

/*
 * The program's flush (sdsm__omp_flush_mode): the writes this rank's
 * threads made and have not released go to their homes as an unlock sends
 * them, and the homes take every other copy of those pages before they
 * answer; so a thread of another rank that reads a flag written before
 * the flush fetches the flag and the data written before it.  Any thread.
 * A flush with nothing to publish costs a look at the dirty pages.
 * Nonzero (said why) if the publish failed: the job cannot go on.
 */
SDSM_API int sdsm__omp_flush(void)
{
    uint32_t written;
    if (publish_now("omp flush", &written))
        return 1;
    sdsm_stat_add(SDSM_ST_FLUSH_PUBLISHES, written > 0);
    sdsm_stat_add(SDSM_ST_FLUSH_PAGES, written);
    return 0;
}
