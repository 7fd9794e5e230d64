/*
 * relaxed.c - relaxed atomic reads (the default of "omp atomic read") of a
 * variable other threads change between barriers.  Under sdsm a thread
 * answers repeated relaxed reads of one address from the value it loaded
 * last, for a short while; a barrier must end that: a read after it sees
 * what was written before it, however soon the thread read last.
 *
 * Round r: every thread reads x for 150 us (it must be r - 1) and y (never
 * changes), then one thread writes r into x after a barrier, and right
 * after the single's barrier every thread reads x again (it must be r).  The same with a lock instead of the
 * barrier: under the lock, a thread's read must see the previous holder's
 * write.
 */
#include <omp.h>

#include "omptest.h"

#define ROUNDS 300

static int x, y = 7, z;

int main(void)
{
    long stale = 0, wrong_y = 0, lost = 0;
#pragma omp parallel reduction(+ : stale, wrong_y)
    {
        for (int r = 1; r <= ROUNDS; r++) {
            int v, w;
#pragma omp atomic read
            w = y;
            /* Read x for a while, so that the thread's last real load of
             * it lies shortly before the barrier. */
            double until = omp_get_wtime() + 150e-6;
            do {
#pragma omp atomic read
                v = x;
            } while (omp_get_wtime() < until);
            stale += v != r - 1;
            wrong_y += w != 7;
#pragma omp barrier
#pragma omp single
            {
#pragma omp atomic write
                x = r;
            }
#pragma omp atomic read
            v = x;
            stale += v != r;
        }
    }
    ot_check(stale == 0, "a relaxed read after a barrier sees the write before it");
    ot_check(wrong_y == 0, "relaxed reads of an unchanged variable");

    /* Under a critical section: each holder reads z and writes z + 1 with
     * relaxed atomics; the previous holder's write must be seen. */
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        for (int r = 0; r < ROUNDS / 10; r++) {
#pragma omp critical(z)
            {
                int v;
#pragma omp atomic read
                v = z;
#pragma omp atomic write
                z = v + 1;
            }
        }
    }
    int got;
#pragma omp atomic read
    got = z;
    lost = (long)n * (ROUNDS / 10) - got;
    ot_check(lost == 0, "relaxed read-then-write under a critical section loses nothing");
    printf("x %d\n", x);
    return ot_done();
}
