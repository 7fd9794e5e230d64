/*
 * reduction.c - reductions of every operator (+ * - & | ^ && || min max)
 * over int, long, unsigned, float and double, on parallel loops (combined
 * and inside a region), several at once (gcc merges them under
 * GOMP_atomic_start), on a global, a local of main and a heap cell, an array
 * section and a user-defined reduction.  gcc combines the partial results
 * with atomics (__atomic_fetch_add_4, compare-and-swap loops for floating
 * point, min and max), which sdsmcc turns into calls.  The values make
 * every result exact in any order: integers, powers of two, dyadic
 * fractions.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define N 1000

#define PRAGMA(x) _Pragma(#x)

/* One reduction: r starts at init (as the program's variable; the
 * operator's own identity starts each thread's copy), every iteration
 * applies "r = r op v(i)" in the operator's form (stmt). */
#define RED(type, fmt, op, init, stmt)                                                                       \
    do {                                                                                                     \
        type r = init;                                                                                       \
        PRAGMA(omp parallel for reduction(op : r) schedule(dynamic, 7))                                      \
        for (int i = 0; i < N; i++)                                                                          \
            stmt;                                                                                            \
        printf("%-8s %-3s " fmt "\n", #type, #op, r);                                                        \
    } while (0)

/* The same inside a region, with a static loop. */
#define RED_IN(type, fmt, op, init, stmt)                                                                    \
    do {                                                                                                     \
        type r = init;                                                                                       \
        PRAGMA(omp parallel)                                                                                 \
        {                                                                                                    \
            PRAGMA(omp for reduction(op : r))                                                                \
            for (int i = 0; i < N; i++)                                                                      \
                stmt;                                                                                        \
        }                                                                                                    \
        printf("%-8s %-3s " fmt " (omp for)\n", #type, #op, r);                                              \
    } while (0)

/* Operators every arithmetic type has. */
#define ARITH(type, fmt, one)                                                                                \
    RED(type, fmt, +, (type)3, r += (type)(i % 10));                                                         \
    RED_IN(type, fmt, +, (type)0, r += (type)(i % 13));                                                      \
    RED(type, fmt, -, (type)100, r -= (type)(i % 9));                                                        \
    RED(type, fmt, *, (type)1, r *= (type)(i % 97 == 5 ? 2 : 1));                                            \
    RED_IN(type, fmt, *, (type)3, r *= (type)(i % 250 == 7 ? 2 : 1));                                        \
    RED(type, fmt, max, (type)0, r = r > (type)((i * 37) % 1001) ? r : (type)((i * 37) % 1001));             \
    RED(type, fmt, min, (type)5000, r = r < (type)((i * 53) % 997 + 1) ? r : (type)((i * 53) % 997 + 1));    \
    RED_IN(type, fmt, min, (type)5000, r = r < (type)((i * 53) % 997 + 1) ? r : (type)((i * 53) % 997 + 1)); \
    RED(type, fmt, &&, (type)1, r = r && (type)(i + one));                                                   \
    RED(type, fmt, &&, (type)1, r = r && (type)(i != 617));                                                  \
    RED(type, fmt, ||, (type)0, r = r || (type)(i == 801));                                                  \
    RED(type, fmt, ||, (type)0, r = r || (type)(i > N))

/* Bitwise operators, integer types only. */
#define BITS(type, fmt)                                                                                      \
    RED(type, fmt, &, (type) ~(type)0, r &= (type)(i % 29 == 3 ? ~((type)1 << (i % 23)) : ~(type)0));        \
    RED(type, fmt, |, (type)0, r |= (type)(i % 5 == 0 ? (type)1 << (i % 27) : 0));                           \
    RED_IN(type, fmt, |, (type)64, r |= (type)(i % 7 == 0 ? (type)1 << (i % 19) : 0));                       \
    RED(type, fmt, ^, (type)0, r ^= (type)((unsigned)i * 2654435761u));                                      \
    RED_IN(type, fmt, ^, (type)5, r ^= (type)((unsigned)i * 40503u))

/* A user-defined reduction: a pair kept as (count, sum). */
typedef struct {
    long n, sum;
} pair_t;
#pragma omp declare reduction(pairadd:pair_t                                                                 \
                              : omp_out.n += omp_in.n, omp_out.sum += omp_in.sum)                            \
    initializer(omp_priv = (pair_t){0, 0})

long gsum = 7; /* a reduction on a global */

int main(void)
{
    ARITH(int, "%d", 1);
    BITS(int, "%d");
    ARITH(long, "%ld", 1);
    BITS(long, "%ld");
    ARITH(unsigned, "%u", 1);
    BITS(unsigned, "%u");
    ARITH(float, "%.9g", 1);
    ARITH(double, "%.17g", 1);

    /* Dyadic fractions: exact sums whatever the order. */
    double d = 0.5;
    float fl = 0.25f;
#pragma omp parallel for reduction(+ : d, fl) schedule(guided)
    for (int i = 0; i < N; i++) {
        d += (i % 16) / 8.0;
        fl += (float)(i % 8) / 4.0f;
    }
    printf("dyadic sums %.17g %.9g\n", d, (double)fl);

    /* Several reductions in one loop, of different operators and types. */
    int si = 0;
    long pl = 1;
    unsigned xo = 0;
    double mx = -1;
#pragma omp parallel for reduction(+ : si) reduction(* : pl) reduction(^ : xo) reduction(max : mx)
    for (int i = 0; i < N; i++) {
        si += i;
        pl *= i % 100 == 1 ? -2 : 1;
        xo ^= (unsigned)i << (i % 11);
        mx = mx > (i % 333) / 4.0 ? mx : (i % 333) / 4.0;
    }
    printf("mixed %d %ld %u %.17g\n", si, pl, xo, mx);

    /* On a global and on a heap cell. */
#pragma omp parallel for reduction(+ : gsum)
    for (int i = 0; i < N; i++)
        gsum += i % 3;
    long *cell = malloc(sizeof *cell);
    *cell = 11;
#pragma omp parallel for reduction(+ : cell[0])
    for (int i = 0; i < N; i++)
        cell[0] += i % 4;
    printf("global %ld heap %ld\n", gsum, *cell);
    free(cell);

    /* An array section: a histogram. */
    long hist[10] = {0};
#pragma omp parallel for reduction(+ : hist [0:10]) schedule(dynamic, 13)
    for (int i = 0; i < N; i++)
        hist[(i * 7) % 10] += i;
    printf("histogram");
    for (int k = 0; k < 10; k++)
        printf(" %ld", hist[k]);
    printf("\n");

    /* User-defined. */
    pair_t p = {1, 1};
#pragma omp parallel for reduction(pairadd : p)
    for (int i = 0; i < N; i++) {
        p.n++;
        p.sum += i * 3;
    }
    printf("user-defined %ld %ld\n", p.n, p.sum);

    /* A reduction in a region without a loop: each thread adds 1, so the
     * result is the team size; print only that it agrees. */
    int threads = 0, seen = 0;
#pragma omp parallel reduction(+ : threads)
    {
        threads += 1;
#pragma omp single
        seen = omp_get_num_threads();
    }
    ot_check(threads == seen, "parallel reduction(+) counts the team");
    return ot_done();
}
