/*
 * sched.h - run slots for compute threads (seed 001's scheduler).
 *
 * A rank runs at most M compute threads at once (SDSM_RUN_THREADS, default
 * the host's CPUs divided by its ranks).  A compute thread holds a run slot
 * while it computes; when it has to wait (a page on its way, a lock, a
 * barrier, a condition) it gives the slot up, and a ready thread takes it,
 * so one thread's network wait is another's compute time.  A thread whose
 * wait is over takes a slot again at the next safe point (return from the
 * fault handler or from the sdsm call), never while it holds a runtime lock.
 *
 * A thread computing in program code cannot be stopped, but once it has
 * used a time slice of CPU (SDSM_RUN_SLICE) without a runtime call it is
 * no longer counted: a ready thread, which looks every slice, takes a slot
 * beside it (lent), and it queues for a slot again at its next runtime
 * call.  Threads spinning on a flag that a ready thread is to set would
 * otherwise spin forever.
 *
 * Seed 001 has a scheduler thread that the compute threads tell about their
 * faults; here the waiting thread itself hands its slot on (no message, no
 * extra thread: a futex word and a counter).
 */
#ifndef SDSM_THREAD_SCHED_H
#define SDSM_THREAD_SCHED_H

#include <stdatomic.h>
#include <stdint.h>

/* Longest a thread waiting for a slot sleeps before it looks again whether
 * the slot holders are stalled (take() in sched.c; a barrier's waiters,
 * which its release may hand to the slot queue asleep, thread.c). */
#define SDSM_SCHED_NAP_NS (50 * 1000 * 1000)

/* Set the number of slots and install the wait hooks. */
void sdsm_sched_init(int slots);
int sdsm_sched_slots(void);

/* A compute thread is being created (n = 1) or failed to start (n = -1): it
 * counts as ready from now on, so comp_wait never mistakes "not started
 * yet" for "nobody can run". */
void sdsm_sched_expect(int n);
/* The calling thread becomes compute thread id (job-wide) and waits for a
 * slot. */
void sdsm_sched_enter(int id);
/* The calling compute thread ends: its slot goes to a ready thread. */
void sdsm_sched_exit(void);
/* sdsm_comp_wait: give the slot up and wait until another running compute
 * thread of this rank has to wait (or none runs at all), then run again. */
void sdsm_sched_comp_wait(void);
/* The calling compute thread let a lock go (sdsm_unlock).  A thread that
 * polls a flag under a lock kept at its rank never waits, and would keep
 * the slot from the thread it polls for: every 64th time, if another
 * thread of the rank waits for a slot or sits in comp_wait, this one gives
 * its slot up as a thread that cannot go on, and waits as comp_wait does. */
void sdsm_sched_spin_point(void);
/* The calling compute thread is about to block outside the runtime's waits
 * (joining another thread): give the slot up until the next safe point. */
void sdsm_sched_block(void);
/* Every compute thread of the rank has been created (comp_wait's "none
 * runs" escape applies only then: a thread not yet created may still come). */
void sdsm_sched_all_created(void);
/* A barrier of this rank's compute threads is over: *w (already moved on
 * to val) is the word its n waiters sleep on.  They are moved, asleep, to
 * the queue of threads waiting for a slot (FUTEX_CMP_REQUEUE), as many
 * woken now as slots are free beyond the one the caller takes back, the
 * others by the slots given up later, one each: with fewer slots than
 * threads, the rest would otherwise all wake only to find no slot and sleep
 * again.  They count as ready until each calls sdsm_sched_unpark. */
void sdsm_sched_hand_over(_Atomic uint32_t *w, uint32_t val, int n);
/* A waiter that sdsm_sched_hand_over counted has woken (for whatever
 * reason: it may not have been asleep when it was moved). */
void sdsm_sched_unpark(void);
/* True in a compute thread. */
int sdsm_sched_is_compute(void);

#endif
