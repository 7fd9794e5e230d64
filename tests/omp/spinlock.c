/*
 * spinlock.c - a lock the program builds itself from atomics, guarding
 * plain data, and reductions combined by compare-and-swap.
 *
 * The lock is test-and-test-and-set: a relaxed load spins while the lock
 * is taken, then a compare-and-swap takes it, and a store gives it back;
 * once with acquire and release orders, once all relaxed with flushes
 * around the critical section (OpenMP's own idiom).  The runtime reads
 * relaxed loads at the home without a lock, and a store publishes the
 * rank's writes before it lands (src/omp/atomic.c): each holder adds to
 * counters that straddle two pages, not atomically, and none of those
 * additions may be lost.  (A first version of the lock-free reads, which
 * skipped the lock only for loads that fed a swap, lost additions under
 * the relaxed lock at 4 ranks.)  The reductions (a double's +=, combined
 * by a load and a swap loop) run round after round, read by every thread
 * after their barrier (redcheck.c's way).
 */
#include <omp.h>

#include "omptest.h"

#define ROUNDS  8
#define PER     20
#define NCOUNT  1024 /* longs: two pages */
#define REDUCES 300

static int lock_word;
static long counts[NCOUNT];
static double dsum;
static int bad_reduce;

static void take(int *l)
{
    for (;;) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            ;
        int free_ = 0;
        if (__atomic_compare_exchange_n(l, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
    }
}

static void give(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

/* The same lock in OpenMP's own terms: relaxed atomics, the order given by
 * flushes (what `omp atomic compare` without a memory-order clause and a
 * flush make). */
static void take_relaxed(int *l)
{
    for (;;) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            ;
        int free_ = 0;
        if (__atomic_compare_exchange_n(l, &free_, 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
    }
#pragma omp flush
}

static void give_relaxed(int *l)
{
#pragma omp flush
    __atomic_store_n(l, 0, __ATOMIC_RELAXED);
}

/* ROUNDS of additions under the lock (relaxed: the flushed kind); the
 * counters' total afterwards. */
static long add_under_lock(int relaxed)
{
#pragma omp parallel
    {
        for (int r = 0; r < ROUNDS; r++) {
#pragma omp for schedule(static)
            for (int i = 0; i < 64; i++)
                for (int k = 0; k < PER; k++) {
                    if (relaxed)
                        take_relaxed(&lock_word);
                    else
                        take(&lock_word);
                    /* a read-modify-write of plain data on both pages */
                    counts[(i * 37 + k) % NCOUNT] += 1;
                    counts[NCOUNT - 1 - (i + k) % 16] += 2;
                    if (relaxed)
                        give_relaxed(&lock_word);
                    else
                        give(&lock_word);
                }
        }
    }
    long total = 0;
    for (int i = 0; i < NCOUNT; i++)
        total += counts[i];
    return total;
}

int main(void)
{
    long total = add_under_lock(0), weighted = 0;
    for (int i = 0; i < NCOUNT; i++)
        weighted += counts[i] * (i % 7);
    printf("spin lock: total %ld weighted %ld\n", total, weighted);
    ot_check(total == (long)ROUNDS * 64 * PER * 3, "no addition under the spin lock lost");

    long total2 = add_under_lock(1);
    printf("relaxed spin lock and flushes: total %ld\n", total2);
    ot_check(total2 == 2 * (long)ROUNDS * 64 * PER * 3, "no addition under the relaxed lock lost");

    for (int r = 0; r < REDUCES; r++) {
        dsum = r;
#pragma omp parallel
        {
#pragma omp for reduction(+ : dsum)
            for (int i = 0; i < 64; i++)
                dsum += 0.25 * i;
            if (dsum != r + 0.25 * 64 * 63 / 2) {
#pragma omp atomic
                bad_reduce++;
            }
        }
    }
    printf("reductions: last %.2f\n", dsum);
    ot_check(bad_reduce == 0, "every thread read every combined double");
    return ot_done();
}
