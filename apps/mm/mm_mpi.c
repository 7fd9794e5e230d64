/*
 * mm_mpi.c - matrix product with MPI: rank 0 holds A, B and C; the timed
 * section scatters the rows of A by blocks (app_block), broadcasts B, lets
 * every rank compute its rows of C and gathers C back to rank 0.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "mm_kernel.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long n = app_pick(argc, argv, "n", 128, 3072, 2048);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 1 || n < np) {
        if (me == 0)
            fprintf(stderr, "mm: need --n >= 1 (and >= ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t nn = (size_t)n * n;
    long lo, hi;
    app_block(n, np, me, &lo, &hi);
    long rows = hi - lo;
    double *la = malloc(((size_t)rows * n + 1) * sizeof *la);
    double *lc = malloc(((size_t)rows * n + 1) * sizeof *lc);
    double *gb = malloc(nn * sizeof *gb);
    double *ga = NULL, *gc = NULL;
    int *counts = malloc((size_t)np * sizeof *counts), *displs = malloc((size_t)np * sizeof *displs);
    double **a = calloc((size_t)n, sizeof *a), **b = malloc((size_t)n * sizeof *b),
           **c = calloc((size_t)n, sizeof *c);
    if (!la || !lc || !gb || !counts || !displs || !a || !b || !c)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int q = 0; q < np; q++) {
        long l, h;
        app_block(n, np, q, &l, &h);
        counts[q] = (int)((h - l) * n);
        displs[q] = (int)(l * n);
    }
    for (long i = 0; i < n; i++)
        b[i] = gb + (size_t)i * n;
    for (long i = lo; i < hi; i++) {
        a[i] = la + (size_t)(i - lo) * n;
        c[i] = lc + (size_t)(i - lo) * n;
    }
    if (me == 0) { /* set-up, not timed: the whole input at rank 0 */
        ga = malloc(nn * sizeof *ga);
        gc = malloc(nn * sizeof *gc);
        if (!ga || !gc)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (long i = 0; i < n; i++) {
            mm_init_a_row(i, n, ga + (size_t)i * n);
            mm_init_b_row(i, n, b[i]);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Scatterv(ga, counts, displs, MPI_DOUBLE, la, (int)(rows * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(gb, (int)nn, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    mm_rows(a, b, c, n, lo, hi);
    MPI_Gatherv(lc, (int)(rows * n), MPI_DOUBLE, gc, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    int status = 0;
    if (me == 0) {
        if (corrupt)
            gc[nn - 1 - n / 2] *= 1.001;
        double *ref = mm_run(n, NULL);
        double sum = 0;
        for (long i = 0; i < n; i++) {
            double s;
            mm_row_digest(gc + (size_t)i * n, n, &s);
            sum += s;
        }
        long badvals = 0;
        for (size_t k = 0; k < nn; k++)
            badvals += memcmp(&gc[k], &ref[k], sizeof(double)) != 0;
        double maxdiff = app_max_rel_diff(gc, ref, nn);
        app_header("mm", "mpi", np, "n=%ld", n);
        app_time(t1 - t0);
        app_result("checksum=%.12e", sum);
        status = app_verdict(maxdiff <= MM_TOL,
                             "C vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values "
                             "not bit-identical",
                             maxdiff, MM_TOL, badvals);
        free(ref);
    }
    MPI_Finalize();
    return status;
}
