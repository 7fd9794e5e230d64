/*
 * critical.c - critical sections, unnamed and named: updates that are not
 * single atomic operations (read-modify-write of several variables, a
 * linked structure, a running maximum with its index) protected by them,
 * from every thread, with a dynamic schedule so every thread enters many
 * times.  GOMP_critical_start/end and GOMP_critical_name_start/end.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define N 2000

static long total, squares; /* one critical guards both */
static long hist[16];       /* critical(hist) */
static double best = -1;    /* critical(best): the value and where */
static int best_at = -1;
static int order[N]; /* critical(log): an append-only log */
static int logged;

static void add_shared(long v);
static long shared_sum(void);

int main(void)
{
    long a = 0, b = 0; /* locals of main, guarded by different names */
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3)
        for (int i = 0; i < N; i++) {
#pragma omp critical
            {
                total += i;
                squares += (long)i * i;
            }
#pragma omp critical(hist)
            hist[(i * 5) % 16]++;
            double v = (double)((i * 7919) % 2003);
#pragma omp critical(best)
            if (v > best || (v == best && i < best_at)) {
                best = v;
                best_at = i;
            }
#pragma omp critical(log)
            order[logged++] = i;
#pragma omp critical(a)
            a += 2;
#pragma omp critical(b)
            b += 3;
        }
    }
    printf("unnamed: total %ld squares %ld\n", total, squares);
    printf("named hist:");
    for (int k = 0; k < 16; k++)
        printf(" %ld", hist[k]);
    printf("\nnamed best %.1f at %d\n", best, best_at);
    printf("named a %ld b %ld\n", a, b);
    static char seen[N];
    int perm = logged == N;
    for (int i = 0; i < N && perm; i++) {
        perm = !seen[order[i]];
        seen[order[i]] = 1;
    }
    ot_check(perm, "critical(log): every iteration logged once");

    /* Nested names: critical(outer) holding critical(inner). */
    long outer = 0, inner = 0;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < 500; i++) {
#pragma omp critical(outer)
        {
            outer += i;
#pragma omp critical(inner)
            inner += 2;
        }
    }
    printf("nested names: outer %ld inner %ld\n", outer, inner);

    /* A critical section in a function called from the region. */
#pragma omp parallel for
    for (int i = 0; i < 1000; i++)
        add_shared(i % 17);
    printf("critical in a callee: %ld\n", shared_sum());
    return ot_done();
}

static long in_callee;

static void add_shared(long v)
{
#pragma omp critical(callee)
    in_callee += v;
}

static long shared_sum(void) { return in_callee; }
