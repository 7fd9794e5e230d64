/*
 * laplace_mpi.c - Jacobi iteration with MPI: each rank keeps its block of
 * rows (app_block) plus one halo row above and below, and exchanges halos
 * with its neighbours before every sweep.  The result is gathered to rank 0
 * after the timed section for the check.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "laplace_kernel.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = app_pick(argc, argv, "iters", 50, 600, 50);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 3 || iters < 1 || n < np) {
        if (me == 0)
            fprintf(stderr, "laplace: need --n >= 3 (and >= ranks) and --iters >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long lo, hi;
    app_block(n, np, me, &lo, &hi);
    long rows = hi - lo; /* local rows, stored at local index 1..rows */
    double *ba = malloc((size_t)(rows + 2) * n * sizeof *ba);
    double *bb = malloc((size_t)(rows + 2) * n * sizeof *bb);
    /* global row pointers, valid for lo-1 .. hi */
    double **ra = calloc((size_t)n + 1, sizeof *ra), **rb = calloc((size_t)n + 1, sizeof *rb);
    if (!ba || !bb || !ra || !rb)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = lo - 1; i <= hi; i++) {
        if (i < 0 || i >= n)
            continue;
        ra[i] = ba + (size_t)(i - lo + 1) * n;
        rb[i] = bb + (size_t)(i - lo + 1) * n;
    }
    for (long i = lo; i < hi; i++) {
        laplace_init_row(i, n, ra[i]);
        memcpy(rb[i], ra[i], (size_t)n * sizeof *ba);
    }
    long ulo = lo > 1 ? lo : 1, uhi = hi < n - 1 ? hi : n - 1;
    int up = me > 0 ? me - 1 : MPI_PROC_NULL, dn = me < np - 1 ? me + 1 : MPI_PROC_NULL;
    int cnt = (int)n;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double **a = ra, **b = rb;
    for (long it = 0; it < iters; it++) {
        /* halo of a: my first row goes up, my last row goes down */
        MPI_Request rq[4];
        int nrq = 0;
        if (lo > 0) {
            MPI_Irecv(a[lo - 1], cnt, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[nrq++]);
            MPI_Isend(a[lo], cnt, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &rq[nrq++]);
        }
        if (hi < n) {
            MPI_Irecv(a[hi], cnt, MPI_DOUBLE, dn, 0, MPI_COMM_WORLD, &rq[nrq++]);
            MPI_Isend(a[hi - 1], cnt, MPI_DOUBLE, dn, 1, MPI_COMM_WORLD, &rq[nrq++]);
        }
        MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
        laplace_sweep(a, b, n, ulo, uhi);
        double **t = a;
        a = b;
        b = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    if (corrupt && me == np - 1 && uhi > ulo)
        a[uhi - 1][n / 2] *= 1.001;
    double myresid = 0, resid;
    for (long i = lo; i < hi; i++)
        myresid = fmax(myresid, laplace_row_change(a[i], b[i], n));
    MPI_Reduce(&myresid, &resid, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    if (me == 0) {
        counts = malloc((size_t)np * sizeof *counts);
        displs = malloc((size_t)np * sizeof *displs);
        all = malloc((size_t)n * n * sizeof *all);
        for (int r = 0; r < np; r++) {
            long l, h;
            app_block(n, np, r, &l, &h);
            counts[r] = (int)((h - l) * n);
            displs[r] = (int)(l * n);
        }
    }
    MPI_Gatherv(a[lo], (int)(rows * n), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int status = 0;
    if (me == 0) {
        double rresid, *ref = laplace_run(n, iters, &rresid, NULL);
        double sum = 0;
        long badvals = 0;
        for (long i = 0; i < n; i++) {
            double s;
            laplace_row_digest(all + (size_t)i * n, n, &s);
            sum += s;
        }
        for (size_t k = 0; k < (size_t)n * n; k++)
            badvals += memcmp(&all[k], &ref[k], sizeof(double)) != 0;
        double maxdiff = app_max_rel_diff(all, ref, (size_t)n * n);
        double rdiff = fabs(resid - rresid) / fmax(fabs(rresid), 1.0);
        app_header("laplace", "mpi", np, "n=%ld iters=%ld", n, iters);
        app_time(t1 - t0);
        app_result("checksum=%.12e resid=%.12e", sum, resid);
        status = app_verdict(maxdiff <= LAPLACE_TOL && rdiff <= LAPLACE_TOL,
                             "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values "
                             "not bit-identical; resid rel diff %.3g",
                             maxdiff, LAPLACE_TOL, badvals, rdiff);
        free(ref);
        free(all);
    }
    MPI_Finalize();
    return status;
}
