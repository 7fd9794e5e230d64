/*
 * laplace_sdsm.c - Jacobi iteration on sdsm shared memory.
 *
 * Rows are block-distributed (app_block).  Each array is allocated as one
 * shared block per rank, homed at that rank, so the rows a rank updates are
 * homed at it and never travel except as halo rows: at each iteration a
 * rank faults in the row above and the row below its block (written by its
 * neighbours in the previous iteration, so invalidated at the barrier).
 * Per-rank blocks also mean no page is shared by two writers.
 *
 * Check: every rank digests its own rows (hash of the bits + sum) into a
 * small shared table homed at it; rank 0 runs the sequential kernel and
 * compares digests, reading in full only rows whose digest differs.  This
 * keeps the check from moving the whole grid to rank 0.
 */
#include <sdsm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "laplace_kernel.h"

typedef laplace_digest_t digest_t;

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    long n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = app_pick(argc, argv, "iters", 50, 600, 50);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 3 || iters < 1 || n < np)
        sdsm_abort(2, "laplace: need --n >= 3 (and >= ranks) and --iters >= 1");

    size_t rowbytes = (size_t)n * sizeof(double);
    double **a = app_sdsm_rows(n, rowbytes), **b = app_sdsm_rows(n, rowbytes);
    digest_t **dg = app_sdsm_rows(n, sizeof(digest_t));
    long lo, hi;
    app_block(n, np, me, &lo, &hi);
    for (long i = lo; i < hi; i++) { /* set-up, not timed: own rows only */
        laplace_init_row(i, n, a[i]);
        memcpy(b[i], a[i], rowbytes);
    }
    long ulo = lo > 1 ? lo : 1, uhi = hi < n - 1 ? hi : n - 1;

    sdsm_barrier();
    double t0 = sdsm_wtime();
    for (long it = 0; it < iters; it++) {
        laplace_sweep(a, b, n, ulo, uhi);
        sdsm_barrier();
        double **t = a;
        a = b;
        b = t;
    }
    double t1 = sdsm_wtime();

    /* a holds the result, b the previous iterate; digest own rows. */
    if (corrupt && me == np - 1 && uhi > ulo)
        a[uhi - 1][n / 2] *= 1.001;
    for (long i = lo; i < hi; i++) {
        dg[i]->hash = laplace_row_digest(a[i], n, &dg[i]->sum);
        dg[i]->change = laplace_row_change(a[i], b[i], n);
    }
    sdsm_barrier();

    int status = 0;
    if (me == 0) {
        char why[256];
        double sum, resid;
        int ok = laplace_check_digests(a, dg, n, iters, &sum, &resid, why, sizeof why);
        app_header("laplace", "sdsm", np, "n=%ld iters=%ld", n, iters);
        app_time(t1 - t0);
        app_result("checksum=%.12e resid=%.12e", sum, resid);
        status = app_verdict(ok, "%s", why);
    }
    free(a);
    free(b);
    free(dg);
    sdsm_finalize();
    return status;
}
