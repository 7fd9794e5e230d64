/*
 * blocked.h - what each thread of this rank is blocked on, and since when
 * (the hang reports' registry; how a thread waits is core/wait.h).
 *
 * Every blocking wait of the runtime (a barrier or allocation round, a lock
 * grant, a condition wake-up, a page fetch) brackets itself with
 * sdsm_wait_enter/leave, so a stuck job can say what every rank waits for
 * (SDSM_HANG_REPORT, sdsmrun --timeout) instead of hanging in silence.
 * Each thread owns one slot; the fields are atomics written by their thread
 * and read by whoever reports.  No allocation, no locks: usable in the
 * fault handler.
 */
#ifndef SDSM_CORE_BLOCKED_H
#define SDSM_CORE_BLOCKED_H

#include <stdatomic.h>
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
    int64_t id;
    uint64_t since;
} sdsm_wait_save_t;

/* Start waiting (the previous state of this thread goes to *save). */
void sdsm_wait_enter(sdsm_wait_save_t *save, sdsm_wait_kind_t kind, int64_t id);
/* Stop waiting: back to the state before the matching enter. */
void sdsm_wait_leave(const sdsm_wait_save_t *save);

/*
 * Application threads (the main thread at sdsm_init, each compute thread as
 * it starts) register, so that a thread computing outside the runtime can
 * be told from one asleep or waiting: label is the compute thread's id,
 * -1 for the main thread.  Returns the thread's record.  Each return from a
 * runtime call or fault (sdsm_wait_resume) counts in the record
 * (sdsm_wait_called): a relaxed increment of a word of the thread's own,
 * no system call.
 */
int sdsm_wait_register(int label);
extern __thread _Atomic uint32_t *sdsm_wait_my_calls __attribute__((tls_model("initial-exec")));

static inline void sdsm_wait_called(void)
{
    _Atomic uint32_t *c = sdsm_wait_my_calls;
    if (c)
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}
/* The state letter of thread tid of this process in /proc (R running or
 * runnable, S asleep, ...); 0 if it cannot be read. */
char sdsm_task_state(int tid);
/* Whether rec is a registered thread's, and its label. */
int sdsm_wait_label(int rec, int *label);
/* Runtime calls record rec's thread has made so far. */
uint32_t sdsm_wait_calls(int rec);
/* CPU time rec's thread has used, in ns (0: unknown, or it ended). */
uint64_t sdsm_wait_cpu_ns(int rec);

/* Longest current wait of any thread of this rank, in ns (0: nobody waits). */
uint64_t sdsm_wait_longest_ns(uint64_t now);
/*
 * Visit every waiting thread: fn(arg, thread number, kind, id, waited ns).
 * Returns how many threads have ever waited (the slots in use).
 */
int sdsm_wait_each(void (*fn)(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns), void *arg,
                   uint64_t now);

/*
 * The hang watchdog looks at every registered thread each tick: since when
 * has it made no runtime call (the look that first saw its count)?  A thread
 * in no wait whose state is R (running or runnable) computes.
 * sdsm_wait_look records the look (the watchdog only); sdsm_wait_each_app
 * reads: fn(arg, label, computing, waiting, quiet ns: 0 if a call was made
 * since the last look, UINT64_MAX if no look yet).
 */
void sdsm_wait_look(uint64_t now);
void sdsm_wait_each_app(void (*fn)(void *arg, int label, int computing, int waiting, uint64_t quiet),
                        void *arg, uint64_t now);

#endif
