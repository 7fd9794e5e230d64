/*
 * splash_lu.c - a barrier-only program: SPLASH-2 style LU
 * on non-contiguous blocks.  The matrix is one row-major array, so a page
 * holds pieces of the blocks of several ranks; blocks are scattered over
 * the ranks and the pages' homes are spread cyclically, so a page is mostly
 * fetched lazily while other ranks write it, from a home that is a third
 * rank.  One lock only hands out process ids.  Every rank checks the result
 * against the sequential factorization (bit for bit: same operations, same
 * order).  Run a few times inside one job so a rare interleaving shows.
 *
 * usage: proto_splash_lu [n] [b] [runs]
 */
#define PT_NAME "splash_lu"
#include "pt.h"

#include <string.h>

static long N, B, NB;

static double entry(long i, long j)
{
    unsigned long h = (unsigned long)(i * 7919 + j * 104729 + 12345) * 2654435761ul;
    double v = (double)(h % 1000) / 1000.0;
    return i == j ? v + (double)N : v;
}

#define A(a, i, j) ((a)[(i)*N + (j)])

static void factor_diag(double *a, long k)
{
    for (long c = k * B; c < k * B + B; c++)
        for (long r = c + 1; r < k * B + B; r++) {
            A(a, r, c) /= A(a, c, c);
            for (long j = c + 1; j < k * B + B; j++)
                A(a, r, j) -= A(a, r, c) * A(a, c, j);
        }
}

/* Block (k, J), J > k: forward substitution with the unit lower triangle of (k, k). */
static void solve_row(double *a, long k, long J)
{
    for (long c = k * B; c < k * B + B; c++)
        for (long r = c + 1; r < k * B + B; r++)
            for (long j = J * B; j < J * B + B; j++)
                A(a, r, j) -= A(a, r, c) * A(a, c, j);
}

/* Block (I, k), I > k: solve x U = a with the upper triangle of (k, k). */
static void solve_col(double *a, long k, long I)
{
    for (long r = I * B; r < I * B + B; r++)
        for (long c = k * B; c < k * B + B; c++) {
            A(a, r, c) /= A(a, c, c);
            for (long j = c + 1; j < k * B + B; j++)
                A(a, r, j) -= A(a, r, c) * A(a, c, j);
        }
}

static void update(double *a, long k, long I, long J)
{
    for (long r = I * B; r < I * B + B; r++)
        for (long c = k * B; c < k * B + B; c++)
            for (long j = J * B; j < J * B + B; j++)
                A(a, r, j) -= A(a, r, c) * A(a, c, j);
}

static int owner(long I, long J, int pr, int pc) { return (int)(I % pr) * pc + (int)(J % pc); }

static void lu(double *a, int me, int pr, int pc, int shared)
{
    for (long k = 0; k < NB; k++) {
        if (!shared || owner(k, k, pr, pc) == me)
            factor_diag(a, k);
        if (shared)
            sdsm_barrier();
        for (long X = k + 1; X < NB; X++) {
            if (!shared || owner(k, X, pr, pc) == me)
                solve_row(a, k, X);
            if (!shared || owner(X, k, pr, pc) == me)
                solve_col(a, k, X);
        }
        if (shared)
            sdsm_barrier();
        for (long I = k + 1; I < NB; I++)
            for (long J = k + 1; J < NB; J++)
                if (!shared || owner(I, J, pr, pc) == me)
                    update(a, k, I, J);
        if (shared)
            sdsm_barrier();
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    N = argc > 1 ? atol(argv[1]) : 96;
    B = argc > 2 ? atol(argv[2]) : 8;
    int runs = argc > 3 ? atoi(argv[3]) : 40;
    NB = N / B;
    int n = sdsm_nprocs(), pr = 1;
    for (int r = 1; r * r <= n; r++)
        if (n % r == 0)
            pr = r;
    int pc = n / pr;
    double *ref = malloc((size_t)(N * N) * sizeof *ref);
    if (!ref)
        sdsm_abort(1, "out of memory");
    for (long i = 0; i < N; i++)
        for (long j = 0; j < N; j++)
            A(ref, i, j) = entry(i, j);
    lu(ref, 0, 1, 1, 0);
    long *next_id = sdsm_calloc(1, sizeof(long), 0);
    for (int run = 0; run < runs; run++) {
        double *a = sdsm_alloc((size_t)(N * N) * sizeof(double), SDSM_HOME_CYCLIC);
        sdsm_lock(0); /* process ids are handed out in arrival order */
        int me = (int)((*next_id)++ % n);
        sdsm_unlock(0);
        for (long i = 0; i < N; i++) /* each rank writes its own blocks */
            for (long j = 0; j < N; j++)
                if (owner(i / B, j / B, pr, pc) == me)
                    A(a, i, j) = entry(i, j);
        sdsm_barrier();
        lu(a, me, pr, pc, 1);
        long bad = 0, first = -1;
        for (long i = 0; i < N * N; i++)
            if (memcmp(&a[i], &ref[i], sizeof *a)) {
                if (first < 0)
                    first = i;
                bad++;
            }
        if (bad)
            sdsm_abort(1,
                       "%s: rank %d: run %d: %ld of %ld elements differ from the sequential LU "
                       "(first: row %ld column %ld)",
                       PT_NAME, sdsm_rank(), run, bad, N * N, first / N, first % N);
        sdsm_barrier();
        sdsm_free(a);
    }
    free(ref);
    pt_ok();
    return 0;
}
