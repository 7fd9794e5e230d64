/*
 * lu_seq.c - the sequential blocked LU (no sdsm): the reference time for the
 * speedups.  For n <= 1024 (or --residual 1) it also checks max|LU - A|.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "lu_kernel.h"

int main(int argc, char **argv)
{
    lu_dims_t d = lu_dims_from_args(argc, argv);
    int resid = (int)app_opt_long(argc, argv, "residual", d.n <= 1024);
    lu_matrix_t m;
    if (lu_matrix_alloc(&m, &d)) {
        fprintf(stderr, "lu: out of memory\n");
        return 1;
    }
    lu_matrix_init(&m, &d);

    double t0 = app_now();
    lu_factor_seq(m.blk, &d);
    double t1 = app_now();

    app_header("lu", "seq", 1, "n=%ld b=%ld", d.n, d.b);
    app_time(t1 - t0);
    app_result("checksum=%.12e", lu_checksum(m.blk, &d));
    int status = 0;
    if (resid) {
        double r = lu_residual(m.blk, &d);
        status = app_verdict(r <= LU_TOL, "max|LU - A| / max|A| = %.3g (tolerance %g)", r, LU_TOL);
    }
    lu_matrix_free(&m);
    return status;
}
