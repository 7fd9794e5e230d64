/*
 * wait.h - how application threads wait for the service thread.
 *
 * A waiter watches a 32-bit word until it changes.  It first polls for
 * SDSM_SPIN_US microseconds (yielding the CPU each time round where the job
 * has more compute threads on the host than CPUs: the threads that will
 * produce the answer need it; see sdsm_wait_yields), then sleeps.  One
 * waiter at a time sleeps in the transport's epoll_wait instead of
 * futex(2) (sdsm_wait_ops.lead): the frame that answers it then wakes
 * it directly, as a blocking read wakes a ping-pong, where a futex sleeper
 * needs the service thread woken first to wake it in turn.  Wakers change
 * the word, then call sdsm_wake_all().  There is no lost wake-up: futex_wait
 * re-checks the word atomically in the kernel, and the epoll sleeper
 * publishes its word before it checks it (sdsm_wait_lead_word), so a waker
 * that changed the word after the check sees it and kicks it.  No
 * allocation, so usable in the fault handler.
 */
#ifndef SDSM_CORE_WAIT_H
#define SDSM_CORE_WAIT_H

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/stats.h"
#include "core/blocked.h"

/*
 * Threads asleep in futex_wait, so wakers skip the system call when none is,
 * counted per word (hashed): a thread asleep in a barrier must not make
 * every page install in the process pay a futex wake for nobody.
 */
#define SDSM_SLEEP_BUCKETS 64
extern _Atomic int sdsm_sleepers[SDSM_SLEEP_BUCKETS];

static inline unsigned sdsm_sleep_bucket(const void *w)
{
    uintptr_t a = (uintptr_t)w;
    return (unsigned)((a >> 2 ^ a >> 8) % SDSM_SLEEP_BUCKETS);
}

static inline _Atomic int *sdsm_sleepers_of(const void *w) { return &sdsm_sleepers[sdsm_sleep_bucket(w)]; }
/*
 * What the layers above core plug into a wait, in one table (a NULL entry
 * is skipped).  The transport fills in progress, lead, kick and unpin when
 * its service thread starts (and empties progress, lead and unpin when it
 * stops); the compute-thread scheduler fills in block and resume.
 */
typedef struct {
    /*
     * Installed by the transport: receive and handle whatever has arrived, if
     * no other thread is doing so.  A waiting thread calls it while it spins,
     * so the reply it waits for is handled by the thread that needs it,
     * without the extra wake-up of a hand-off from the service thread.
     * Returns > 0 if it handled something.
     */
    int (*progress)(void);
    /*
     * Installed by the transport: wait for *w to leave old as the thread that
     * receives from the network, handling what arrives.  Returns 1 once *w
     * changed, 0 if this thread cannot (another one leads, it is the service
     * thread, it holds the progress lock, the transport is stopping): the
     * caller then sleeps in futex(2).
     */
    int (*lead)(_Atomic uint32_t *w, uint32_t old);
    /* Kick the leader out of epoll_wait (see sdsm_wait_lead_word). */
    void (*kick)(void);
    /* Installed by the transport: end the calling thread's request pins (see
     * sdsm_net_pin): its wait is over, or it is about to sleep in futex(2),
     * where no frame could wake it. */
    void (*unpin)(void);
    /*
     * Installed by the compute-thread scheduler: the calling thread is about
     * to wait (for the network, a lock, a barrier...), so a compute thread
     * gives up its run slot here (block).  It takes one again only at a point
     * where it holds no runtime lock (resume, from sdsm_wait_resume), so a
     * thread running without a slot for a moment can never keep another from
     * finishing.
     */
    void (*block)(void);
    void (*resume)(void);
    /* Did another job take the CPU?  (Below, beside sdsm_spin_stolen.)
     * Never NULL: wait.c's reading of /proc/loadavg, unless a test stands
     * in for the kernel. */
    int (*spin_foreign)(uint64_t now);
} sdsm_wait_ops_t;
extern sdsm_wait_ops_t sdsm_wait_ops;
/* The word the leader sleeps on in epoll_wait, NULL when none does; a waker
 * of that word kicks it out of epoll_wait (sdsm_wait_ops.kick). */
extern _Atomic(_Atomic uint32_t *) sdsm_wait_lead_word;

