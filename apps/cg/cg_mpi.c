/*
 * cg_mpi.c - CG with MPI: rows block-distributed (app_block) as in the sdsm
 * version; before each A p the ranks allgather p (MPI_Allgatherv), and dot
 * products allgather the per-rank partial sums, which every rank adds in rank
 * order: an allreduce whose order is fixed, so the results match the
 * sequential kernel with P parts bit for bit.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cg_kernel.h"

#define NSLOT 4

/* Sum k values over ranks in rank order. */
static void reduce(const double *part, double *tot, int k, double *all, int np)
{
    MPI_Allgather(part, NSLOT, MPI_DOUBLE, all, NSLOT, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int t = 0; t < k; t++)
        tot[t] = cg_sum_parts(all + t, np, NSLOT);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    cg_params_t P = cg_params_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    long n = P.n;
    if (n < np) {
        if (me == 0)
            fprintf(stderr, "cg: --n must be >= the number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *counts = malloc((size_t)np * sizeof *counts), *displs = malloc((size_t)np * sizeof *displs);
    for (int r = 0; r < np; r++) {
        long lo, hi;
        app_block(n, np, r, &lo, &hi);
        counts[r] = (int)(hi - lo);
        displs[r] = (int)lo;
    }
    long lo = displs[me], m = counts[me];
    cg_csr_t a;
    double *p = malloc((size_t)n * sizeof *p), *x = malloc((size_t)(m ? m : 1) * sizeof *x),
           *z = malloc((size_t)(m ? m : 1) * sizeof *z), *r = malloc((size_t)(m ? m : 1) * sizeof *r),
           *q = malloc((size_t)(m ? m : 1) * sizeof *q), *all = malloc((size_t)np * NSLOT * sizeof *all);
    double *zeta = calloc((size_t)P.niter, sizeof *zeta), *rnorm = calloc((size_t)P.niter, sizeof *rnorm);
    if (!counts || !displs || !p || !x || !z || !r || !q || !all || !zeta || !rnorm ||
        cg_build_rows(&P, lo, lo + m, &a)) {
        fprintf(stderr, "cg: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *pm = p + lo;
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = MPI_Wtime();
    double part[NSLOT] = {0}, tot[NSLOT];
    for (long i = 0; i < m; i++)
        x[i] = 1.0;
    for (long it = 0; it < P.niter; it++) {
        for (long i = 0; i < m; i++) {
            z[i] = 0;
            r[i] = x[i];
            pm[i] = r[i];
        }
        part[0] = cg_dot(r, r, m);
        reduce(part, tot, 1, all, np);
        double rho = tot[0];
        for (long c = 0; c < P.cgit; c++) {
            MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, p, counts, displs, MPI_DOUBLE,
                           MPI_COMM_WORLD);
            cg_spmv(&a, p, q);
            part[0] = cg_dot(pm, q, m);
            reduce(part, tot, 1, all, np);
            double alpha = rho / tot[0];
            for (long i = 0; i < m; i++) {
                z[i] += alpha * pm[i];
                r[i] -= alpha * q[i];
            }
            double rho0 = rho;
            part[0] = cg_dot(r, r, m);
            reduce(part, tot, 1, all, np);
            rho = tot[0];
            double beta = rho / rho0;
            if (c < P.cgit - 1)
                for (long i = 0; i < m; i++)
                    pm[i] = r[i] + beta * pm[i];
        }
        memcpy(pm, z, (size_t)m * sizeof *z); /* A z, through p's buffer */
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, p, counts, displs, MPI_DOUBLE,
                       MPI_COMM_WORLD);
        cg_spmv(&a, p, q);
        part[0] = cg_diff2(x, q, m);
        part[1] = cg_dot(x, z, m);
        part[2] = cg_dot(z, z, m);
        reduce(part, tot, 3, all, np);
        rnorm[it] = sqrt(tot[0]);
        zeta[it] = P.shift + 1.0 / tot[1];
        double s = 1.0 / sqrt(tot[2]);
        for (long i = 0; i < m; i++)
            x[i] = s * z[i];
    }
    double t1 = MPI_Wtime();

    int status = 0;
    if (me == 0) { /* p holds z, gathered for the last A z */
        cg_result_t got = {zeta, rnorm, p}, ref;
        if (cg_result_alloc(&ref, &P) || cg_run_seq(&P, np, &ref) < 0) {
            fprintf(stderr, "cg: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (corrupt)
            zeta[P.niter - 1] *= 1.0 + 1e-8;
        double diff = cg_compare(&got, &ref, &P);
        app_header("cg", "mpi", np, "n=%ld nzr=%ld niter=%ld cgit=%ld shift=%g", n, P.nzr, P.niter,
                   P.cgit, P.shift);
        app_time(t1 - t0);
        app_result("zeta=%.15e rnorm=%.6e", zeta[P.niter - 1], rnorm[P.niter - 1]);
        status = app_verdict(diff <= CG_TOL,
                             "zeta, rnorm and z vs sequential kernel (%d parts): max rel diff %.3g "
                             "(tolerance %g)",
                             np, diff, CG_TOL);
        cg_result_free(&ref);
    }
    cg_csr_free(&a);
    free(counts), free(displs), free(p), free(x), free(z), free(r), free(q), free(all);
    free(zeta), free(rnorm);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
