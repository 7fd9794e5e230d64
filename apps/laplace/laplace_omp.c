/*
 * laplace_omp.c - Jacobi iteration with OpenMP: one parallel region, each
 * thread sweeps a fixed block of rows (app_block), a barrier per iteration.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "laplace_kernel.h"

int main(int argc, char **argv)
{
    long n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = app_pick(argc, argv, "iters", 50, 600, 50);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 3 || iters < 1) {
        fprintf(stderr, "laplace: need --n >= 3 and --iters >= 1\n");
        return 2;
    }
    size_t nn = (size_t)n * n;
    double *ga = malloc(nn * sizeof *ga), *gb = malloc(nn * sizeof *gb);
    double **ra = malloc((size_t)n * sizeof *ra), **rb = malloc((size_t)n * sizeof *rb);
    if (!ga || !gb || !ra || !rb)
        return 1;
    int nt = 1;
    double t0 = 0, t1 = 0;
    double **fa = ra, **fb = rb;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long lo, hi;
        app_block(n, T, t, &lo, &hi);
        for (long i = lo; i < hi; i++) { /* first touch by the owner */
            ra[i] = ga + (size_t)i * n;
            rb[i] = gb + (size_t)i * n;
            laplace_init_row(i, n, ra[i]);
            memcpy(rb[i], ra[i], (size_t)n * sizeof *ga);
        }
        long ulo = lo > 1 ? lo : 1, uhi = hi < n - 1 ? hi : n - 1;
        double **a = ra, **b = rb;
#pragma omp barrier
#pragma omp master
        {
            nt = T;
            t0 = app_now();
        }
        for (long it = 0; it < iters; it++) {
            laplace_sweep(a, b, n, ulo, uhi);
            double **tmp = a;
            a = b;
            b = tmp;
#pragma omp barrier
        }
#pragma omp master
        {
            t1 = app_now();
            fa = a;
            fb = b;
        }
    }
    if (corrupt)
        fa[n - 2][n / 2] *= 1.001;
    double resid = 0, sum = 0;
    for (long i = 0; i < n; i++) {
        double s;
        laplace_row_digest(fa[i], n, &s);
        sum += s;
        resid = fmax(resid, laplace_row_change(fa[i], fb[i], n));
    }
    double rresid, *ref = laplace_run(n, iters, &rresid, NULL);
    long badvals = 0;
    double maxdiff = 0;
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < n; j++)
            badvals += memcmp(&fa[i][j], &ref[(size_t)i * n + j], sizeof(double)) != 0;
        maxdiff = fmax(maxdiff, app_max_rel_diff(fa[i], ref + (size_t)i * n, (size_t)n));
    }
    double rdiff = fabs(resid - rresid) / fmax(fabs(rresid), 1.0);
    app_header("laplace", "omp", nt, "n=%ld iters=%ld", n, iters);
    app_time(t1 - t0);
    app_result("checksum=%.12e resid=%.12e", sum, resid);
    return app_verdict(maxdiff <= LAPLACE_TOL && rdiff <= LAPLACE_TOL,
                       "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values not "
                       "bit-identical; resid rel diff %.3g",
                       maxdiff, LAPLACE_TOL, badvals, rdiff);
}
