/*
 * capture.c - ibec: a thread's write outside any critical section, made
 * while another thread of its rank is inside one on the same page, travels
 * with that section's diffL (the twinL is per page).  Rank 0's thread A
 * writes under lock 1 while thread B writes its word w = 1, then under lock
 * 2 while B writes w = 2: both diffL carry w, the second the newer value.
 * The home (the last rank) then takes lock 1, whose chain holds the older
 * diffL.  The home had it already: applied again to the home's page it
 * would set w back to 1, and no diffB carries w = 2 (rank 0 had it in a
 * diffL), so after the barrier the home - and every later reader - would
 * see 1.
 */
#define PT_NAME "capture"
#include "pt.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define L1     1
#define L2     2
#define ROUNDS 3

static volatile long *page; /* slot of lock 1, slot of lock 2, B's word: one page */
#define SLOT1 page[0]
#define SLOT2 page[8]
#define WORD  page[16]

static _Atomic int step;
static long base;

static void wait_step(int s)
{
    while (atomic_load(&step) != s)
        sched_yield();
}

static void *thread_b(void *arg)
{
    (void)arg;
    wait_step(1);
    WORD = base + 1; /* inside A's section of lock 1 */
    atomic_store(&step, 2);
    wait_step(3);
    WORD = base + 2; /* inside A's section of lock 2 */
    atomic_store(&step, 4);
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    page = sdsm_calloc(512, sizeof(long), n - 1);
    if (!page)
        sdsm_abort(1, "%s: rank %d: sdsm_calloc failed", PT_NAME, me);
    for (int round = 0; round < ROUNDS && n > 1; round++) {
        base = 100L * (round + 1);
        sdsm_barrier();
        if (me == 0) {
            pthread_t b;
            atomic_store(&step, 0);
            if (pthread_create(&b, NULL, thread_b, NULL))
                sdsm_abort(1, "%s: rank 0: pthread_create failed", PT_NAME);
            sdsm_lock(L1);
            SLOT1 = round + 1;
            atomic_store(&step, 1);
            wait_step(2);
            sdsm_unlock(L1);
            sdsm_lock(L2);
            SLOT2 = round + 1;
            atomic_store(&step, 3);
            wait_step(4);
            sdsm_unlock(L2);
            pthread_join(b, NULL);
        } else if (me == n - 1) {
            for (;;) { /* until rank 0's section of lock 2 is over */
                sdsm_lock(L2);
                long v = SLOT2;
                sdsm_unlock(L2);
                if (v == round + 1)
                    break;
                sched_yield();
            }
            sdsm_lock(L1);
            PT_CHECK("slot of lock 1", round + 1, SLOT1);
            sdsm_unlock(L1);
        }
        sdsm_barrier();
        PT_CHECK("word written outside the critical sections", base + 2, WORD);
    }
    pt_ok();
    return 0;
}
