/*
 * sched.c - run slots (see sched.h).
 *
 * free_slots counts the slots nobody holds; gen changes whenever a slot is
 * given up, and is the word ready threads sleep on (core/wait.h); blocks
 * counts the slots given up because their thread could not go on (what
 * sdsm_comp_wait waits for).  Everything is atomics and futexes: the hooks
 * run inside the fault handler.
 */
#include "thread/sched.h"

#include <stdatomic.h>
#include <stdint.h>

#include "core/stats.h"
#include "core/wait.h"
#include "core/waits.h"

static _Atomic int      free_slots;
static _Atomic int      holders, ready; /* holding a slot; waiting for one */
static _Atomic int      all_created;
static _Atomic uint32_t gen, blocks;
static int              nslots;

static __thread int compute __attribute__((tls_model("initial-exec")));
static __thread int has_slot __attribute__((tls_model("initial-exec")));
static __thread int owe_slot __attribute__((tls_model("initial-exec")));

static void give_up(int blocked)
{
    has_slot = 0;
    atomic_fetch_sub(&holders, 1);
    atomic_fetch_add(&free_slots, 1);
    if (blocked)
        atomic_fetch_add(&blocks, 1);
    atomic_fetch_add(&gen, 1);
    sdsm_wake_all(&gen);
}

/* counted: the thread is already in `ready` (a new thread, see expect). */
static void take(int counted)
{
    uint64_t t0 = 0;
    int in_ready = counted;
    sdsm_wait_save_t sv;
    for (;;) {
        uint32_t g = atomic_load(&gen);
        int f = atomic_load(&free_slots);
        while (f > 0)
            if (atomic_compare_exchange_weak(&free_slots, &f, f - 1)) {
                has_slot = 1;
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
        sdsm_wait_change(&gen, g);
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

/* core/wait.h: a safe point after a wait. */
static void on_resume(void)
{
    if (owe_slot && compute) {
        owe_slot = 0;
        take(0);
    }
}

void sdsm_sched_init(int slots)
{
    nslots = slots > 0 ? slots : 1;
    atomic_store(&free_slots, nslots);
    atomic_store(&holders, 0);
    sdsm_wait_block_hook = on_block;
    sdsm_wait_resume_hook = on_resume;
}

int sdsm_sched_slots(void) { return nslots; }
void sdsm_sched_all_created(void) { atomic_store(&all_created, 1); }
void sdsm_sched_block(void) { on_block(); }
int sdsm_sched_is_compute(void) { return compute; }

void sdsm_sched_enter(void)
{
    compute = 1;
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

void sdsm_sched_comp_wait(void)
{
    if (!compute)
        return;
    owe_slot = 0;
    uint32_t b = atomic_load(&blocks);
    if (has_slot)
        give_up(0);
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
    sdsm_wait_leave(&sv);
    take(0);
}

void sdsm_sched_expect(int n)
{
    atomic_fetch_add(&ready, n);
}
