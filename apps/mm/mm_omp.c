/*
 * mm_omp.c - matrix product with OpenMP: each thread computes a fixed block
 * of rows of C (app_block) from its rows of A and all of B.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "mm_kernel.h"

int main(int argc, char **argv)
{
    long n = app_pick(argc, argv, "n", 128, 3072, 2048);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 1) {
        fprintf(stderr, "mm: need --n >= 1\n");
        return 2;
    }
    size_t nn = (size_t)n * n;
    double *ga = malloc(nn * sizeof *ga), *gb = malloc(nn * sizeof *gb), *gc = malloc(nn * sizeof *gc);
    double **a = malloc((size_t)n * sizeof *a), **b = malloc((size_t)n * sizeof *b),
           **c = malloc((size_t)n * sizeof *c);
    if (!ga || !gb || !gc || !a || !b || !c)
        return 1;
    int nt = 1;
    double t0 = 0, t1 = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long lo, hi;
        app_block(n, T, t, &lo, &hi);
        for (long i = lo; i < hi; i++) { /* first touch by the owner */
            a[i] = ga + (size_t)i * n;
            b[i] = gb + (size_t)i * n;
            c[i] = gc + (size_t)i * n;
            mm_init_a_row(i, n, a[i]);
            mm_init_b_row(i, n, b[i]);
        }
#pragma omp barrier
#pragma omp master
        {
            nt = T;
            t0 = app_now();
        }
        mm_rows(a, b, c, n, lo, hi);
#pragma omp barrier
#pragma omp master
        t1 = app_now();
    }
    if (corrupt)
        c[n - 1][n / 2] *= 1.001;
    double *ref = mm_run(n, NULL);
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double s;
        mm_row_digest(c[i], n, &s);
        sum += s;
    }
    long badvals = 0;
    for (size_t k = 0; k < nn; k++)
        badvals += memcmp(&gc[k], &ref[k], sizeof(double)) != 0;
    double maxdiff = app_max_rel_diff(gc, ref, nn);
    app_header("mm", "omp", nt, "n=%ld", n);
    app_time(t1 - t0);
    app_result("checksum=%.12e", sum);
    return app_verdict(maxdiff <= MM_TOL,
                       "C vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values not "
                       "bit-identical",
                       maxdiff, MM_TOL, badvals);
}
