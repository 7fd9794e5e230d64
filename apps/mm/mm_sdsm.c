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
 * compares digests, reading in full only rows whose digest differs
 * (mm_kernel.c: mm_digest_rows, mm_verify).
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "app_sdsm.h"
#include "mm_kernel.h"

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
    mm_digest_t **dg = app_sdsm_rows(n, sizeof(mm_digest_t));
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

    mm_digest_rows(c, dg, n, lo, hi, corrupt && me == np - 1);
    sdsm_barrier();

    int status = 0;
    if (me == 0)
        status = mm_verify(c, dg, n, "sdsm", np, 0, t1 - t0);
    free(a);
    free(b);
    free(c);
    free(dg);
    sdsm_finalize();
    return status;
}
