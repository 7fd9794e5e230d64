/*
 * cg_omp.c - CG with OpenMP threads, SPMD style like the sdsm version: thread
 * t owns rows app_block(n, T, t) of every vector and of the matrix (built by
 * the thread itself, so its pages are local to it); p is one shared vector.
 * Dot products go through per-thread partial slots added in thread order,
 * the blocking of the sequential kernel with T parts, so the results match
 * it bit for bit.  Slots alternate between two halves, like the sdsm version.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cg_kernel.h"

#define NSLOT 4
#define SLOT_STRIDE 8 /* doubles: one 64-byte cache line per thread */

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
        int me = omp_get_thread_num(), phase = 0;
        long lo, hi;
        app_block(n, np, me, &lo, &hi);
        long m = hi - lo;
        cg_csr_t *a = &mat[me];
        if (cg_build_rows(&P, lo, hi, a)) {
            fprintf(stderr, "cg: out of memory\n");
            exit(1);
        }
        double *xm = x + lo, *zm = z + lo, *rm = r + lo, *qm = q + lo, *pm = p + lo;
        double part[NSLOT], tot[NSLOT];
/* Sum k values over threads in thread order; includes a barrier. */
#define REDUCE(k)                                                                          \
    do {                                                                                   \
        for (int t_ = 0; t_ < (k); t_++)                                                   \
            slots[(phase * np + me) * SLOT_STRIDE + t_] = part[t_];                        \
        _Pragma("omp barrier");                                                            \
        for (int t_ = 0; t_ < (k); t_++)                                                   \
            tot[t_] = cg_sum_parts(slots + phase * np * SLOT_STRIDE + t_, np, SLOT_STRIDE); \
        phase ^= 1;                                                                        \
    } while (0)
#pragma omp barrier
#pragma omp master
        t0 = app_now();
        for (long i = 0; i < m; i++)
            xm[i] = 1.0;
        for (long it = 0; it < P.niter; it++) {
            for (long i = 0; i < m; i++) {
                zm[i] = 0;
                rm[i] = xm[i];
                pm[i] = rm[i];
            }
            part[0] = cg_dot(rm, rm, m);
            REDUCE(1);
            double rho = tot[0];
            for (long c = 0; c < P.cgit; c++) {
                cg_spmv(a, p, qm);
                part[0] = cg_dot(pm, qm, m);
                REDUCE(1);
                double alpha = rho / tot[0];
                for (long i = 0; i < m; i++) {
                    zm[i] += alpha * pm[i];
                    rm[i] -= alpha * qm[i];
                }
                double rho0 = rho;
                part[0] = cg_dot(rm, rm, m);
                REDUCE(1);
                rho = tot[0];
                double beta = rho / rho0;
                if (c < P.cgit - 1) {
                    for (long i = 0; i < m; i++)
                        pm[i] = rm[i] + beta * pm[i];
#pragma omp barrier
                }
            }
            cg_spmv(a, z, qm); /* z is complete: r.r's barrier came after its updates */
            part[0] = cg_diff2(xm, qm, m);
            part[1] = cg_dot(xm, zm, m);
            part[2] = cg_dot(zm, zm, m);
            REDUCE(3);
#pragma omp master
            {
                rnorm[it] = sqrt(tot[0]);
                zeta[it] = P.shift + 1.0 / tot[1];
            }
            double s = 1.0 / sqrt(tot[2]);
            for (long i = 0; i < m; i++)
                xm[i] = s * zm[i];
        }
#pragma omp barrier
#pragma omp master
        t1 = app_now();
        cg_csr_free(a);
    }
    cg_result_t got = {zeta, rnorm, z}, ref;
    if (cg_result_alloc(&ref, &P) || cg_run_seq(&P, np, &ref) < 0) {
        fprintf(stderr, "cg: out of memory\n");
        return 1;
    }
    if (corrupt)
        zeta[P.niter - 1] *= 1.0 + 1e-8;
    double diff = cg_compare(&got, &ref, &P);
    app_header("cg", "omp", np, "n=%ld nzr=%ld niter=%ld cgit=%ld shift=%g", n, P.nzr, P.niter,
               P.cgit, P.shift);
    app_time(t1 - t0);
    app_result("zeta=%.15e rnorm=%.6e", zeta[P.niter - 1], rnorm[P.niter - 1]);
    int status = app_verdict(diff <= CG_TOL,
                             "zeta, rnorm and z vs sequential kernel (%d parts): max rel diff %.3g "
                             "(tolerance %g)",
                             np, diff, CG_TOL);
    cg_result_free(&ref);
    free(x), free(z), free(r), free(q), free(p), free(slots), free(zeta), free(rnorm), free(mat);
    return status;
}
