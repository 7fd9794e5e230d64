/*
 * lu_kernel.h - blocked dense LU factorization without pivoting, the
 * algorithm every version of lu shares (seeds 002 and 003: SPLASH-2 LU with
 * contiguous blocks).
 *
 * The n x n matrix is cut into nb x nb blocks of b x b doubles; every block is
 * stored contiguously (row-major inside the block) and reached through a
 * table of nb*nb block pointers, so the versions may place blocks wherever
 * they like (the sdsm version puts each block at the rank that owns it).
 * Right-looking factorization, step k = 0 .. nb-1:
 *   factor the diagonal block (k,k) in place (L unit lower, U upper);
 *   perimeter: (k,j) <- L_kk^-1 (k,j) and (i,k) <- (i,k) U_kk^-1, i,j > k;
 *   interior:  (i,j) <- (i,j) - (i,k) (k,j),  i,j > k.
 * Every block receives its updates in the same order (k ascending) in every
 * version, so the parallel results equal the sequential ones bit for bit; the
 * checks still allow a relative tolerance (LU_TOL).
 *
 * The matrix: a(i,j) uniform in [0,1), plus n on the diagonal, which makes it
 * strictly diagonally dominant, so elimination without pivoting is stable.
 *
 * Sizes (--n, --b override them):
 *   small  n=256,  b=32: 8x8 blocks, well under 0.1 s, for ctest;
 *   medium n=6144, b=32: ~14 s sequentially on the 2-core test machine;
 *   paper  n=2048, b=32: seed 002 table 3 "2048 x 2048 double, 32 blocks",
 *          read as 32x32-double blocks (8 KB, two pages each: the "blocks are
 *          page multiples" reading; SCASH in seed 003 used 64x64 blocks).
 */
#ifndef LU_KERNEL_H
#define LU_KERNEL_H

#include <stdint.h>

#define LU_TOL  1e-12  /* relative tolerance of the parallel-vs-sequential check */
#define LU_SEED 20020u /* default matrix seed */

typedef struct {
    long n;  /* matrix order */
    long b;  /* block order */
    long nb; /* blocks per dimension, n / b */
    uint64_t seed;
} lu_dims_t;

/* Reads --size/--n/--b/--seed; exits with a message on a bad combination. */
lu_dims_t lu_dims_from_args(int argc, char **argv);

/* Fill block (I,J) with the matrix entries. */
void lu_init_block(double *blk, const lu_dims_t *d, long I, long J);

/* The four block operations (b x b blocks). */
void lu_factor_diag(double *a, long b);
void lu_solve_row(const double *diag, double *blk, long b);          /* blk <- L^-1 blk */
void lu_solve_col(const double *diag, double *blk, long b);          /* blk <- blk U^-1 */
void lu_update(double *c, const double *l, const double *u, long b); /* c -= l u */

/* A private matrix in contiguous blocks: one allocation plus the table. */
typedef struct {
    double *data;
    double **blk; /* blk[I * nb + J] */
} lu_matrix_t;

int lu_matrix_alloc(lu_matrix_t *m, const lu_dims_t *d);
void lu_matrix_free(lu_matrix_t *m);
void lu_matrix_init(lu_matrix_t *m, const lu_dims_t *d);

/* The sequential factorization, in place. */
void lu_factor_seq(double **blk, const lu_dims_t *d);

/* Sum of one block's elements in storage order; the result checksum is the
 * sum of these over blocks in (I,J) order, the same in every version. */
double lu_block_sum(const double *blk, long b);
double lu_checksum(double *const *blk, const lu_dims_t *d);

/* max |L U - A| / max |A| of a factored matrix (O(n^3): for small n). */
double lu_residual(double *const *blk, const lu_dims_t *d);

#endif
