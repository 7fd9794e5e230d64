/*
 * syncbench.c - what one OpenMP construct costs, in the manner of the EPCC
 * syncbench: each construct runs `reps` times around a tiny body, and the
 * time per construct is printed.  The same source is built with gcc
 * -fopenmp (libgomp) and with sdsmcc (bench/omp/run compares them).
 *
 *   syncbench [REPS] [CONSTRUCT,...]
 *
 * Lines: "op NAME US_PER_OP CHECK" (CHECK: a value every build must agree
 * on, so an answer that is wrong does not pass for a fast one).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long counter;
static long shared_sum;
static double data[4096];

/* A little work a compiler cannot remove. */
static void delay(int n)
{
    volatile int x = 0;
    for (int i = 0; i < n; i++)
        x += i;
}

static long op_barrier(long reps)
{
#pragma omp parallel
    {
        for (long r = 0; r < reps; r++) {
            delay(10);
#pragma omp barrier
        }
    }
    return reps;
}

static long op_parallel(long reps)
{
    long n = 0;
    for (long r = 0; r < reps; r++) {
#pragma omp parallel
        {
            delay(10);
#pragma omp master
            n++;
        }
    }
    return n;
}

static long op_for(long reps)
{
    long n = 0;
#pragma omp parallel
    {
        for (long r = 0; r < reps; r++) {
#pragma omp for
            for (int i = 0; i < 64; i++)
                data[i] = (double)(r + i);
        }
#pragma omp master
        n = (long)data[63];
    }
    return n;
}

static long op_parallel_for(long reps)
{
    for (long r = 0; r < reps; r++) {
#pragma omp parallel for
        for (int i = 0; i < 64; i++)
            data[i] = (double)(r + i);
    }
    return (long)data[63];
}

static long op_reduction(long reps)
{
    long total = 0;
    for (long r = 0; r < reps; r++) {
        long s = 0;
#pragma omp parallel reduction(+ : s)
        {
            delay(10);
            s += 1;
        }
        total += s;
    }
    return total / omp_get_max_threads();
}

static double red_s; /* shared: a worksharing reduction's variable */

static long op_for_reduction(long reps)
{
    double total = 0;
#pragma omp parallel
    {
        for (long r = 0; r < reps; r++) {
#pragma omp single
            red_s = 0;
#pragma omp for reduction(+ : red_s)
            for (int i = 0; i < 64; i++)
                red_s += (double)i;
#pragma omp single
            total += red_s; /* (single: its barrier keeps the next round's red_s = 0 after this) */
        }
    }
    return (long)total;
}

static long op_single(long reps)
{
    counter = 0;
#pragma omp parallel
    {
        for (long r = 0; r < reps; r++) {
            delay(10);
#pragma omp single
            counter++;
        }
    }
    return counter;
}

static long op_critical(long reps)
{
    long want = 0;
    shared_sum = 0;
#pragma omp parallel
    {
        long mine = reps / omp_get_num_threads() + 1;
#pragma omp master
        want = mine * omp_get_num_threads();
        for (long r = 0; r < mine; r++) {
            delay(10);
#pragma omp critical
            shared_sum++;
        }
    }
    return shared_sum == want; /* 1: every update counted */
}

static long op_atomic(long reps)
{
    long want = 0;
    shared_sum = 0;
#pragma omp parallel
    {
        long mine = reps / omp_get_num_threads() + 1;
#pragma omp master
        want = mine * omp_get_num_threads();
        for (long r = 0; r < mine; r++) {
            delay(10);
#pragma omp atomic
            shared_sum++;
        }
    }
    return shared_sum == want; /* 1: every update counted */
}

static const struct {
    const char *name;
    long (*run)(long);
    int scale; /* reps divided by this (costly constructs) */
} ops[] = {
    {"barrier", op_barrier, 1},
    {"parallel", op_parallel, 1},
    {"for", op_for, 1},
    {"parallel_for", op_parallel_for, 1},
    {"reduction", op_reduction, 1},
    {"for_reduction", op_for_reduction, 1},
    {"single", op_single, 1},
    {"critical", op_critical, 1},
    {"atomic", op_atomic, 1},
};

static int wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    long reps = argc > 1 ? atol(argv[1]) : 1000;
    const char *list = argc > 2 ? argv[2] : NULL;
    if (reps < 1) {
        fprintf(stderr, "usage: syncbench [REPS] [CONSTRUCT,...]\n");
        return 2;
    }
    printf("threads %d\n", omp_get_max_threads());
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (!wanted(list, ops[i].name))
            continue;
        long n = reps / ops[i].scale;
        ops[i].run(n / 10 + 1); /* warm: pages fetched, threads started */
        double t0 = now();
        long check = ops[i].run(n);
        double t1 = now();
        printf("op %s %.2f %ld\n", ops[i].name, (t1 - t0) * 1e6 / (double)n, check);
        fflush(stdout);
    }
    return 0;
}
