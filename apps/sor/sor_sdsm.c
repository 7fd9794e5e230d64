/*
 * sor_sdsm.c - red-black SOR on sdsm shared memory.
 *
 * Rows are block-distributed (app_block).  A rank's red rows and black rows
 * are one shared block, homed at that rank (alloc_grids), so a rank's rows
 * are homed at it and only halo rows travel: in the red phase a
 * rank reads the black rows just above and below its block, in the black
 * phase the red ones, each written by a neighbour in the phase before (so
 * invalidated at the barrier and fetched again: one 4 KB page per halo row
 * at the paper size).
 *
 * Check: every rank digests its own rows (hash of the bits + sum) into a
 * small shared table homed at it; rank 0 runs the sequential kernel and
 * compares digests, reading in full only rows whose digest differs.
 */
#include <sdsm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "sor_kernel.h"

typedef struct {
    uint64_t hash;
    double sum;
} digest_t;

/* Row pointers to the red and the black grid (nrows x w floats each): the
 * rows [lo, hi) of rank r (app_block) of both colours are one shared block
 * homed at r, laid out as sor_black_offset says (red rows, a gap, black
 * rows), so a rank's data is contiguous and its two colours are never a
 * power-of-two distance apart. */
static void alloc_grids(long nrows, long w, int nprocs, float ***red, float ***black)
{
    float **rd = malloc((size_t)nrows * sizeof *rd), **bk = malloc((size_t)nrows * sizeof *bk);
    if (!rd || !bk)
        sdsm_abort(1, "out of memory");
    for (int r = 0; r < nprocs; r++) {
        long lo, hi;
        app_block(nrows, nprocs, r, &lo, &hi);
        size_t bytes = (size_t)sor_block_floats(hi - lo, w) * sizeof(float);
        float *c = sdsm_alloc(bytes ? bytes : 1, r);
        for (long i = lo; i < hi; i++) {
            rd[i] = c + (i - lo) * w;
            bk[i] = c + sor_black_offset(hi - lo, w) + (i - lo) * w;
        }
    }
    *red = rd;
    *black = bk;
}

/* Compare row i (red + black) with the reference; returns differing values. */
static long cmp_row(const float *x, const float *ref, long w, double *maxdiff)
{
    long bad = 0;
    for (long j = 0; j < w; j++) {
        bad += memcmp(&x[j], &ref[j], sizeof(float)) != 0;
        double d = fabs((double)x[j] - ref[j]) / fmax(fabs((double)ref[j]), 1.0);
        if (!(d <= *maxdiff))
            *maxdiff = isnan(d) ? INFINITY : d;
    }
    return bad;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    long r = app_pick(argc, argv, "rows", 256, 4096, 2048);
    long w = app_pick(argc, argv, "w", 128, 2048, 1024);
    long iters = app_pick(argc, argv, "iters", 20, 800, 100);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (r < 3 || w < 2 || iters < 1 || r < np)
        sdsm_abort(2, "sor: need --rows >= 3 (and >= ranks), --w >= 2, --iters >= 1");

    float **red, **black;
    alloc_grids(r, w, np, &red, &black);
    digest_t **dg = app_sdsm_rows(r, sizeof(digest_t));
    long lo, hi;
    app_block(r, np, me, &lo, &hi);
    for (long i = lo; i < hi; i++) /* set-up, not timed: own rows only */
        sor_init_row(i, w, red[i], black[i]);
    long ulo = lo > 1 ? lo : 1, uhi = hi < r - 1 ? hi : r - 1;

    sdsm_barrier();
    double t0 = sdsm_wtime();
    for (long it = 0; it < iters; it++) {
        sor_phase(0, red, black, w, ulo, uhi);
        sdsm_barrier();
        sor_phase(1, red, black, w, ulo, uhi);
        sdsm_barrier();
    }
    double t1 = sdsm_wtime();

    if (corrupt && me == np - 1 && uhi > ulo)
        black[uhi - 1][w / 2] *= 1.001f;
    for (long i = lo; i < hi; i++)
        dg[i]->hash = sor_row_digest(red[i], black[i], w, &dg[i]->sum);
    sdsm_barrier();

    int status = 0;
    if (me == 0) {
        float *rr, *rb;
        sor_run(r, w, iters, &rr, &rb, NULL);
        double sum = 0, maxdiff = 0;
        long badrows = 0, badvals = 0;
        for (long i = 0; i < r; i++) {
            double rs;
            const float *xr = rr + (size_t)i * w, *xb = rb + (size_t)i * w;
            uint64_t rh = sor_row_digest(xr, xb, w, &rs);
            sum += dg[i]->sum;
            if (rh != dg[i]->hash) { /* fetch the row only when it differs */
                badrows++;
                badvals += cmp_row(red[i], xr, w, &maxdiff) + cmp_row(black[i], xb, w, &maxdiff);
            }
        }
        app_header("sor", "sdsm", np, "rows=%ld cols=%ld(2x%ld) iters=%ld", r, 2 * w, w, iters);
        app_time(t1 - t0);
        app_result("checksum=%.10e", sum);
        status = app_verdict(maxdiff <= SOR_TOL,
                             "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values "
                             "in %ld rows not bit-identical",
                             maxdiff, SOR_TOL, badvals, badrows);
        free(rr); /* and rb: one block */
    }
    free(red);
    free(black);
    free(dg);
    sdsm_finalize();
    return status;
}
