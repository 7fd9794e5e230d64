/*
 * mm_sdsm.c - matrix product on sdsm shared memory.
 *
 * A, B and C are each allocated as one shared block per rank, holding that
 * rank's block of rows (app_block) and homed at it.  Each rank initializes
 * its own rows of A and B (set-up, not timed), then computes its rows of C
 * from its rows of A and all of B.  A and C never travel; B is read by
 * everybody, so each rank fetches the (np-1)/np of B homed elsewhere once
 * (np-1 copies of B in all, the minimum for a product that needs all of B
 * everywhere).  Homing B block-wise rather than at rank 0 moves the same
 * bytes but spreads the serving over all ranks.  The rows of B are read in
 * ascending order, so the runtime's sequential prefetch applies.
 *
 * Check: every rank digests its own rows of C (hash of the bits + sum) into
 * a small shared table homed at it; rank 0 runs the sequential kernel and
 * compares digests, reading in full only rows whose digest differs.
 */
#include <sdsm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "mm_kernel.h"

typedef struct {
    uint64_t hash;
    double   sum;
} digest_t;

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    long n = app_pick(argc, argv, "n", 128, 3072, 2048);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 1 || n < np)
        sdsm_abort(2, "mm: need --n >= 1 (and >= ranks)");

    size_t rowbytes = (size_t)n * sizeof(double);
    double **a = app_sdsm_rows(n, rowbytes), **b = app_sdsm_rows(n, rowbytes);
    double **c = app_sdsm_rows(n, rowbytes);
    digest_t **dg = app_sdsm_rows(n, sizeof(digest_t));
    long lo, hi;
    app_block(n, np, me, &lo, &hi);
    for (long i = lo; i < hi; i++) { /* set-up, not timed: own rows only */
        mm_init_a_row(i, n, a[i]);
        mm_init_b_row(i, n, b[i]);
    }

    sdsm_barrier();
    double t0 = sdsm_wtime();
    mm_rows(a, b, c, n, lo, hi);
    sdsm_barrier();
    double t1 = sdsm_wtime();

    if (corrupt && me == np - 1 && hi > lo)
        c[hi - 1][n / 2] *= 1.001;
    for (long i = lo; i < hi; i++)
        dg[i]->hash = mm_row_digest(c[i], n, &dg[i]->sum);
    sdsm_barrier();

    int status = 0;
    if (me == 0) {
        double *ref = mm_run(n, NULL);
        double sum = 0, maxdiff = 0;
        long badrows = 0, badvals = 0;
        for (long i = 0; i < n; i++) {
            double rs;
            uint64_t rh = mm_row_digest(ref + (size_t)i * n, n, &rs);
            sum += dg[i]->sum;
            if (rh != dg[i]->hash) { /* fetch the row only when it differs */
                badrows++;
                for (long j = 0; j < n; j++)
                    badvals += memcmp(&c[i][j], &ref[(size_t)i * n + j], sizeof(double)) != 0;
                maxdiff = fmax(maxdiff, app_max_rel_diff(c[i], ref + (size_t)i * n, (size_t)n));
            }
        }
        app_header("mm", "sdsm", np, "n=%ld", n);
        app_time(t1 - t0);
        app_result("checksum=%.12e", sum);
        status = app_verdict(maxdiff <= MM_TOL,
                             "C vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values in "
                             "%ld rows not bit-identical",
                             maxdiff, MM_TOL, badvals, badrows);
        free(ref);
    }
    free(a);
    free(b);
    free(c);
    free(dg);
    sdsm_finalize();
    return status;
}
