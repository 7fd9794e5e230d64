/*
 * cg_kernel.h - conjugate gradient on a random sparse symmetric positive
 * definite matrix, in the shape of NPB CG (seed 001): an outer inverse power
 * iteration, each step solving A z = x with a fixed number of CG iterations,
 * then zeta = shift + 1 / (x.z), rnorm = |x - A z|, x = z / |z|.
 *
 * The matrix (our own construction, not NPB's makea): row r draws nzr random
 * partners j != r with values in [0,1) from an app_rng stream seeded by r;
 * each draw (r, j, v) adds v at (r,j) and at (j,r), so A is symmetric; equal
 * positions are summed.  The diagonal is sum_j |a_rj| + 1, so A is strictly
 * diagonally dominant with a positive diagonal: symmetric positive definite.
 * A row's entries do not depend on which rows a process builds.  Access to
 * the CG direction p in A p is irregular: about 2 nzr + 1 random columns per
 * row over the whole vector.
 *
 * Floating point: every version computes a dot product as partial sums over
 * the rows of each part of a block partition (app_block), in row order, then
 * adds the parts in part order (cg_sum_parts).  The sequential kernel takes
 * the number of parts, so a parallel run on P processes is checked against
 * the sequential kernel run with P parts: the results agree bit for bit (no
 * FMA contraction on the default x86-64 target); the check allows CG_TOL.
 *
 * Sizes (--n, --nzr, --niter, --cgit, --shift override them):
 *   small  n=2000,  nzr=8,  3 x 25 iterations: ~10 ms, for ctest;
 *   medium n=75000, nzr=91, 25 x 25 iterations: NPB class B's order and
 *          density (~183 nonzeros per row), fewer outer iterations (B: 75);
 *          ~9 s sequentially on the 2-core test machine;
 *   paper  n=14000, nzr=66, 15 x 25 iterations, shift 20: NPB class A, the
 *          size seed 001 ran (~133 nonzeros per row, 1.86 M in all, close to
 *          class A's ~1.85 M).
 */
#ifndef CG_KERNEL_H
#define CG_KERNEL_H

#include <stdint.h>

#define CG_TOL 1e-10 /* relative tolerance of the parallel-vs-sequential check */
#define CG_SEED 314159u

typedef struct {
    long     n;     /* matrix order */
    long     nzr;   /* random partners drawn per row */
    long     niter; /* outer (power) iterations */
    long     cgit;  /* CG iterations per solve */
    double   shift;
    uint64_t seed;
} cg_params_t;

/* Reads --size and the overrides; exits with a message on bad values. */
cg_params_t cg_params_from_args(int argc, char **argv);

/* Rows [lo, hi) of A in CSR form; col[] indexes the full vector (a parallel
 * version may renumber it to its own vector layout). */
typedef struct {
    long    lo, hi;
    long   *rowptr; /* hi - lo + 1 entries, from 0 */
    int    *col;
    double *val;
} cg_csr_t;

int  cg_build_rows(const cg_params_t *p, long lo, long hi, cg_csr_t *a);
void cg_csr_free(cg_csr_t *a);

/* y[0 .. hi-lo) = rows of A times x. */
void cg_spmv(const cg_csr_t *a, const double *x, double *y);
/* Partial sums over m elements, in index order. */
double cg_dot(const double *a, const double *b, long m);
double cg_diff2(const double *a, const double *b, long m); /* sum (a-b)^2 */
/* Parts added in part order, starting from 0. */
double cg_sum_parts(const double *parts, int nparts, int stride);

/* The results: per outer iteration zeta and rnorm, and the last z. */
typedef struct {
    double *zeta, *rnorm; /* niter each */
    double *z;            /* n */
} cg_result_t;

int  cg_result_alloc(cg_result_t *r, const cg_params_t *p);
void cg_result_free(cg_result_t *r);

/* The whole algorithm in one process, dot products blocked over nparts.
 * Builds its own matrix; returns the seconds spent after the build. */
double cg_run_seq(const cg_params_t *p, int nparts, cg_result_t *res);

/* Largest relative difference between two results (zeta, rnorm, z). */
double cg_compare(const cg_result_t *a, const cg_result_t *ref, const cg_params_t *p);

#endif
