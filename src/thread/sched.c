/*
 * sched.c - run slots (see sched.h).
 *
 * free_slots counts the slots nobody holds.  slot_gen changes whenever a
 * slot is given up, and is the word ready threads sleep on; each slot given
 * up wakes one of them (slot_sleepers says whether any sleeps), not all:
 * with every ready thread woken, all but the one that takes the slot went
 * back to sleep at once, two wasted switches each.  gen changes at the same
 * time, for the threads in sdsm_comp_wait (they sleep on it through
 * core/wait.h and all need to look).  blocks
 * counts the slots given up because their thread could not go on (what
 * sdsm_comp_wait waits for).  free_slots goes below 0 while slots are
 * taken beyond the bound (forced), until their holders give them up; a
 * lent slot (a holder counted out, lend) is back in it.  Everything is
 * atomics and futexes: the hooks
 * run inside the fault handler.
 */
#include "thread/sched.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/stats.h"
#include "core/wait.h"
#include "core/blocked.h"

static _Atomic int free_slots;
static _Atomic int holders, ready; /* holding a slot; waiting for one */
static _Atomic int comp_waiting;   /* in wait_turn (sdsm_comp_wait, a spin point) */
static _Atomic int all_created;
static _Atomic uint32_t gen, blocks;
static _Atomic uint32_t slot_gen;
static _Atomic int slot_sleepers;
static _Atomic int parked; /* handed over (sdsm_sched_hand_over), not woken yet */
static int nslots;

/*
 * One record per compute thread (my_rec): whether it holds a slot, so that
 * a thread kept waiting can see whether the holders still run (stalled)
 * or compute in program code, making no runtime call (lend).
 */
typedef struct rec {
    _Atomic int tid;  /* its thread id while it holds a slot, else 0 */
    _Atomic int lent; /* its slot was lent to a ready thread (lend) */
    int wrec;         /* its record in core/blocked.h: call count, CPU clock */
    /* a ready thread's last look at it (stale) */
    _Atomic int looked;
    _Atomic uint32_t seen;
    _Atomic uint64_t seen_cpu;
} __attribute__((aligned(64))) rec_t;

#define MAX_RECS 4096 /* SDSM_THREADS at most */
static rec_t recs[MAX_RECS];
static _Atomic int nrecs;
static uint64_t slice_ns; /* SDSM_RUN_SLICE; 0: never lend */

static __thread int compute __attribute__((tls_model("initial-exec")));
static __thread int my_tid __attribute__((tls_model("initial-exec")));
static __thread int has_slot __attribute__((tls_model("initial-exec")));
static __thread int owe_slot __attribute__((tls_model("initial-exec")));
static __thread rec_t *my_rec __attribute__((tls_model("initial-exec")));

/* lent: LENT_NO (a holder counted in), LENT_YES (counted out: its slot
 * went back to the pool, lend), LENT_FREE (not a holder).  Set to NO
 * before the thread shows as a holder; give_up swaps in FREE and learns
 * whether the slot was lent, so a lend racing with a give-up returns the
 * slot to the pool exactly once. */
enum { LENT_NO = 0, LENT_YES = 1, LENT_FREE = 2 };

static void note_holder(int on)
{
    rec_t *r = my_rec;
    if (!r)
        return;
    if (on) {
        atomic_store(&r->lent, LENT_NO);
        atomic_store(&r->tid, my_tid);
    } else {
        atomic_store(&r->tid, 0);
    }
}

/* Is the thread running or runnable (state R in /proc)? */
static int runs(int tid) { return sdsm_task_state(tid) == 'R'; }

/*
 * Every holder of a slot sleeps outside sdsm (a thread waiting in sdsm has
 * given its slot up): on a lock of the program's or the C library's, say
 * stdio's, whose owner is this very thread or another one waiting for a
 * slot after its page arrived.  Waiting on would never end; the caller
 * takes a slot beyond the bound instead (counted as forced).
 */
static int stalled(void)
{
    int any = 0, n = atomic_load(&nrecs);
    for (int i = 0; i < n && i < MAX_RECS; i++) {
        int t = atomic_load(&recs[i].tid);
        if (!t)
            continue;
        if (runs(t))
            return 0;
        any = 1;
    }
    return any;
}

/*
 * A holder that has used SDSM_RUN_SLICE of CPU time since a ready thread
 * saw its last runtime call computes in program code, and may be spinning
 * on a flag that only a ready thread will set: the scheduler cannot stop
 * it, but it can stop counting it.  The first look records the holder's
 * call count and CPU time, later ones compare.  CPU time, not wall time: a
 * holder that lost its CPU to another process computes no more than one
 * that faults, and lending its slot would only crowd the CPU further.
 */
