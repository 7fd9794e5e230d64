/*
 * cg_seq.c - the sequential CG (no sdsm): the reference time for the
 * speedups.  --parts P blocks the dot products like a run on P processes
 * (default 1: plain sums).
 */
#include <stdio.h>

#include "app.h"
#include "cg_kernel.h"

int main(int argc, char **argv)
{
    cg_params_t p = cg_params_from_args(argc, argv);
    int parts = (int)app_opt_long(argc, argv, "parts", 1);
    cg_result_t res;
    if (parts < 1 || cg_result_alloc(&res, &p)) {
        fprintf(stderr, "cg: bad --parts or out of memory\n");
        return 1;
    }
    double secs = cg_run_seq(&p, parts, &res);
    if (secs < 0) {
        fprintf(stderr, "cg: out of memory\n");
        return 1;
    }
    app_header("cg", "seq", 1, "n=%ld nzr=%ld niter=%ld cgit=%ld shift=%g", p.n, p.nzr, p.niter, p.cgit,
               p.shift);
    app_time(secs);
    app_result("zeta=%.15e rnorm=%.6e", res.zeta[p.niter - 1], res.rnorm[p.niter - 1]);
    cg_result_free(&res);
    return 0;
}
