/*
 * lu_omp.c - blocked LU with OpenMP threads: the same steps and the same 2-D
 * scatter of blocks over threads as the sdsm version (thread t owns block
 * (I,J) when t == (I mod pr) * pc + (J mod pc)), with OpenMP barriers.
 * Each thread initializes its own blocks (first touch).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "lu_kernel.h"

int main(int argc, char **argv)
{
    lu_dims_t d = lu_dims_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    long nb = d.nb, b = d.b;
    int np = omp_get_max_threads();
    int pr = 1;
    for (int r = 1; r * r <= np; r++)
        if (np % r == 0)
            pr = r;
    int pc = np / pr;
    lu_matrix_t m;
    if (lu_matrix_alloc(&m, &d)) {
        fprintf(stderr, "lu: out of memory\n");
        return 1;
    }
    double t0 = 0, t1 = 0;

#pragma omp parallel num_threads(np)
    {
        int me = omp_get_thread_num(), myr = me / pc, myc = me % pc;
        for (long I = myr; I < nb; I += pr)
            for (long J = myc; J < nb; J += pc)
                lu_init_block(m.blk[I * nb + J], &d, I, J);
#pragma omp barrier
#pragma omp master
        t0 = app_now();
        for (long k = 0; k < nb; k++) {
            double *dk = m.blk[k * nb + k];
            long i0 = k + 1 + ((myr - (k + 1)) % pr + pr) % pr;
            long j0 = k + 1 + ((myc - (k + 1)) % pc + pc) % pc;
            if ((int)(k % pr) == myr && (int)(k % pc) == myc)
                lu_factor_diag(dk, b);
#pragma omp barrier
            if ((int)(k % pr) == myr)
                for (long j = j0; j < nb; j += pc)
                    lu_solve_row(dk, m.blk[k * nb + j], b);
            if ((int)(k % pc) == myc)
                for (long i = i0; i < nb; i += pr)
                    lu_solve_col(dk, m.blk[i * nb + k], b);
#pragma omp barrier
            for (long i = i0; i < nb; i += pr)
                for (long j = j0; j < nb; j += pc)
                    lu_update(m.blk[i * nb + j], m.blk[i * nb + k], m.blk[k * nb + j], b);
#pragma omp barrier
        }
#pragma omp master
        t1 = app_now();
    }

    if (corrupt)
        m.blk[nb * nb - 1][b * b - 1] *= 1.0 + 1e-9;
    lu_matrix_t ref;
    if (lu_matrix_alloc(&ref, &d)) {
        fprintf(stderr, "lu: out of memory\n");
        return 1;
    }
    lu_matrix_init(&ref, &d);
    lu_factor_seq(ref.blk, &d);
    double maxdiff = app_max_rel_diff(m.data, ref.data, (size_t)(d.n * d.n));
    double sum = lu_checksum(m.blk, &d), rsum = lu_checksum(ref.blk, &d);
    double sdiff = fabs(sum - rsum) / fmax(fabs(rsum), 1.0);

    app_header("lu", "omp", np, "n=%ld b=%ld grid=%dx%d", d.n, d.b, pr, pc);
    app_time(t1 - t0);
    app_result("checksum=%.12e", sum);
    int status = app_verdict(maxdiff <= LU_TOL && sdiff <= LU_TOL,
                             "blocks vs sequential kernel: max rel diff %.3g (tolerance %g); "
                             "checksum rel diff %.3g",
                             maxdiff, LU_TOL, sdiff);
    lu_matrix_free(&ref);
    lu_matrix_free(&m);
    return status;
}
