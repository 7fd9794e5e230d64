/*
 * cg_omp.c - CG with OpenMP threads, SPMD style like the sdsm version: thread
 * t owns rows app_block(n, T, t) of every vector and of the matrix (built by
 * the thread itself, so its pages are local to it); p is one shared vector.
 * Dot products go through per-thread partial slots added in thread order,
 * the blocking of the sequential kernel with T parts, so the results match
 * it bit for bit.  Slots alternate between two halves, like the sdsm version.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cg_kernel.h"

#define NSLOT       CG_NSUM
#define SLOT_STRIDE 8 /* doubles: one 64-byte cache line per thread */

/* A thread's state for cg_iterate's hooks. */
typedef struct {
    double *slots;
    int np, me, phase;
} thr_t;

/* Sum k values over threads in thread order; includes a barrier
 * (cg_share_t's reduce). */
static void reduce(void *ctx, const double *part, double *tot, int k)
{
    thr_t *s = ctx;
    for (int t = 0; t < k; t++)
        s->slots[(s->phase * s->np + s->me) * SLOT_STRIDE + t] = part[t];
#pragma omp barrier
    for (int t = 0; t < k; t++)
        tot[t] = cg_sum_parts(s->slots + s->phase * s->np * SLOT_STRIDE + t, s->np, SLOT_STRIDE);
    s->phase ^= 1;
}

static void p_written(void *ctx)
{
    (void)ctx;
#pragma omp barrier
}

int main(int argc, char **argv)
{
    cg_params_t P = cg_params_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    long n = P.n;
    int np = omp_get_max_threads();
    if (n < np) {
        fprintf(stderr, "cg: --n must be >= the number of threads\n");
        return 2;
    }
    double *x = malloc((size_t)n * sizeof *x), *z = malloc((size_t)n * sizeof *z),
           *r = malloc((size_t)n * sizeof *r), *q = malloc((size_t)n * sizeof *q),
           *p = malloc((size_t)n * sizeof *p);
    double *slots = calloc((size_t)2 * np * SLOT_STRIDE, sizeof *slots);
    double *zeta = calloc((size_t)P.niter, sizeof *zeta), *rnorm = calloc((size_t)P.niter, sizeof *rnorm);
    cg_csr_t *mat = calloc((size_t)np, sizeof *mat);
    if (!x || !z || !r || !q || !p || !slots || !zeta || !rnorm || !mat) {
        fprintf(stderr, "cg: out of memory\n");
        return 1;
    }
    double t0 = 0, t1 = 0;

#pragma omp parallel num_threads(np)
    {
        int me = omp_get_thread_num();
        thr_t S = {slots, np, me, 0};
        long lo, hi;
        app_block(n, np, me, &lo, &hi);
        long m = hi - lo;
        cg_csr_t *a = &mat[me];
        if (cg_build_rows(&P, lo, hi, a)) {
            fprintf(stderr, "cg: out of memory\n");
            exit(1);
        }
        /* A z reads the shared z; the master thread keeps the results. */
        cg_share_t sh = {.a = a,
                         .m = m,
                         .x = x + lo,
                         .z = z + lo,
                         .r = r + lo,
                         .q = q + lo,
                         .pm = p + lo,
                         .p = p,
                         .z_all = z,
                         .zeta = me == 0 ? zeta : NULL,
                         .rnorm = me == 0 ? rnorm : NULL,
                         .ctx = &S,
                         .reduce = reduce,
                         .p_written = p_written};
#pragma omp barrier
#pragma omp master
        t0 = app_now();
        cg_iterate(&P, &sh);
#pragma omp barrier
#pragma omp master
        t1 = app_now();
        cg_csr_free(a);
    }
    cg_result_t got = {zeta, rnorm, z};
    int status = cg_verify(&P, "omp", np, "", np, &got, corrupt, t1 - t0);
    if (status < 0) {
        fprintf(stderr, "cg: out of memory\n");
        return 1;
    }
    free(x), free(z), free(r), free(q), free(p), free(slots), free(zeta), free(rnorm), free(mat);
    return status;
}
