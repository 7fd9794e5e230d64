/*
 * redcheck.c - reductions and atomics whose combined value EVERY thread
 * reads after the barrier that ends them, round after round.
 *
 * reduction.c prints each result from the master only; a program such as a
 * conjugate-gradient solver instead has every thread use the reduced value
 * (a norm, a dot product) in the next loop.  Under sdsm the combining is an
 * atomic at the variable's home: when the home is rank 0 and rank 0's own
 * thread combines its partial sum there, the other ranks must still see it
 * after the barrier.  Targets: a global, a local of a function main calls
 * (main's stack is shared), a heap cell, and an `omp atomic` counter.  Each
 * thread that reads a wrong value counts it in a critical section (another
 * mechanism than the one under test); the master prints the totals, which
 * do not depend on the team size.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define ROUNDS 200
#define N      64

static long g_sum;
static int bad_global, bad_local, bad_heap, bad_atomic, bad_double;

/* sum of i over [0, N) plus the round: every thread knows the answer. */
static long expect(int round) { return (long)N * (N - 1) / 2 + round; }

static void global_rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        g_sum = 0;
#pragma omp parallel
        {
#pragma omp for reduction(+ : g_sum)
            for (int i = 0; i < N; i++)
                g_sum += i + (i == 0 ? r : 0);
            if (g_sum != expect(r)) {
#pragma omp critical
                bad_global++;
            }
        }
    }
}

/* s lives on the stack of a function main calls: shared, homed at rank 0. */
static void local_rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        long s = 0;
        double d = 0.5;
#pragma omp parallel
        {
#pragma omp for reduction(+ : s)
            for (int i = 0; i < N; i++)
                s += i + (i == 0 ? r : 0);
            if (s != expect(r)) {
#pragma omp critical
                bad_local++;
            }
#pragma omp for reduction(+ : d)
            for (int i = 0; i < N; i++)
                d += 0.25 * i;
            if (d != 0.5 + 0.25 * ((double)N * (N - 1) / 2)) {
#pragma omp critical
                bad_double++;
            }
        }
    }
}

static void heap_rounds(long *cell)
{
    for (int r = 0; r < ROUNDS; r++) {
        long s = 0;
#pragma omp parallel
        {
#pragma omp for reduction(+ : s)
            for (int i = 0; i < N; i++)
                s += i + (i == 0 ? r : 0);
#pragma omp single
            *cell = s;
            /* single's barrier, then everyone reads the heap cell */
            if (*cell != expect(r)) {
#pragma omp critical
                bad_heap++;
            }
        }
    }
}

static void atomic_rounds(void)
{
    static long count;
    for (int r = 0; r < ROUNDS; r++) {
        count = r;
#pragma omp parallel
        {
#pragma omp for
            for (int i = 0; i < N; i++) {
#pragma omp atomic
                count += i;
            }
            if (count != expect(r)) {
#pragma omp critical
                bad_atomic++;
            }
        }
    }
}

int main(void)
{
    long *cell = malloc(sizeof *cell);
    if (!cell)
        return 2;
    global_rounds();
    local_rounds();
    heap_rounds(cell);
    atomic_rounds();
    printf("reads of a wrong combined value in %d rounds: global %d, local %d, local double %d, "
           "heap %d, atomic %d\n",
           ROUNDS, bad_global, bad_local, bad_double, bad_heap, bad_atomic);
    ot_check(bad_global + bad_local + bad_double + bad_heap + bad_atomic == 0,
             "every thread read the combined values");
    free(cell);
    return ot_done();
}