static int stale(rec_t *r)
{
    if (!atomic_load(&r->tid) || atomic_load(&r->lent) != LENT_NO)
        return 0;
    uint32_t c = sdsm_wait_calls(r->wrec);
    uint64_t cpu = sdsm_wait_cpu_ns(r->wrec), was = atomic_load(&r->seen_cpu);
    if (!atomic_load(&r->looked) || c != atomic_load(&r->seen) || !cpu || cpu < was) {
        atomic_store(&r->seen, c);
        atomic_store(&r->seen_cpu, cpu);
        atomic_store(&r->looked, 1);
        return 0;
    }
    return cpu - was >= slice_ns;
}

/* Count one stale holder out: its slot goes back to the pool, for the
 * caller to take; the holder queues for a slot again when it next enters
 * the runtime (on_resume).  The slot stays in the pool while the holder
 * goes on computing, so it is lent again and again if need be: a borrower
 * that waits in turn for the spinner gives it back, and the next ready
 * thread takes it (it was lent once per holder, and a pipeline of threads
 * spinning on each other's flags stopped when its borrower gave it up). */
static int lend(void)
{
    int n = atomic_load(&nrecs);
    for (int i = 0; i < n && i < MAX_RECS; i++) {
        int no = LENT_NO;
        if (stale(&recs[i]) && atomic_compare_exchange_strong(&recs[i].lent, &no, LENT_YES)) {
            atomic_fetch_add(&free_slots, 1);
            sdsm_stat_add(SDSM_ST_RUN_LENT, 1);
            return 1;
        }
    }
    return 0;
}

/* Returns the count of blocks after it. */
static uint32_t give_up(int blocked)
{
    has_slot = 0;
    note_holder(0);
    atomic_fetch_sub(&holders, 1);
    if (!my_rec || atomic_exchange(&my_rec->lent, LENT_FREE) != LENT_YES)
        atomic_fetch_add(&free_slots, 1); /* (a lent one is there already) */
    uint32_t b = blocked ? atomic_fetch_add(&blocks, 1) + 1 : atomic_load(&blocks);
    /* Dekker with take(): it counts itself in slot_sleepers, then the
     * kernel re-checks slot_gen; we change slot_gen, then read the count. */
    atomic_fetch_add(&slot_gen, 1);
    if (atomic_load(&slot_sleepers) > 0 || atomic_load(&parked) > 0)
        syscall(SYS_futex, (uint32_t *)&slot_gen, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    atomic_fetch_add(&gen, 1);
    sdsm_wake_all(&gen);
    return b;
}

/* counted: the thread is already in `ready` (a new thread, see expect). */
static void take(int counted)
{
    uint64_t t0 = 0;
    int in_ready = counted, quiet = 0; /* quiet: timed waits in a row with no slot given up */
    /* Naps of a time slice where slots may be lent (each looks whether a
     * holder computes without runtime calls), as many of them before the
     * holders are checked for a stall as fit in two of SDSM_SCHED_NAP_NS. */
    uint64_t nap_ns = slice_ns && slice_ns < SDSM_SCHED_NAP_NS ? slice_ns : SDSM_SCHED_NAP_NS;
    int stall_naps = (int)(2 * SDSM_SCHED_NAP_NS / nap_ns);
    sdsm_wait_save_t sv;
    for (;;) {
        uint32_t g = atomic_load(&slot_gen);
        int f = atomic_load(&free_slots);
        int force = f <= 0 && quiet >= stall_naps && stalled();
        if (f <= 0 && !force && t0 && slice_ns && lend())
            continue; /* a slot came back to the pool */
        while (f > 0 || force)
            if (atomic_compare_exchange_weak(&free_slots, &f, f - 1)) {
                if (force)
                    sdsm_stat_add(SDSM_ST_RUN_FORCED, 1);
                has_slot = 1;
                note_holder(1);
                sdsm_wait_called(); /* a slot taken starts the holder's slice afresh (stale) */
                sdsm_stat_max(SDSM_ST_RUN_MAX, (uint64_t)atomic_fetch_add(&holders, 1) + 1);
                if (in_ready)
                    atomic_fetch_sub(&ready, 1);
                if (t0) {
                    sdsm_wait_leave(&sv);
                    sdsm_stat_add(SDSM_ST_READY_WAIT_NS, sdsm_now_ns() - t0);
                }
                return;
            }
        if (!t0) {
            t0 = sdsm_now_ns();
            if (!in_ready)
                atomic_fetch_add(&ready, 1);
            in_ready = 1;
            sdsm_wait_enter(&sv, SDSM_WAIT_SLOT, 0);
        }
        /* Timed: a wait that long without a slot given up is checked for
         * a stall and for holders that compute (above). */
        struct timespec ts = {0, (long)nap_ns};
        sdsm_stat_add(SDSM_ST_READY_SLEEPS, 1);
        atomic_fetch_add(&slot_sleepers, 1);
        syscall(SYS_futex, (uint32_t *)&slot_gen, FUTEX_WAIT_PRIVATE, g, &ts, NULL, 0);
        atomic_fetch_sub(&slot_sleepers, 1);
        quiet = atomic_load(&slot_gen) == g ? quiet + 1 : 0;
    }
}

/* core/wait.h: about to wait. */
static void on_block(void)
{
    if (!has_slot)
        return;
    owe_slot = 1;
    sdsm_stat_add(SDSM_ST_RUN_YIELDS, 1);
    give_up(1);
}

/* core/wait.h: a safe point after a wait, and the end of every runtime
 * call.  A holder whose slot was lent while it computed queues for one
 * again here, which brings the rank back to its bound. */
static void on_resume(void)
{
    if (!compute)
        return;
    if (owe_slot) {
        owe_slot = 0;
        take(0);
    } else if (has_slot && my_rec && atomic_load_explicit(&my_rec->lent, memory_order_relaxed) == LENT_YES) {
        give_up(0);
        take(0);
    }
}

void sdsm_sched_init(int slots)
{
    nslots = slots > 0 ? slots : 1;
    slice_ns = (uint64_t)sdsm_cfg.run_slice_ms * 1000000ull;
    atomic_store(&free_slots, nslots);
    atomic_store(&holders, 0);
    sdsm_wait_ops.block = on_block;
    sdsm_wait_ops.resume = on_resume;
}

int sdsm_sched_slots(void) { return nslots; }
/* Wakes the threads in sdsm_comp_wait: "nobody can run" may hold from now
 * on, and nothing else may ever change gen (the last thread created can be
 * in comp_wait, every other one waiting, before its creator gets here). */
void sdsm_sched_all_created(void)
{
    if (atomic_exchange(&all_created, 1))
        return;
    atomic_fetch_add(&gen, 1);
    sdsm_wake_all(&gen);
}
void sdsm_sched_block(void) { on_block(); }
int sdsm_sched_is_compute(void) { return compute; }

void sdsm_sched_enter(int id)
{
    compute = 1;
    my_tid = (int)syscall(SYS_gettid);
    int i = atomic_fetch_add(&nrecs, 1);
    if (i < MAX_RECS) {
        my_rec = &recs[i];
        my_rec->wrec = sdsm_wait_register(id);
    }
    owe_slot = 0;
    take(1);
}

void sdsm_sched_exit(void)
{
    if (has_slot)
        give_up(1); /* it cannot go on: like a wait, it lets a comp_wait go */
    compute = 0;
    owe_slot = 0;
}

/* Give the slot up (as a thread that cannot go on if blocked) and wait
 * until another thread has to wait, or nobody can run; then run again. */
static void wait_turn(int blocked)
{
    owe_slot = 0;
    uint32_t b = has_slot ? give_up(blocked) : atomic_load(&blocks);
    atomic_fetch_add(&comp_waiting, 1);
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_SLOT, 1);
    for (;;) {
        uint32_t g = atomic_load(&gen);
        /* Another thread had to wait; or nobody can: all threads exist and
         * none runs or is ready (all wait or sit here too). */
        if (atomic_load(&blocks) != b ||
            (atomic_load(&all_created) && atomic_load(&holders) == 0 && atomic_load(&ready) == 0))
            break;
        sdsm_wait_change(&gen, g);
    }
    atomic_fetch_sub(&comp_waiting, 1);
    sdsm_wait_leave(&sv);
    take(0);
}

