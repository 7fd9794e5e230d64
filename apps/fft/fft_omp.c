/*
 * fft_omp.c - 3-D FFT with OpenMP: the sequential algorithm on the natural
 * layout u[z][y][x], each pass of 1-D transforms split over the threads
 * (planes for x and y, x-z sheets for z).  Check as in fft_sdsm.c.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fft_kernel.h"

#define TOL 1e-9

int main(int argc, char **argv)
{
    int nx = (int)app_pick(argc, argv, "nx", 32, 256, 128);
    int ny = (int)app_pick(argc, argv, "ny", 32, 256, 128);
    int nz = (int)app_pick(argc, argv, "nz", 32, 128, 128);
    int iters = (int)app_pick(argc, argv, "iters", 4, 50, 6);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    fft_prob p;
    if (fft_prob_init(&p, nx, ny, nz, iters)) {
        fprintf(stderr, "fft: nx, ny, nz must be powers of two and iters >= 1\n");
        return 2;
    }
    size_t X = (size_t)nx, Y = (size_t)ny, Z = (size_t)nz, plane = X * Y, total = plane * Z;
    cplx *u = malloc(sizeof(cplx) * total), *v = malloc(sizeof(cplx) * total);
    cplx *sums = malloc(sizeof(cplx) * (size_t)iters);
    double *exx = malloc(sizeof(double) * (X + Y + Z)), *exy = exx + X, *exz = exy + Y;
    if (!u || !v || !sums || !exx)
        return 1;
#pragma omp parallel for schedule(static)
    for (long z = 0; z < nz; z++) {
        fft_init_plane(&p, (int)z, u + (size_t)z * plane, X);
        memset(v + (size_t)z * plane, 0, sizeof(cplx) * plane); /* first touch */
    }
    double t0 = app_now();
#pragma omp parallel for schedule(static)
    for (long z = 0; z < nz; z++) {
        fft_lines(&p.px, u + (size_t)z * plane, 1, Y, X, -1);
        fft_lines(&p.py, u + (size_t)z * plane, X, X, 1, -1);
    }
#pragma omp parallel for schedule(static)
    for (long y = 0; y < ny; y++)
        fft_lines(&p.pz, u + (size_t)y * X, plane, X, 1, -1);
    for (int t = 1; t <= iters; t++) {
        fft_evolve_tables(&p, t, exx, exy, exz);
#pragma omp parallel for schedule(static)
        for (long y = 0; y < ny; y++) {
            for (long z = 0; z < nz; z++) {
                size_t o = (size_t)z * plane + (size_t)y * X;
                fft_evolve_row(&p, exx, exy, exz, (int)y, (int)z, u + o, v + o);
            }
            fft_lines(&p.pz, v + (size_t)y * X, plane, X, 1, +1);
        }
#pragma omp parallel for schedule(static)
        for (long z = 0; z < nz; z++) {
            fft_lines(&p.py, v + (size_t)z * plane, X, X, 1, +1);
            fft_lines(&p.px, v + (size_t)z * plane, 1, Y, X, +1);
        }
        cplx s = {0, 0};
        for (int j = 1; j <= FFT_NCHECK; j++) {
            int x, y, z;
            fft_check_point(&p, j, &x, &y, &z);
            const cplx *e = v + (size_t)z * plane + (size_t)y * X + (size_t)x;
            s.re += e->re;
            s.im += e->im;
        }
        sums[t - 1] = s;
    }
    double t1 = app_now();
    int nt = omp_get_max_threads();
    app_header("fft", "omp", nt, "%dx%dx%d iters=%d", nx, ny, nz, iters);
    app_time(t1 - t0);
    app_result("checksum[%d] = %.15e %.15e", iters, sums[iters - 1].re, sums[iters - 1].im);
    if (fail)
        v[total / 2].re += 1e-6;
    cplx *ref = u; /* u is no longer needed */
    cplx *rsums = malloc(sizeof(cplx) * (size_t)iters);
    fft_seq_run(&p, rsums, ref);
    double d = app_max_rel_diff((const double *)v, (const double *)ref, 2 * total);
    double ds = app_max_rel_diff((const double *)sums, (const double *)rsums, 2 * (size_t)iters);
    int status = app_verdict(
        d <= TOL && ds <= TOL,
        "result array and %d checksums vs sequential: max rel diff %.3g and %.3g (tolerance %.0e)", iters, d,
        ds, TOL);
    free(u);
    free(v);
    free(sums);
    free(rsums);
    free(exx);
    fft_prob_free(&p);
    return status;
}
