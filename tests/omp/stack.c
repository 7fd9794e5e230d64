/*
 * stack.c - variables on the master's stack are shared with the region:
 * arrays, a struct and a variable-length array of main, locals of main's
 * callees several calls deep, a pointer to main's stack kept in a global.
 * Inside regions: calls several levels deep, recursion on each thread's
 * own stack, and orphaned constructs (for, single, barrier, critical,
 * reduction) in functions called from the region.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define N 4096

struct acc {
    long sum;
    long count;
    double avg;
};

static long *via_global; /* points into main's stack */

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static long leaf(long i)
{
    volatile char pad[512]; /* some stack per call */
    pad[i % 512] = (char)i;
    return fib((int)(i % 15)) + pad[i % 512];
}

static long middle(long i) { return leaf(i) * 2 + leaf(i + 1); }

/* Orphaned: the enclosing region's team shares these. */
static void orphan_fill(long *a, int n)
{
#pragma omp for schedule(dynamic, 32)
    for (int i = 0; i < n; i++)
        a[i] = middle(i);
}

static long orphan_sum(const long *a, int n)
{
    static long total; /* shared: the reduction's target must be */
#pragma omp single
    total = 0;
#pragma omp for reduction(+ : total)
    for (int i = 0; i < n; i++)
        total += a[i];
    return total; /* the loop's barrier makes it final */
}

static void orphan_critical(struct acc *acc, long v)
{
#pragma omp critical(acc)
    {
        acc->sum += v;
        acc->count++;
    }
}

/* A callee of main whose locals the region uses, two calls below main. */
static long inner_frame(int depth)
{
    if (depth > 0)
        return inner_frame(depth - 1);
    long local[1000];
    long result = 0;
#pragma omp parallel for reduction(+ : result)
    for (int i = 0; i < 1000; i++) {
        local[i] = i * 3;
        result += local[i];
    }
    long check = 0;
    for (int i = 0; i < 1000; i++)
        check += local[i];
    return result == check ? result : -1;
}

int main(void)
{
    long a[N]; /* main's array */
    struct acc acc = {0, 0, 0};
    int n = N / 2 + 1;
    double vla[n]; /* a variable-length array of main */
    memset(a, 0, sizeof a);

#pragma omp parallel
    {
        orphan_fill(a, N);
        long t = orphan_sum(a, N);
#pragma omp for
        for (int i = 0; i < n; i++)
            vla[i] = i * 0.5;
#pragma omp for schedule(static, 64)
        for (int i = 0; i < N; i++)
            orphan_critical(&acc, a[i] % 1000);
#pragma omp single
        acc.avg = (double)t / N;
    }
    printf("orphaned for + reduction: avg %.6f\n", acc.avg);
    printf("orphaned critical: sum %ld count %ld\n", acc.sum, acc.count);
    printf("main's array digest %016llx\n", (unsigned long long)ot_hash(a, sizeof a));
    double vs = 0;
    for (int i = 0; i < n; i++)
        vs += vla[i];
    printf("vla sum %.17g\n", vs);

    /* a pointer to main's stack, through a global */
    long b[256];
    via_global = b;
#pragma omp parallel for
    for (int i = 0; i < 256; i++)
        via_global[i] = (long)i * i;
    long bs = 0;
    for (int i = 0; i < 256; i++)
        bs += b[i];
    printf("through a global pointer: %ld\n", bs);

    /* a callee's frame */
    printf("callee frame: %ld\n", inner_frame(3));

    /* deep calls and recursion in every thread */
    long deep = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : deep)
    for (int i = 0; i < 200; i++)
        deep += fib(18 + i % 3) + middle(i);
    printf("recursion in the region: %ld\n", deep);

    /* private copies on the threads' stacks vs the shared one on main's */
    long shared_x = 5, wrong = 0;
#pragma omp parallel firstprivate(shared_x) reduction(+ : wrong)
    {
        long mine[64];
        for (int k = 0; k < 64; k++)
            mine[k] = shared_x + k;
        shared_x = -1; /* private: the master's stays 5 */
        for (int k = 0; k < 64; k++)
            wrong += mine[k] != 5 + k;
    }
    ot_check(shared_x == 5 && wrong == 0, "firstprivate copies are private");
    return ot_done();
}
