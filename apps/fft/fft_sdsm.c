/*
 * fft_sdsm.c - 3-D FFT on sdsm (SPMD).
 *
 * Two slab distributions of the complex nx*ny*nz array:
 *   A: rank s owns z planes [zlo_s, zhi_s), stored y-major inside its slab,
 *      A_s[y][z - zlo_s][x]; the x and y transforms are local.
 *   B: rank r owns y rows [ylo_r, yhi_r), stored B_r[z][y - ylo_r][x]; the
 *      z transform is local.
 * A transpose is a pull: after a barrier each rank copies what it needs from
 * every other rank's slab into its own.  With these in-slab layouts the part
 * rank r needs from rank s is ONE contiguous run of pages (A_s rows y in r's
 * range; B_s planes z in r's range).  Right after the barrier each rank asks
 * for all of those runs at once (sdsm_prefetch: a few large requests per
 * home, all in flight together), then copies while the pages arrive.  The
 * inverse transpose of each iteration copies nothing of its own: the y
 * transform's bit-reversal pass gathers its rows from the slabs
 * (fft_rows_from), plane by plane.
 *
 * NPB FT's three arrays, shared only where another rank reads them:
 *   A  (shared, one block per rank homed at it): the initial data, x/y
 *      transformed, read by everybody in the forward transpose;
 *   B0 (private): the spectrum - only its owner ever touches it;
 *   B1 (shared, homed at the owner): the evolved spectrum after the inverse
 *      z transform, read by everybody in each inverse transpose;
 *   R  (private, R[z - zlo][y][x]: each x-y plane contiguous, so the y
 *      transform's lines are 16*nx bytes apart, not a power-of-two
 *      multiple of the cache's set size): the result of an iteration (inverse transpose, y and x
 *      transforms) - only its owner uses it; the 1024 sampled elements of
 *      each checksum go to a small shared array of their rank's.
 * Timed: the forward FFT and the iterations (one transpose per 3-D FFT,
 * two barriers per iteration).  After the timed section each rank copies its
 * final R slab into A (same layout) and rank 0 runs the sequential kernel and
 * compares every element and every checksum (tolerance 1e-9 relative,
 * |a-b|/max(|b|,1); the same operations run in the same order, so the
 * expected difference is 0).
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fft_kernel.h"

#define TOL 1e-9

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    int nx = (int)app_pick(argc, argv, "nx", 32, 256, 128);
    int ny = (int)app_pick(argc, argv, "ny", 32, 256, 128);
    int nz = (int)app_pick(argc, argv, "nz", 32, 128, 128);
    int iters = (int)app_pick(argc, argv, "iters", 4, 50, 6);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    fft_prob p;
    if (fft_prob_init(&p, nx, ny, nz, iters))
        sdsm_abort(2, "fft: nx, ny, nz must be powers of two and iters >= 1");
    if (np < 1 || np > nz || np > ny) /* np >= 1: for gcc's allocation-size check too */
        sdsm_abort(2, "fft: needs at least one z plane and one y row per rank (nz=%d ny=%d, %d ranks)", nz,
                   ny, np);

    size_t X = (size_t)nx;
    long *zlo = malloc(sizeof(long) * 2 * (size_t)(np + 1)), *ylo = zlo + np + 1;
    for (int r = 0; r <= np; r++) {
        zlo[r] = (long)nz * r / np;
        ylo[r] = (long)ny * r / np;
    }
    cplx **A = malloc(sizeof(cplx *) * 2 * (size_t)np), **B1 = A + np;
    for (int r = 0; r < np; r++)
        A[r] = sdsm_alloc(sizeof(cplx) * X * (size_t)ny * (size_t)(zlo[r + 1] - zlo[r]), r);
    for (int r = 0; r < np; r++)
        B1[r] = sdsm_alloc(sizeof(cplx) * X * (size_t)nz * (size_t)(ylo[r + 1] - ylo[r]), r);
    /* The sampled elements of every iteration, written by the rank holding
     * them into its own array (homed at it, so no write travels while the
     * iterations run) and summed by rank 0 in the sequential order at the
     * end. */
    cplx **samp = malloc(sizeof(cplx *) * (size_t)np);
    if (!samp)
        sdsm_abort(1, "fft: out of memory");
    for (int r = 0; r < np; r++)
        samp[r] = sdsm_calloc((size_t)iters * FFT_NCHECK, sizeof(cplx), r);
    cplx *samples = samp[me];

    long z0 = zlo[me], nzl = zlo[me + 1] - z0, y0 = ylo[me], nyl = ylo[me + 1] - y0;
    cplx *a = A[me], *b1 = B1[me];
    cplx *b0 = malloc(sizeof(cplx) * X * (size_t)nz * (size_t)nyl);
    cplx *res = malloc(sizeof(cplx) * X * (size_t)ny * (size_t)nzl);
    if (!b0 || !res)
        sdsm_abort(1, "fft: out of memory");
    memset(b0, 0, sizeof(cplx) * X * (size_t)nz * (size_t)nyl);
    memset(res, 0, sizeof(cplx) * X * (size_t)ny * (size_t)nzl);
    double *exx = malloc(sizeof(double) * (size_t)(nx + ny + nz)), *exy = exx + nx, *exz = exy + ny;
    const cplx **rows = malloc(sizeof(cplx *) * (size_t)ny);
    cplx *pbuf = malloc(sizeof(cplx) * X * (size_t)ny);
    if (!exx || !rows || !pbuf)
        sdsm_abort(1, "fft: out of memory");

    for (long zl = 0; zl < nzl; zl++)
        fft_init_plane(&p, (int)(z0 + zl), a + (size_t)zl * X, (size_t)nzl * X);
    sdsm_barrier();
    double t0 = sdsm_wtime();

    /* forward: x and y on A, transpose A -> B0, z on B0 */
    for (long zl = 0; zl < nzl; zl++) { /* plane by plane */
        fft_lines(&p.px, a + (size_t)zl * X, 1, (size_t)ny, (size_t)nzl * X, -1);
        fft_lines(&p.py, a + (size_t)zl * X, (size_t)nzl * X, X, 1, -1);
    }
    sdsm_barrier();
    for (int k = 1; k < np; k++) { /* in the order copied below */
        int s = (me + k) % np;
        long snz = zlo[s + 1] - zlo[s];
        sdsm_prefetch(A[s] + (size_t)y0 * (size_t)snz * X, sizeof(cplx) * (size_t)nyl * (size_t)snz * X);
    }
    for (int k = 0; k < np; k++) {
        int s = (me + k) % np; /* start with our own slab, then spread the load */
        long sz0 = zlo[s], snz = zlo[s + 1] - sz0;
        const cplx *src = A[s] + (size_t)y0 * (size_t)snz * X;
        for (long yl = 0; yl < nyl; yl++)
            for (long zl = 0; zl < snz; zl++, src += X)
                fft_copy_row(b0 + ((size_t)(sz0 + zl) * (size_t)nyl + (size_t)yl) * X, src, X);
    }
    for (long yl = 0; yl < nyl; yl++)
        fft_lines(&p.pz, b0 + (size_t)yl * X, (size_t)nyl * X, X, 1, -1);

    for (int t = 1; t <= iters; t++) {
        fft_evolve_tables(&p, t, exx, exy, exz);
        for (long yl = 0; yl < nyl; yl++) { /* x-z sheet by sheet */
            for (long z = 0; z < nz; z++) {
                size_t o = ((size_t)z * (size_t)nyl + (size_t)yl) * X;
                fft_evolve_row(&p, exx, exy, exz, (int)(y0 + yl), (int)z, b0 + o, b1 + o);
            }
            fft_lines(&p.pz, b1 + (size_t)yl * X, (size_t)nyl * X, X, 1, +1);
        }
        sdsm_barrier();
        for (int k = 1; k < np; k++) {
            int s = (me + k) % np;
            long sny = ylo[s + 1] - ylo[s];
            sdsm_prefetch(B1[s] + (size_t)z0 * (size_t)sny * X, sizeof(cplx) * (size_t)nzl * (size_t)sny * X);
        }
        /* The inverse transpose feeds the y transform: each x-y plane
         * gathers its rows straight from the owners' B1 slabs (one
         * contiguous run per rank and plane, in the order prefetched) into
         * one plane-sized buffer, which stays in the cache for the y and x
         * transforms.  Only the checksum's points of it are read; the last
         * iteration's planes are kept (res) for the check. */
        for (long zl = 0; zl < nzl; zl++) {
            for (int s = 0; s < np; s++) {
                long sy0 = ylo[s], sny = ylo[s + 1] - sy0;
                const cplx *src = B1[s] + (size_t)(z0 + zl) * (size_t)sny * X;
                for (long yl = 0; yl < sny; yl++)
                    rows[sy0 + yl] = src + (size_t)yl * X;
            }
            cplx *plane = t == iters ? res + (size_t)zl * (size_t)ny * X : pbuf;
            fft_rows_from(&p.py, plane, X, X, rows, +1);
            fft_lines(&p.px, plane, 1, (size_t)ny, X, +1);
            for (int j = 1; j <= FFT_NCHECK; j++) { /* the checksum's points in this plane */
                int x, y, z;
                fft_check_point(&p, j, &x, &y, &z);
                if (z == z0 + zl)
                    samples[(size_t)(t - 1) * FFT_NCHECK + (size_t)(j - 1)] =
                        plane[(size_t)y * X + (size_t)x];
            }
        }
        sdsm_barrier(); /* B1 is read by the others until here */
    }
    double t1 = sdsm_wtime();

    /* Verification (untimed): gather the distributed result through A. */
    for (long zl = 0; zl < nzl; zl++) /* R is [z][y][x], A is [y][z][x] */
        for (long y = 0; y < ny; y++)
            memcpy(a + ((size_t)y * (size_t)nzl + (size_t)zl) * X,
                   res + ((size_t)zl * (size_t)ny + (size_t)y) * X, sizeof(cplx) * X);
    sdsm_barrier();

    int status = 0;
    if (me == 0) {
        app_header("fft", "sdsm", np, "%dx%dx%d iters=%d", nx, ny, nz, iters);
        app_time(t1 - t0);
        cplx *sums = malloc(sizeof(cplx) * (size_t)iters);
        int *owner = malloc(sizeof(int) * FFT_NCHECK); /* the rank whose planes hold point j */
        if (!sums || !owner)
            sdsm_abort(1, "fft: out of memory");
        for (int j = 0; j < FFT_NCHECK; j++) {
            int x, y, z;
            fft_check_point(&p, j + 1, &x, &y, &z);
            owner[j] = 0;
            while (owner[j] < np - 1 && z >= zlo[owner[j] + 1])
                owner[j]++;
        }
        for (int t = 0; t < iters; t++) {
            cplx s = {0, 0};
            for (int j = 0; j < FFT_NCHECK; j++) {
                const cplx *e = &samp[owner[j]][(size_t)t * FFT_NCHECK + (size_t)j];
                s.re += e->re;
                s.im += e->im;
            }
            sums[t] = s;
        }
        free(owner);
        app_result("checksum[%d] = %.15e %.15e", iters, sums[iters - 1].re, sums[iters - 1].im);
        size_t total = X * (size_t)ny * (size_t)nz;
        cplx *par = malloc(sizeof(cplx) * total), *ref = malloc(sizeof(cplx) * total);
        cplx *rsums = malloc(sizeof(cplx) * (size_t)iters);
        if (!par || !ref || !rsums)
            sdsm_abort(1, "fft: out of memory for the check");
        /* gather the result into natural layout [z][y][x] */
        for (int s = 0; s < np; s++) {
            long snz = zlo[s + 1] - zlo[s];
            for (long y = 0; y < ny; y++)
                for (long zl = 0; zl < snz; zl++)
                    memcpy(par + ((size_t)(zlo[s] + zl) * (size_t)ny + (size_t)y) * X,
                           A[s] + ((size_t)y * (size_t)snz + (size_t)zl) * X, sizeof(cplx) * X);
        }
        if (fail)
            par[total / 2].re += 1e-6;
        fft_seq_run(&p, rsums, ref);
        double d = app_max_rel_diff((const double *)par, (const double *)ref, 2 * total);
        double ds = app_max_rel_diff((const double *)sums, (const double *)rsums, 2 * (size_t)iters);
        status = app_verdict(
            d <= TOL && ds <= TOL,
            "result array and %d checksums vs sequential: max rel diff %.3g and %.3g (tolerance %.0e)", iters,
            d, ds, TOL);
        free(par);
        free(ref);
        free(rsums);
        free(sums);
    }
    free(exx);
    free(rows);
    free(pbuf);
    free(b0);
    free(res);
    free(A);
    free(samp);
    free(zlo);
    fft_prob_free(&p);
    sdsm_finalize();
    return status;
}