static inline void sdsm_wait_unpinned(void)
{
    void (*f)(void) = sdsm_wait_ops.unpin;
    if (f)
        f();
}
/* Set by the transport: the CPUs this rank may run on are fewer than the
 * compute threads of the ranks that run on them (boot.c's cpu_sharers), so
 * a polling waiter yields its CPU each time round; with
 * a CPU each it polls without yielding (a yield to another job's busy
 * process gives that one a whole time slice, milliseconds). */
extern int sdsm_wait_yields;
/* Microseconds a waiter polls before it sleeps: SDSM_SPIN_US, or
 * SDSM_HIDE_SPIN_US where the rank has more compute threads than run slots.
 * Chosen in one place, by the compute-thread table at sdsm_init (thread.c),
 * once the service thread already runs: hence atomic, read relaxed. */
extern _Atomic long sdsm_wait_spin_us;
/* ...and that is SDSM_HIDE_SPIN_US: a poll yields to the rank's own compute
 * threads on purpose, so a long poll round is no CPU lost (no poll hold,
 * below).  Set with sdsm_wait_spin_us. */
extern _Atomic int sdsm_wait_hiding;
/* The calling thread is about to block elsewhere than sdsm_wait_change
 * (a mutex another application thread may hold for long). */
static inline void sdsm_wait_blocking(void)
{
    void (*f)(void) = sdsm_wait_ops.block;
    if (f)
        f();
}

/* A safe point (no runtime lock held): a compute thread that gave up its
 * run slot while waiting waits for one again here.  Every return from a
 * runtime call or fault passes here, so the thread's call count (blocked.h)
 * is kept here too. */
static inline void sdsm_wait_resume(void)
{
    sdsm_wait_called();
    void (*f)(void) = sdsm_wait_ops.resume;
    if (f)
        f();
}

static inline void sdsm_wake_all(_Atomic uint32_t *w)
{
    if (atomic_load(sdsm_sleepers_of(w)) > 0)
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    if (atomic_load(&sdsm_wait_lead_word) == w)
        sdsm_wait_ops.kick();
}

/*
 * futex(2) on a word that other processes map too (the host's control
 * block: sync/hostbar.c, hostlock.c).  Shared, not _PRIVATE as above: a
 * private futex is keyed by this process's address space, so a waker in
 * another process would never find the sleeper.  The wait returns when *w
 * is no longer val, when woken, or after *nap (NULL: no limit), with no
 * promise which: the caller re-checks its word.  No sleeper count (the
 * callers keep their own, in the shared block), no leader to kick.
 */
static inline void sdsm_futex_wait_shared(_Atomic uint32_t *w, uint32_t val, const struct timespec *nap)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, nap, NULL, 0);
}

static inline void sdsm_futex_wake_shared(_Atomic uint32_t *w, uint32_t n)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, n, NULL, NULL, 0);
}

/*
 * Polling that pays.  A poll that ends without the answer cost SDSM_SPIN_US
 * of a CPU, and on a machine where every CPU is busy it is worse: the
 * thread that is to answer may be queued behind the poller on its CPU (a
 * woken thread is placed next to its waker), so the answer comes only after
 * the poll has given up.  So polls are scored per word (hashed, as the
 * sleepers): a poll that times out adds SDSM_SPIN_LOST to the word's score,
 * one that sees the word change takes SDSM_SPIN_WON off; while the score is
 * SDSM_SPIN_OFF or more the waiter sleeps at once, except one wait in
 * SDSM_SPIN_PROBE, which polls to find out whether polling pays again.
 * Polling goes on while at least 2 of 3 polls of a word win; the score
 * stops one win above SDSM_SPIN_OFF, so one winning probe turns it back on.
 *
 * A poll that loses its CPU for a time slice is worse than lost, even if it
 * wins: another job's CPU-bound process was runnable on that CPU (a
 * sched_yield hands it a whole slice; a busy-polling thread that used up
 * its share is preempted for one), and the answer had to wait for the
 * slice to end, milliseconds, where a sleeping waiter is woken at once.  A
 * probe of one wait in SDSM_SPIN_PROBE then costs a slice each, which on a
 * loaded machine doubled the fault's mean time.  So a poll round that
 * served nothing and still took SDSM_SPIN_STOLEN_NS or more ends the poll,
 * and if another job took the CPU (sdsm_wait_ops.spin_foreign, below), no
 * thread of the rank polls for a while after it (the hold,
 * sdsm_spin_held_until): every wait sleeps at once, as with SDSM_SPIN_US=0,
 * until the hold ends and a poll tries again.  A lone preemption (a daemon
 * waking on a quiet machine) should cost little polling, a steady second
 * job should cost few slices: so the hold starts at SDSM_SPIN_HOLD_NS,
 * doubles with every poll that loses its CPU again within 4 holds (up to
 * 2^SDSM_SPIN_HOLD_MAX times), and halves at the end of a poll when the
 * last loss is older than that.  Not where the rank hides latency
 * (sdsm_wait_hiding): its polls yield to its own compute threads on
 * purpose, and other processes on the CPUs are no sign of another job
 * there (the emulated cluster's delay readers made the hold take cg_sdsmt's
 * 4-thread gain at P=2 from +40-67 % to +19-56 %).
 */
