/*
 * cg_mpi.c - CG with MPI: rows block-distributed (app_block) as in the sdsm
 * version; before each A p the ranks allgather p (MPI_Allgatherv), and dot
 * products allgather the per-rank partial sums, which every rank adds in rank
 * order: an allreduce whose order is fixed, so the results match the
 * sequential kernel with P parts bit for bit.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cg_kernel.h"

#define NSLOT CG_NSUM

/* What cg_iterate's hooks need. */
typedef struct {
    double *p, *all;
    int *counts, *displs;
    int np;
} run_t;

/* Sum k values over ranks in rank order (cg_share_t's reduce). */
static void reduce(void *ctx, const double *part, double *tot, int k)
{
    run_t *u = ctx;
    MPI_Allgather(part, NSLOT, MPI_DOUBLE, u->all, NSLOT, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int t = 0; t < k; t++)
        tot[t] = cg_sum_parts(u->all + t, u->np, NSLOT);
}

/* Before A p: every rank's rows of p, everywhere. */
static void gather_p(void *ctx)
{
    run_t *u = ctx;
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, u->p, u->counts, u->displs, MPI_DOUBLE,
                   MPI_COMM_WORLD);
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
    run_t u = {p, all, counts, displs, np};
    /* z goes through p's buffer for the last A z, gathered whole */
    cg_share_t sh = {.a = &a,
                     .m = m,
                     .x = x,
                     .z = z,
                     .r = r,
                     .q = q,
                     .pm = p + lo,
                     .p = p,
                     .zeta = zeta,
                     .rnorm = rnorm,
                     .ctx = &u,
                     .reduce = reduce,
                     .p_needed = gather_p};
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = MPI_Wtime();
    cg_iterate(&P, &sh);
    double t1 = MPI_Wtime();

    int status = 0;
    if (me == 0) { /* p holds z, gathered for the last A z */
        cg_result_t got = {zeta, rnorm, p};
        status = cg_verify(&P, "mpi", np, "", np, &got, corrupt, t1 - t0);
        if (status < 0) {
            fprintf(stderr, "cg: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    cg_csr_free(&a);
    free(counts), free(displs), free(p), free(x), free(z), free(r), free(q), free(all);
    free(zeta), free(rnorm);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
