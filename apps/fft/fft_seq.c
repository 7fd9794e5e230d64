/*
 * fft_seq.c - the sequential 3-D FFT (fft_kernel.c), timed whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fft_kernel.h"

int main(int argc, char **argv)
{
    int nx = (int)app_pick(argc, argv, "nx", 32, 256, 128);
    int ny = (int)app_pick(argc, argv, "ny", 32, 256, 128);
    int nz = (int)app_pick(argc, argv, "nz", 32, 128, 128);
    int iters = (int)app_pick(argc, argv, "iters", 4, 50, 6);
    fft_prob p;
    if (fft_prob_init(&p, nx, ny, nz, iters)) {
        fprintf(stderr, "fft: nx, ny, nz must be powers of two and iters >= 1\n");
        return 2;
    }
    size_t total = (size_t)nx * (size_t)ny * (size_t)nz;
    cplx *sums = malloc(sizeof(cplx) * (size_t)iters);
    cplx *u = malloc(sizeof(cplx) * total), *v = malloc(sizeof(cplx) * total);
    if (!sums || !u || !v) {
        fprintf(stderr, "fft: out of memory\n");
        return 1;
    }
    fft_seq_init(&p, u);                /* not timed: the input data */
    memset(v, 0, sizeof(cplx) * total); /* not timed: first touch */
    app_header("fft", "seq", 1, "%dx%dx%d iters=%d", nx, ny, nz, iters);
    double t0 = app_now();
    fft_seq_compute(&p, u, v, sums);
    app_time(app_now() - t0);
    app_result("checksum[%d] = %.15e %.15e", iters, sums[iters - 1].re, sums[iters - 1].im);
    free(sums);
    free(u);
    free(v);
    fft_prob_free(&p);
    return 0;
}
