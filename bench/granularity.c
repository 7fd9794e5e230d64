/*
 * granularity.c - SMS's figure 16(a): a 100-element counter array
 * incremented 10 times, diff size with byte granularity (sdsm_alloc) against
 * element granularity (sdsm_calloc(100, sizeof(T), home)), for int, float
 * and double.  Rank 1 increments (rank 0 is the home), a barrier after each
 * round; the figures are this run's statistics counters, summed over ranks
 * by rank 0 (deterministic: they do not depend on timing).
 *
 *   sdsmrun -n 2 bench/granularity [--protocol NAME]
 */
#define _GNU_SOURCE
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

#define N      100
#define ROUNDS 10

typedef struct {
    uint64_t runs, data, wire;
} cost_t;

static cost_t snap(void)
{
    return (cost_t){atomic_load(&sdsm_stats.v[SDSM_ST_DIFF_RUNS_MADE]),
                    atomic_load(&sdsm_stats.v[SDSM_ST_DIFF_BYTES_MADE]),
                    atomic_load(&sdsm_stats.v[SDSM_ST_DIFF_WIRE_BYTES])};
}

/* One experiment; returns rank 1's diff cost (the only writer). */
#define EXPERIMENT(T, elem)                                                                                  \
    do {                                                                                                     \
        T *a = elem ? sdsm_calloc(N, sizeof(T), 0) : sdsm_alloc(N * sizeof(T), 0);                           \
        sdsm_barrier();                                                                                      \
        cost_t c0 = snap();                                                                                  \
        for (int r = 0; r < ROUNDS; r++) {                                                                   \
            if (sdsm_rank() == 1)                                                                            \
                for (int i = 0; i < N; i++)                                                                  \
                    a[i] += (T)1;                                                                            \
            sdsm_barrier();                                                                                  \
        }                                                                                                    \
        cost_t c1 = snap();                                                                                  \
        for (int i = 0; i < N; i++)                                                                          \
            if (a[i] != (T)ROUNDS)                                                                           \
                sdsm_abort(1, "a[%d] is wrong after %d rounds", i, ROUNDS);                                  \
        out = (cost_t){c1.runs - c0.runs, c1.data - c0.data, c1.wire - c0.wire};                             \
        sdsm_free(a);                                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    if (sdsm_nprocs() != 2)
        sdsm_abort(2, "run with sdsmrun -n 2");
    const char *names[3] = {"int", "float", "double"};
    cost_t res[3][2];
    for (int t = 0; t < 3; t++)
        for (int g = 0; g < 2; g++) {
            cost_t out = {0};
            switch (t) {
            case 0:
                if (g)
                    EXPERIMENT(int, 1);
                else
                    EXPERIMENT(int, 0);
                break;
            case 1:
                if (g)
                    EXPERIMENT(float, 1);
                else
                    EXPERIMENT(float, 0);
                break;
            default:
                if (g)
                    EXPERIMENT(double, 1);
                else
                    EXPERIMENT(double, 0);
                break;
            }
            res[t][g] = out;
        }
    if (sdsm_rank() == 1) { /* the writer reports */
        const char *p = getenv("SDSM_PROTOCOL");
        printf("SMS fig. 16(a): %d counters incremented %d times by one rank, protocol %s\n", N, ROUNDS,
               p ? p : "hlrc");
        printf("%-7s %28s %28s %10s\n", "type", "byte granularity (alloc)", "element (calloc)", "wire ratio");
        printf("%-7s %9s %9s %9s %9s %9s %9s\n", "", "runs", "data B", "wire B", "runs", "data B", "wire B");
        for (int t = 0; t < 3; t++)
            printf("%-7s %9llu %9llu %9llu %9llu %9llu %9llu %10.2f\n", names[t],
                   (unsigned long long)res[t][0].runs, (unsigned long long)res[t][0].data,
                   (unsigned long long)res[t][0].wire, (unsigned long long)res[t][1].runs,
                   (unsigned long long)res[t][1].data, (unsigned long long)res[t][1].wire,
                   (double)res[t][1].wire / (double)(res[t][0].wire ? res[t][0].wire : 1));
        printf("wire B = encoded diff entries (page header 8 B + per run gap/length varints + data)\n");
        fflush(stdout);
    }
    sdsm_finalize();
    return 0;
}
