/*
 * waits.h - what each thread of this rank is blocked on, and since when.
 *
 * Every blocking wait of the runtime (a barrier or allocation round, a lock
 * grant, a condition wake-up, a page fetch) brackets itself with
 * sdsm_wait_enter/leave, so a stuck job can say what every rank waits for
 * (SDSM_HANG_REPORT, sdsmrun --timeout) instead of hanging in silence.
 * Each thread owns one slot; the fields are atomics written by their thread
 * and read by whoever reports.  No allocation, no locks: usable in the
 * fault handler.
 */
#ifndef SDSM_CORE_WAITS_H
#define SDSM_CORE_WAITS_H

#include <stddef.h>
#include <stdint.h>

typedef enum sdsm_wait_kind {
    SDSM_WAIT_NONE = 0,
    SDSM_WAIT_COLL,  /* the current collective call (core/coll.h); id: the manager rank */
    SDSM_WAIT_LOCK,  /* id: the lock */
    SDSM_WAIT_COND,  /* id: the condition variable */
    SDSM_WAIT_PAGE,  /* id: the page (a fault waiting for its fetch) */
    SDSM_WAIT_GROUP, /* compute threads of this rank: id the group, -1 sdsm_barrier's local part,
                        -2 sdsm_thread_join */
    SDSM_WAIT_SLOT,  /* a compute thread waiting for a run slot (SDSM_RUN_THREADS) */
    SDSM_WAIT_NKINDS
} sdsm_wait_kind_t;

typedef struct sdsm_wait_save {
    uint32_t kind;
    int64_t  id;
    uint64_t since;
} sdsm_wait_save_t;

/* Start waiting (the previous state of this thread goes to *save). */
void sdsm_wait_enter(sdsm_wait_save_t *save, sdsm_wait_kind_t kind, int64_t id);
/* Stop waiting: back to the state before the matching enter. */
void sdsm_wait_leave(const sdsm_wait_save_t *save);

/* Longest current wait of any thread of this rank, in ns (0: nobody waits). */
uint64_t sdsm_wait_longest_ns(uint64_t now);
/*
 * Visit every waiting thread: fn(arg, thread number, kind, id, waited ns).
 * Returns how many threads have ever waited (the slots in use).
 */
int sdsm_wait_each(void (*fn)(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns),
                   void *arg, uint64_t now);

#endif