void sdsm_sched_comp_wait(void)
{
    if (compute)
        wait_turn(0);
}

void sdsm_sched_spin_point(void)
{
    static __thread unsigned spins;
    if (!compute || !has_slot || (++spins & 63) != 0 ||
        (atomic_load(&ready) == 0 && atomic_load(&comp_waiting) == 0))
        return;
    sdsm_stat_add(SDSM_ST_RUN_YIELDS, 1);
    wait_turn(1);
}

void sdsm_sched_hand_over(_Atomic uint32_t *w, uint32_t val, int n)
{
    if (n <= 0)
        return;
    /* Counted before they can wake: a slot given up from now on wakes one
     * of them, and comp_wait sees them as able to run. */
    atomic_fetch_add(&parked, n);
    atomic_fetch_add(&ready, n);
    sdsm_stat_add(SDSM_ST_RUN_HANDED, (uint64_t)n);
    int now = atomic_load(&free_slots) - (compute && !has_slot && owe_slot);
    if (now < 0)
        now = 0;
    if (now > n)
        now = n;
    /* Moved threads sleep on slot_gen as if in take(): whoever gives a
     * slot up wakes one.  If *w moved again (it cannot while they sleep,
     * as every thread must arrive first) all are woken instead. */
    if (syscall(SYS_futex, (uint32_t *)w, FUTEX_CMP_REQUEUE_PRIVATE, now, (long)INT32_MAX,
                (uint32_t *)&slot_gen, (long)val) < 0)
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void sdsm_sched_unpark(void)
{
    atomic_fetch_sub(&parked, 1);
    atomic_fetch_sub(&ready, 1);
}

void sdsm_sched_expect(int n) { atomic_fetch_add(&ready, n); }
