/*
 * spinlock.c - a lock the program builds itself from C11-style atomics,
 * guarding plain data, and reductions combined by compare-and-swap.
 *
 * The lock is test-and-test-and-set: a relaxed load spins while the lock
 * is taken, then a compare-and-swap with acquire order takes it, and a
 * store with release order gives it back.  The relaxed load feeds the
 * swap, as a reduction's load does, so the runtime reads such a site at
 * the variable's home without the lock it takes for other relaxed loads
 * (src/omp/atomic.c, cas_sites); the acquire must then come from the swap
 * itself: each holder adds to counters that straddle two pages, not
 * atomically, and none of those additions may be lost.  The reductions
 * (a double's +=, combined by a load and a swap loop) run round after
 * round, read by every thread after their barrier (redcheck.c's way).
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

int main(void)
{
#pragma omp parallel
    {
        for (int r = 0; r < ROUNDS; r++) {
#pragma omp for schedule(static)
            for (int i = 0; i < 64; i++)
                for (int k = 0; k < PER; k++) {
                    take(&lock_word);
                    /* a read-modify-write of plain data on both pages */
                    counts[(i * 37 + k) % NCOUNT] += 1;
                    counts[NCOUNT - 1 - (i + k) % 16] += 2;
                    give(&lock_word);
                }
        }
    }
    long total = 0, weighted = 0;
    for (int i = 0; i < NCOUNT; i++) {
        total += counts[i];
        weighted += counts[i] * (i % 7);
    }
    printf("spin lock: total %ld weighted %ld\n", total, weighted);
    ot_check(total == (long)ROUNDS * 64 * PER * 3, "no addition under the spin lock lost");

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
