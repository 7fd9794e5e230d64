/*
 * fft_kernel.h - the 3-D complex FFT benchmark (the shape of NPB FT), plain C.
 *
 * Problem: a complex nx*ny*nz array u (nx, ny, nz powers of two) filled with
 * deterministic random numbers is transformed forward once; then, for
 * t = 1..iters, the spectrum is "evolved" (multiplied elementwise by
 * exp(-4 alpha pi^2 t |k|^2), scaled by 1/(nx ny nz)), transformed back, and
 * a checksum of 1024 sampled elements of the result is recorded.
 * A 3-D FFT is 1-D FFTs (our own iterative radix-2) along x, y and z.
 *
 * Every version uses the functions here, so the floating-point operations on
 * each element are the same ones, in the same order, in every version.
 */
#ifndef FFT_KERNEL_H
#define FFT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double re, im;
} cplx;

/* A 1-D transform of length n: twiddles and bit reversal. */
typedef struct {
    int n, logn;
    cplx *w;  /* w[k] = exp(-2 pi i k / n), k < n/2 */
    int *rev; /* bit reversal permutation */
} fft_plan;

typedef struct {
    int nx, ny, nz, iters;
    double alpha;
    uint64_t seed;
    fft_plan px, py, pz;
} fft_prob;

#define FFT_NCHECK 1024 /* sampled elements per checksum (NPB FT's 1024) */

/* Sizes: small / medium / paper presets; the paper size is seed 002's
 * "128 x 128 x 128, 6 iterations" (table 3). */
int fft_prob_init(fft_prob *p, int nx, int ny, int nz, int iters); /* 0 or -1 (not powers of 2) */
void fft_prob_free(fft_prob *p);

/*
 * FFT of `count` lines: element k of line c is at data[c * cstride + k * stride].
 * dir = -1 forward, +1 backward (no scaling).  When cstride == 1 and count > 1
 * the butterflies run across the lines (rows of `count` contiguous elements),
 * which keeps strided transforms cache friendly.
 */
void fft_lines(const fft_plan *pl, cplx *data, size_t stride, size_t count, size_t cstride, int dir);
/*
 * The same transform as fft_lines(pl, data, stride, count, 1, dir), whose
 * input is gathered on the way: row i of the input (count elements) is
 * src[i], wherever it is.  The gather is the bit-reversal pass, so a
 * transpose that feeds a transform costs no copy of its own, and the
 * arithmetic is the same as copying first (bit-identical results).
 */
void fft_rows_from(const fft_plan *pl, cplx *data, size_t stride, size_t count, const cplx *const *src,
                   int dir);
/*
 * Copy n elements (a row of a transpose) with a plain loop.  In fft_sdsm
 * (P=1, medium) the rows' memcpy calls took 2.8 s (perf) and the run
 * 11.3 s; with this loop the copies take 0.8 s and the run 9.1-10.0 s.  Why
 * is not settled: copied alone, in the same bit-reversed order, memcpy is
 * as fast as the loop or faster, so it is likely what each leaves in the
 * cache for the butterflies that follow.
 */
void fft_copy_row(cplx *dst, const cplx *src, size_t n);

/* Initial values of plane z: element (x, y) is written to base[y * ystride + x]. */
void fft_init_plane(const fft_prob *p, int z, cplx *base, size_t ystride);

/* Evolve factors for time step t (1..iters): ex_d[i] = exp(-4 alpha pi^2 t i'^2)
 * with i' the signed frequency of index i.  Each table has n_d entries. */
void fft_evolve_tables(const fft_prob *p, int t, double *exx, double *exy, double *exz);
/* out[x] = in[x] * (ex_z[z] * ex_y[y] / N) * ex_x[x] for one x row. */
void fft_evolve_row(const fft_prob *p, const double *exx, const double *exy, const double *exz, int y, int z,
                    const cplx *in, cplx *out);

/* Sample j (1..FFT_NCHECK) of the checksum is element (x, y, z) below. */
static inline void fft_check_point(const fft_prob *p, int j, int *x, int *y, int *z)
{
    *x = j % p->nx;
    *y = (3 * j) % p->ny;
    *z = (5 * j) % p->nz;
}

/*
 * The sequential algorithm on natural layout u[z][y][x] (x fastest).
 * fft_seq_init fills u with the initial values; fft_seq_compute transforms
 * u forward in place, runs the iterations into v (both nx*ny*nz elements) and
 * fills sums[t-1] (t = 1..iters) with the checksums: v ends as the result of
 * the last iteration.  fft_seq_run does both on arrays of its own and copies
 * the result to `final` if it is not NULL.
 */
void fft_seq_init(const fft_prob *p, cplx *u);
void fft_seq_compute(const fft_prob *p, cplx *u, cplx *v, cplx *sums);
void fft_seq_run(const fft_prob *p, cplx *sums, cplx *final);

#endif
