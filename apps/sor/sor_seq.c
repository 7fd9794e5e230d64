/*
 * sor_seq.c - the sequential red-black SOR (no sdsm): the reference time
 * for the speedups.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "sor_kernel.h"

int main(int argc, char **argv)
{
    long r = app_pick(argc, argv, "rows", 256, 4096, 2048);
    long w = app_pick(argc, argv, "w", 128, 2048, 1024);
    long iters = app_pick(argc, argv, "iters", 20, 800, 100);
    if (r < 3 || w < 2 || iters < 1) {
        fprintf(stderr, "sor: need --rows >= 3, --w >= 2, --iters >= 1\n");
        return 2;
    }
    float *red, *black;
    double secs, sum = 0;
    sor_run(r, w, iters, &red, &black, &secs);
    for (long i = 0; i < r; i++) {
        double s;
        sor_row_digest(red + (size_t)i * w, black + (size_t)i * w, w, &s);
        sum += s;
    }
    app_header("sor", "seq", 1, "rows=%ld cols=%ld(2x%ld) iters=%ld", r, 2 * w, w, iters);
    app_time(secs);
    app_result("checksum=%.10e", sum);
    free(red); /* and black: one block */
    return 0;
}