#define SDSM_SPIN_LOST      16
#define SDSM_SPIN_WON       8
#define SDSM_SPIN_OFF       48
#define SDSM_SPIN_TOP       (SDSM_SPIN_OFF + SDSM_SPIN_WON - 1)
#define SDSM_SPIN_PROBE     16
#define SDSM_SPIN_STOLEN_NS 250000ull  /* a poll round this long lost its CPU */
#define SDSM_SPIN_HOLD_NS   5000000ull /* then nobody polls for this long, */
#define SDSM_SPIN_HOLD_MAX  8          /* ... up to 2^8 times as long (1.28 s) */
extern _Atomic int sdsm_spin_score[SDSM_SLEEP_BUCKETS];
extern _Atomic unsigned sdsm_spin_probes;
extern _Atomic uint64_t sdsm_spin_held_until;
extern _Atomic int sdsm_spin_hold_level;
/* A poll lost its CPU at now: hold polls off (see above) if another job
 * took it (sdsm_wait_ops.spin_foreign).  sdsm_spin_hold: hold them off. */
void sdsm_spin_stolen(uint64_t now);
void sdsm_spin_hold(uint64_t now);
/* Did another job take the CPU (sdsm_wait_ops.spin_foreign)?  Only a yield
 * or a preemption in favour of another job is a CPU lost: where the job's
 * own ranks outnumber the CPUs, a yield is meant to give the CPU to one of
 * them, and stopping the polls there made sor and laplace 20-26 % slower at
 * P=4 and 8 on 2 CPUs.  So this asks the kernel how many threads are
 * runnable (/proc/loadavg) and says yes when there are more than the job's
 * compute threads on this host (sdsm_wait_local_threads; the CPUs here if
 * not known), at most once per 10 ms.  A pointer, so that a test can stand
 * in for the kernel. */
extern _Atomic int sdsm_wait_local_threads;
/* A poll ended with its CPU at now: the hold halves if the last loss is
 * old. */
void sdsm_spin_kept(uint64_t now);

/* Polls are held off (a poll lost its CPU lately, see above). */
static inline int sdsm_spin_held(uint64_t now)
{
    return now < atomic_load_explicit(&sdsm_spin_held_until, memory_order_relaxed);
}

/* The rank's last wait slept at once (its polls were not paying or held
 * off): the next is likely to as well, so its request is pinned (net/pin.c).
 * Written only when it changes, to keep the line shared between threads. */
extern _Atomic int sdsm_spin_sleepy;

static inline int sdsm_spin_decided(int poll)
{
    if (atomic_load_explicit(&sdsm_spin_sleepy, memory_order_relaxed) == poll)
        atomic_store_explicit(&sdsm_spin_sleepy, !poll, memory_order_relaxed);
    if (!poll)
        sdsm_stat_add(SDSM_ST_SPIN_SKIPPED, 1);
    return poll;
}

static inline int sdsm_spin_pays(_Atomic int *score, uint64_t now)
{
    if (sdsm_spin_held(now))
        return sdsm_spin_decided(0);
    if (atomic_load_explicit(score, memory_order_relaxed) < SDSM_SPIN_OFF)
        return sdsm_spin_decided(1);
    return sdsm_spin_decided(
        atomic_fetch_add_explicit(&sdsm_spin_probes, 1, memory_order_relaxed) % SDSM_SPIN_PROBE == 0);
}

