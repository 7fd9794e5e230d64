/*
 * laplace_kernel.h - Jacobi iteration for the Laplace equation on an n x n
 * grid of doubles: the algorithm shared by every version (seq, sdsm, omp,
 * mpi), so that all of them compute bit-identical grids.
 *
 * Shape (seeds 001, 003, 004): two arrays, src and dst; each iteration
 * replaces every interior point of dst by the mean of its four neighbours
 * in src, then the arrays swap.  Boundary rows and columns keep their
 * initial values.  A fixed number of iterations is run; the "residual"
 * reported is max |u_new - u_old| over the last iteration (a max, so it is
 * exact whatever order the ranks combine it in).
 *
 * Sizes (n = points per side including the boundary):
 *   small   n=256,  50 iterations  (a few ms; runs under ctest)
 *   medium  n=4096, 600 iterations (6-11 s sequentially on the shared 2-core
 *           dev box; two 128 MB arrays, so memory-bound like the papers' runs)
 *   paper   n=1024, 50 iterations  - seed 003 (SCASH) uses a 1022 x 1022
 *           interior with 50 iterations and seed 004 (Omni/SCASH) a
 *           1024 x 1024 matrix with 50 iterations: both are n=1024 here
 *           (1022 interior points + 2 boundary).  Seed 001 used 2000 x 2000,
 *           50 iterations: --size paper --n 2000.
 * Initial values: every point (boundary included) is a pseudo-random number
 * in [0, 1) from a generator seeded by its row, so any row can be produced
 * by whoever owns it, and errors anywhere in the grid change the result.
 */
#ifndef LAPLACE_KERNEL_H
#define LAPLACE_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define LAPLACE_TOL 1e-12 /* max relative difference accepted (bit-identical expected) */

/* Initial values of row i (n points). */
void laplace_init_row(long i, long n, double *row);

/* One sweep over rows [lo, hi) (callers pass 1 <= lo, hi <= n-1): interior
 * points of dst[i] from src[i-1], src[i], src[i+1].  Row pointers, so the
 * rows may live anywhere (contiguous, per-rank chunks, halo buffers). */
void laplace_sweep(double *const *src, double *const *dst, long n, long lo, long hi);

/* max |a[j] - b[j]| over interior points j of a row (0 for boundary rows). */
double laplace_row_change(const double *a, const double *b, long n);

/* Digest of a row: a 64-bit hash of its bit pattern and the sum of its values. */
uint64_t laplace_row_digest(const double *row, long n, double *sum);

/* What a version with shared rows publishes per row for the check (sdsm,
 * sdsmt): the row's digest and its change in the last iteration. */
typedef struct {
    uint64_t hash;
    double sum;
    double change; /* max |u_new - u_old| over the row in the last iteration */
} laplace_digest_t;

/* Check a parallel result against the sequential kernel by the rows'
 * digests, reading a row of a in full only when its digest differs (so the
 * check does not move the whole grid).  Sets the grid's *sum and *resid as
 * the digests give them and the verdict's text in why[len]; returns 1 if
 * the result is right. */
int laplace_check_digests(double *const *a, laplace_digest_t *const *dg, long n, long iters, double *sum,
                          double *resid, char *why, size_t len);

/* The whole algorithm, sequentially.  Returns the final grid (n*n,
 * malloc'ed, row-major), sets *resid and (if not NULL) *seconds to the time
 * of the iterations alone.  Used by laplace_seq and by the parallel
 * versions' check. */
double *laplace_run(long n, long iters, double *resid, double *seconds);

#endif
