/*
 * sor_omp.c - red-black SOR with OpenMP: one parallel region, each thread
 * relaxes a fixed block of rows (app_block), a barrier after each phase.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "sor_kernel.h"

int main(int argc, char **argv)
{
    long r = app_pick(argc, argv, "rows", 256, 4096, 2048);
    long w = app_pick(argc, argv, "w", 128, 2048, 1024);
    long iters = app_pick(argc, argv, "iters", 20, 800, 100);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (r < 3 || w < 2 || iters < 1) {
        fprintf(stderr, "sor: need --rows >= 3, --w >= 2, --iters >= 1\n");
        return 2;
    }
    size_t nn = (size_t)r * w;
    /* Both grids in one block laid out like every version's (sor_black_offset). */
    float *gr = malloc((size_t)sor_block_floats(r, w) * sizeof *gr);
    float *gb = gr ? gr + sor_black_offset(r, w) : NULL;
    float **red = malloc((size_t)r * sizeof *red), **black = malloc((size_t)r * sizeof *black);
    if (!gr || !red || !black)
        return 1;
    int nt = 1;
    double t0 = 0, t1 = 0;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
        long lo, hi;
        app_block(r, T, t, &lo, &hi);
        for (long i = lo; i < hi; i++) { /* first touch by the owner */
            red[i] = gr + (size_t)i * w;
            black[i] = gb + (size_t)i * w;
            sor_init_row(i, w, red[i], black[i]);
        }
        long ulo = lo > 1 ? lo : 1, uhi = hi < r - 1 ? hi : r - 1;
#pragma omp barrier
#pragma omp master
        {
            nt = T;
            t0 = app_now();
        }
        for (long it = 0; it < iters; it++) {
            sor_phase(0, red, black, w, ulo, uhi);
#pragma omp barrier
            sor_phase(1, red, black, w, ulo, uhi);
#pragma omp barrier
        }
#pragma omp master
        t1 = app_now();
    }
    if (corrupt)
        black[r - 2][w / 2] *= 1.001f;
    float *rr, *rb;
    sor_run(r, w, iters, &rr, &rb, NULL);
    double sum = 0;
    for (long i = 0; i < r; i++) {
        double s;
        sor_row_digest(red[i], black[i], w, &s);
        sum += s;
    }
    long badvals = 0;
    double maxdiff = 0;
    for (size_t k = 0; k < nn; k++) {
        badvals += memcmp(&gr[k], &rr[k], sizeof(float)) != 0;
        badvals += memcmp(&gb[k], &rb[k], sizeof(float)) != 0;
        double d1 = fabs((double)gr[k] - rr[k]) / fmax(fabs((double)rr[k]), 1.0);
        double d2 = fabs((double)gb[k] - rb[k]) / fmax(fabs((double)rb[k]), 1.0);
        if (!(d1 <= maxdiff))
            maxdiff = isnan(d1) ? INFINITY : d1;
        if (!(d2 <= maxdiff))
            maxdiff = isnan(d2) ? INFINITY : d2;
    }
    app_header("sor", "omp", nt, "rows=%ld cols=%ld(2x%ld) iters=%ld", r, 2 * w, w, iters);
    app_time(t1 - t0);
    app_result("checksum=%.10e", sum);
    return app_verdict(maxdiff <= SOR_TOL,
                       "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values not "
                       "bit-identical",
                       maxdiff, SOR_TOL, badvals);
}