/* Lost or won; updates race harmlessly (a lost update is one poll's score). */
static inline void sdsm_spin_scored(_Atomic int *score, int won)
{
    int s = atomic_load_explicit(score, memory_order_relaxed);
    s = won ? (s > SDSM_SPIN_WON ? s - SDSM_SPIN_WON : 0)
            : (s + SDSM_SPIN_LOST < SDSM_SPIN_TOP ? s + SDSM_SPIN_LOST : SDSM_SPIN_TOP);
    atomic_store_explicit(score, s, memory_order_relaxed);
    sdsm_stat_add(won ? SDSM_ST_SPIN_WON : SDSM_ST_SPIN_LOST, 1);
}

/* Block while *w == old (may_lead: as the leader, in the event loop, if no
 * other thread is; nap: if not NULL, return after sleeping that long even
 * if *w did not change).  Returns the new value. */
static inline uint32_t sdsm_wait_change_as(_Atomic uint32_t *w, uint32_t old, int may_lead,
                                           const struct timespec *nap)
{
    uint32_t v = atomic_load_explicit(w, memory_order_acquire);
    if (v != old) {
        sdsm_wait_unpinned();
        return v;
    }
    void (*blocking)(void) = sdsm_wait_ops.block;
    if (blocking)
        blocking();
    long spin_us = atomic_load_explicit(&sdsm_wait_spin_us, memory_order_relaxed);
    _Atomic int *score = spin_us > 0 ? &sdsm_spin_score[sdsm_sleep_bucket(w)] : NULL;
    uint64_t now = score ? sdsm_now_ns() : 0;
    if (score && sdsm_spin_pays(score, now)) {
        uint64_t until = now + (uint64_t)spin_us * 1000u, then;
        int stolen = 0;
        do {
            int served = sdsm_wait_ops.progress ? sdsm_wait_ops.progress() : 0;
            if (served <= 0 && sdsm_wait_yields)
                sched_yield();
            v = atomic_load_explicit(w, memory_order_acquire);
            then = now;
            now = sdsm_now_ns();
            stolen = served <= 0 && now - then >= SDSM_SPIN_STOLEN_NS &&
                     !atomic_load_explicit(&sdsm_wait_hiding, memory_order_relaxed);
        } while (v == old && now < until && !stolen);
        if (stolen)
            sdsm_spin_stolen(now);
        else if (atomic_load_explicit(&sdsm_spin_hold_level, memory_order_relaxed) > 0)
            sdsm_spin_kept(now);
        sdsm_spin_scored(score, v != old && !stolen);
        if (v != old) {
            sdsm_wait_unpinned();
            return v;
        }
    }
    int (*lead)(_Atomic uint32_t *, uint32_t) = may_lead ? sdsm_wait_ops.lead : NULL;
    int led = lead && lead(w, old);
    sdsm_wait_unpinned(); /* before a futex sleep: a pinned socket would wake nobody */
    if (led)
        return atomic_load_explicit(w, memory_order_acquire);
    for (;;) {
        /* Dekker with the waker: it stores *w then reads w's sleepers; we
         * count ourselves then let the kernel re-check *w.  (seq_cst both.) */
        atomic_fetch_add(sdsm_sleepers_of(w), 1);
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, old, nap, NULL, 0);
        atomic_fetch_sub(sdsm_sleepers_of(w), 1);
        v = atomic_load_explicit(w, memory_order_acquire);
        if (v != old || nap)
            return v;
    }
}

/* Block while *w == old.  Returns the new value. */
static inline uint32_t sdsm_wait_change(_Atomic uint32_t *w, uint32_t old)
{
    return sdsm_wait_change_as(w, old, 1, NULL);
}

/* The same for a word no frame from the network changes (the threads of a
 * rank meeting among themselves): the thread does not lead, so that the one
 * that waits for the network meanwhile (the last arrival, in the rank
 * barrier) can, and its frames wake it rather than this thread.  It sleeps
 * at most *nap at a time (NULL: no limit); the caller loops. */
static inline uint32_t sdsm_wait_change_local(_Atomic uint32_t *w, uint32_t old, const struct timespec *nap)
{
    return sdsm_wait_change_as(w, old, 0, nap);
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
    if (atomic_fetch_sub(c, 1) == 1)
        sdsm_wake_all(c);
}

#endif
