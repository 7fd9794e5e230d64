/*
 * sor_kernel.h - red-black successive over-relaxation on a grid of floats:
 * the algorithm shared by every version (seq, sdsm, omp, mpi), so that all
 * of them perform the same float operations in the same order and produce
 * bit-identical grids.
 *
 * Shape (seed 002, "sor": red-black SOR, 2048 x (1024 x 2) float, 100
 * iterations, 16 MB, 2 barriers per iteration): a grid of R rows and 2W
 * columns is coloured like a checkerboard, point (i, x) red when i + x is
 * even.  The colours are stored as two R x W arrays: red[i][j] is point
 * (i, 2j + i%2), black[i][j] is point (i, 2j + 1 - i%2).  Every neighbour
 * of a red point is black and vice versa, so an iteration is two phases:
 * all interior red points from their black neighbours, then all interior
 * black points from their red neighbours, each phase followed by a barrier.
 * Update: v = (1 - w) v + (w / 4) (up + down + left + right), in float, with
 * w = SOR_OMEGA; the sum is evaluated left to right in every version.
 * Boundary points (rows 0 and R-1, columns 0 and 2W-1) keep their values.
 * Initial values: pseudo-random in [0, 1) from a generator seeded by row.
 *
 * Sizes (R rows, W points per colour per row, so 2W columns):
 *   small   R=256,  W=128,  20 iterations (a few ms; runs under ctest)
 *   medium  R=4096, W=2048, 800 iterations (6-8 s sequentially on the shared
 *           2-core dev box; 64 MB of float)
 *   paper   R=2048, W=1024, 100 iterations (seed 002 table 3: 16 MB of
 *           float; one row of one colour is exactly one 4 KB page)
 */
#ifndef SOR_KERNEL_H
#define SOR_KERNEL_H

#include <stdint.h>

#define SOR_OMEGA 1.25f
#define SOR_TOL   1e-5 /* max relative difference accepted (bit-identical expected) */

/* Initial values of row i: W red and W black points. */
void sor_init_row(long i, long w, float *red, float *black);

/* Red phase for row i (1 <= i <= R-2): interior red points of `red` from
 * the black rows i-1, i, i+1.  Black phase likewise with the colours
 * swapped: sor_black_row(i, w, black_i, red_{i-1}, red_i, red_{i+1}). */
void sor_red_row(long i, long w, float *red, const float *up, const float *mid, const float *dn);
void sor_black_row(long i, long w, float *black, const float *up, const float *mid, const float *dn);

/* One phase over rows [lo, hi) (1 <= lo, hi <= R-1): row pointers, so the
 * rows may live anywhere.  color 0 = red (reads black), 1 = black. */
void sor_phase(int color, float *const *red, float *const *black, long w, long lo, long hi);

/* Digest of a row (both colours): 64-bit hash of the bits, and the sum. */
uint64_t sor_row_digest(const float *red, const float *black, long w, double *sum);

/*
 * Memory layout of a block of n rows of both colours, used by every
 * version for the rows it updates: the n red rows first, then a gap of
 * n/2 rows, then the n black rows; sor_block_floats(n, w) floats in all,
 * black row i at sor_black_offset(n, w) + i * w.  The kernel writes a row of
 * one colour while it reads the same columns of the other; when the two
 * arrays are a multiple of 32 MB apart (two 32 MB grids allocated one after
 * the other at the medium size) every sweep on the AMD machine this was
 * measured on ran 1.6x slower than at 40 or 48 MB.  The gap keeps the
 * distance 1.5 x the block, away from any power of two, whatever the size.
 */
long sor_black_offset(long n, long w);
long sor_block_floats(long n, long w);

/* The whole algorithm, sequentially: returns the red (R*W) and the black
 * (R*W) grid in *red / *black, both in one malloc'ed block laid out as
 * above (free(*red) frees both); *seconds (if not NULL) gets the time of the
 * iterations alone. */
void sor_run(long r, long w, long iters, float **red, float **black, double *seconds);

#endif
