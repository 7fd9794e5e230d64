/*
 * globals.c - the program's own data is shared: initialized globals
 * (.data), zero-initialized ones (.bss), static locals, a const table, a
 * global struct and pointers between globals, written by every thread in
 * regions and read by the serial code (and the other way round).
 * threadprivate variables are not: each thread keeps its own copy across
 * regions, copyin starts them from the master's.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define N 5000

int initialized[N] = {1, 2, 3}; /* .data */
long zeroed[N];                 /* .bss */
double scale = 1.5;             /* .data, written by serial code between regions */
static const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

struct stats {
    long count;
    long sum;
    char name[16];
} gstats = {0, 0, "initial"};

long *gptr = zeroed; /* a pointer to a global, in a global */

static int tp = -1; /* threadprivate */
#pragma omp threadprivate(tp)
static long tpcount;
#pragma omp threadprivate(tpcount)

/* A static local: one variable for every thread of every process. */
static long bump(long v)
{
    static long calls;
#pragma omp atomic
    calls += v;
    return calls;
}

static long counter_calls(void) { return bump(0); }

int main(void)
{
    /* threads read what the serial code initialized and wrote */
    initialized[N - 1] = 77;
    long s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < N; i++)
        s += initialized[i] + table[i % 8];
    printf("data read in a region: %ld\n", s);

    /* threads write, the serial code reads */
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < N; i++) {
        zeroed[i] = (long)i * 3;
        initialized[i] = i % 11;
    }
    long zs = 0, is = 0;
    for (int i = 0; i < N; i++) {
        zs += zeroed[i];
        is += initialized[i];
    }
    printf("written in a region: bss %ld data %ld\n", zs, is);

    /* a global changed between regions is seen by the next region */
    for (int r = 0; r < 4; r++) {
        scale = 0.5 * (r + 1);
#pragma omp parallel for
        for (int i = 0; i < N; i++)
            gptr[i] = (long)(i * scale * 4);
        long t = 0;
        for (int i = 0; i < N; i++)
            t += zeroed[i];
        printf("scale %.2f: %ld\n", scale, t);
    }

    /* a struct updated under a critical section, a string written by one */
#pragma omp parallel for
    for (int i = 0; i < 1000; i++) {
#pragma omp critical
        {
            gstats.count++;
            gstats.sum += i;
        }
        if (i == 500)
            strcpy(gstats.name, "changed");
    }
    printf("struct: %ld %ld %s\n", gstats.count, gstats.sum, gstats.name);

    /* a static local through nested calls */
#pragma omp parallel for
    for (int i = 0; i < 300; i++)
        bump(i % 5 + 1);
    printf("static local: %ld\n", counter_calls());

    /* threadprivate: each thread's own copy survives between regions */
    int bad = 0, threads = 0;
#pragma omp parallel
    {
        tp = omp_get_thread_num();
        tpcount = 0;
    }
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < 1000; i++)
        tpcount++;
#pragma omp parallel reduction(+ : bad, threads)
    {
        threads++;
        bad += tp != omp_get_thread_num();
    }
    ot_check(!bad, "threadprivate: each thread kept its value across regions");
    long tpsum = 0;
#pragma omp parallel reduction(+ : tpsum)
    tpsum += tpcount;
    printf("threadprivate counts add up to %ld\n", tpsum);

    /* copyin: every thread starts from the master's value */
    tp = 12345;
    int copied = 0;
#pragma omp parallel copyin(tp) reduction(+ : copied)
    copied += tp == 12345;
    ot_check(copied == threads, "copyin: every thread got the master's value");
    ot_check(tp == 12345, "threadprivate: the master's copy after the region");
    return ot_done();
}
