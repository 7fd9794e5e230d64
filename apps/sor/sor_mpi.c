/*
 * sor_mpi.c - red-black SOR with MPI: each rank keeps its block of rows
 * (app_block) of both colours plus one halo row above and below; before
 * the red phase it exchanges black halo rows with its neighbours, before
 * the black phase red ones.  The grids are gathered to rank 0 after the
 * timed section for the check.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "sor_kernel.h"

static long R, W, LO, HI;
static int UP, DN;

/* Fill the halo rows lo-1 and hi of g from the neighbours. */
static void halo(float **g)
{
    MPI_Request rq[4];
    int n = 0, cnt = (int)W;
    if (LO > 0) {
        MPI_Irecv(g[LO - 1], cnt, MPI_FLOAT, UP, 1, MPI_COMM_WORLD, &rq[n++]);
        MPI_Isend(g[LO], cnt, MPI_FLOAT, UP, 0, MPI_COMM_WORLD, &rq[n++]);
    }
    if (HI < R) {
        MPI_Irecv(g[HI], cnt, MPI_FLOAT, DN, 0, MPI_COMM_WORLD, &rq[n++]);
        MPI_Isend(g[HI - 1], cnt, MPI_FLOAT, DN, 1, MPI_COMM_WORLD, &rq[n++]);
    }
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
}

static long cmp(const float *x, const float *ref, size_t n, double *maxdiff)
{
    long bad = 0;
    for (size_t k = 0; k < n; k++) {
        bad += memcmp(&x[k], &ref[k], sizeof(float)) != 0;
        double d = fabs((double)x[k] - ref[k]) / fmax(fabs((double)ref[k]), 1.0);
        if (!(d <= *maxdiff))
            *maxdiff = isnan(d) ? INFINITY : d;
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    R = app_pick(argc, argv, "rows", 256, 4096, 2048);
    W = app_pick(argc, argv, "w", 128, 2048, 1024);
    long iters = app_pick(argc, argv, "iters", 20, 800, 100);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (R < 3 || W < 2 || iters < 1 || R < np) {
        if (me == 0)
            fprintf(stderr, "sor: need --rows >= 3 (and >= ranks), --w >= 2, --iters >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    app_block(R, np, me, &LO, &HI);
    UP = me > 0 ? me - 1 : MPI_PROC_NULL;
    DN = me < np - 1 ? me + 1 : MPI_PROC_NULL;
    long rows = HI - LO;
    /* Own rows and the two halo rows of both colours, laid out like every
     * version's block (sor_black_offset). */
    float *br = malloc((size_t)sor_block_floats(rows + 2, W) * sizeof *br);
    float *bb = br ? br + sor_black_offset(rows + 2, W) : NULL;
    float **red = calloc((size_t)R, sizeof *red), **black = calloc((size_t)R, sizeof *black);
    if (!br || !red || !black)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = LO - 1; i <= HI; i++) {
        if (i < 0 || i >= R)
            continue;
        red[i] = br + (size_t)(i - LO + 1) * W;
        black[i] = bb + (size_t)(i - LO + 1) * W;
    }
    for (long i = LO; i < HI; i++)
        sor_init_row(i, W, red[i], black[i]);
    long ulo = LO > 1 ? LO : 1, uhi = HI < R - 1 ? HI : R - 1;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        halo(black);
        sor_phase(0, red, black, W, ulo, uhi);
        halo(red);
        sor_phase(1, red, black, W, ulo, uhi);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();

    if (corrupt && me == np - 1 && uhi > ulo)
        black[uhi - 1][W / 2] *= 1.001f;
    int *counts = NULL, *displs = NULL;
    float *allr = NULL, *allb = NULL;
    if (me == 0) {
        counts = malloc((size_t)np * sizeof *counts);
        displs = malloc((size_t)np * sizeof *displs);
        allr = malloc((size_t)R * W * sizeof *allr);
        allb = malloc((size_t)R * W * sizeof *allb);
        for (int q = 0; q < np; q++) {
            long l, h;
            app_block(R, np, q, &l, &h);
            counts[q] = (int)((h - l) * W);
            displs[q] = (int)(l * W);
        }
    }
    MPI_Gatherv(red[LO], (int)(rows * W), MPI_FLOAT, allr, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(black[LO], (int)(rows * W), MPI_FLOAT, allb, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
    int status = 0;
    if (me == 0) {
        float *rr, *rb;
        sor_run(R, W, iters, &rr, &rb, NULL);
        double sum = 0, maxdiff = 0;
        for (long i = 0; i < R; i++) {
            double s;
            sor_row_digest(allr + (size_t)i * W, allb + (size_t)i * W, W, &s);
            sum += s;
        }
        long badvals = cmp(allr, rr, (size_t)R * W, &maxdiff) + cmp(allb, rb, (size_t)R * W, &maxdiff);
        app_header("sor", "mpi", np, "rows=%ld cols=%ld(2x%ld) iters=%ld", R, 2 * W, W, iters);
        app_time(t1 - t0);
        app_result("checksum=%.10e", sum);
        status = app_verdict(maxdiff <= SOR_TOL,
                             "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values "
                             "not bit-identical",
                             maxdiff, SOR_TOL, badvals);
        free(rr); /* and rb: one block */
    }
    MPI_Finalize();
    return status;
}
