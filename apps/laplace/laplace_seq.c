/*
 * laplace_seq.c - the sequential Jacobi iteration (no sdsm): the reference
 * time for the speedups.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "laplace_kernel.h"

int main(int argc, char **argv)
{
    long n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = app_pick(argc, argv, "iters", 50, 600, 50);
    if (n < 3 || iters < 1) {
        fprintf(stderr, "laplace: need --n >= 3 and --iters >= 1\n");
        return 2;
    }
    double resid, secs;
    double *u = laplace_run(n, iters, &resid, &secs);
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double s;
        laplace_row_digest(u + (size_t)i * n, n, &s);
        sum += s;
    }
    app_header("laplace", "seq", 1, "n=%ld iters=%ld", n, iters);
    app_time(secs);
    app_result("checksum=%.12e resid=%.12e", sum, resid);
    free(u);
    return 0;
}
