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

#define CG_TOL  1e-10 /* relative tolerance of the parallel-vs-sequential check */
#define CG_SEED 314159u

typedef struct {
    long n;     /* matrix order */
    long nzr;   /* random partners drawn per row */
    long niter; /* outer (power) iterations */
    long cgit;  /* CG iterations per solve */
    double shift;
    uint64_t seed;
} cg_params_t;

/* Reads --size and the overrides; exits with a message on bad values. */
cg_params_t cg_params_from_args(int argc, char **argv);

/* Rows [lo, hi) of A in CSR form; col[] indexes the full vector (a parallel
 * version may renumber it to its own vector layout). */
typedef struct {
    long lo, hi;
    long *rowptr; /* hi - lo + 1 entries, from 0 */
    int *col;
    double *val;
} cg_csr_t;

int cg_build_rows(const cg_params_t *p, long lo, long hi, cg_csr_t *a);
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

int cg_result_alloc(cg_result_t *r, const cg_params_t *p);
void cg_result_free(cg_result_t *r);

/* The whole algorithm in one process, dot products blocked over nparts.
 * Builds its own matrix; returns the seconds spent after the build. */
double cg_run_seq(const cg_params_t *p, int nparts, cg_result_t *res);

/* Largest relative difference between two results (zeta, rnorm, z). */
double cg_compare(const cg_result_t *a, const cg_result_t *ref, const cg_params_t *p);

/*
 * The end of every parallel version, in one process after the timed part:
 * --corrupt's deliberate error into got (if corrupt), the sequential kernel
 * with nparts parts, the comparison, and the report (header with the sizes
 * and then extra, if not empty; time; result; verdict).  Returns the exit
 * status, or -1 when out of memory (the caller says so its own way).
 */
int cg_verify(const cg_params_t *p, const char *version, int procs, const char *extra, int nparts,
              cg_result_t *got, long corrupt, double secs);

#define CG_NSUM 4 /* the most sums one reduction adds (cg_iterate adds up to 3) */

/*
 * One process's or thread's share of the algorithm, and how the shares
 * combine: what the versions differ in.  A version holds rows [lo, lo + m)
 * of every vector; p is also readable whole (A p reads it at any column).
 */
typedef struct {
    const cg_csr_t *a;     /* my rows, columns in p's layout */
    long m;                /* my row count */
    double *x, *z, *r, *q; /* my rows of each */
    double *pm;            /* my rows of p, inside p */
    const double *p;       /* all of p */
    const double *z_all;   /* all of z, if A z can read it there; NULL: z goes through p */
    int nparts;            /* > 0: all rows in one process, dot products blocked over
                               * nparts (the sequential kernel); 0: a share of a parallel run */
    double *zeta, *rnorm;  /* where the results go (niter each), or NULL */
    void *ctx;             /* the version's, passed to the hooks */
    /* Adds k partial sums over all shares in share order into tot, the
     * same in every share; NULL: tot = part (one share). */
    void (*reduce)(void *ctx, const double *part, double *tot, int k);
    /* My rows of p are written (a barrier), or NULL. */
    void (*p_written)(void *ctx);
    /* A p is about to read all of p (touch the pages, gather), or NULL. */
    void (*p_needed)(void *ctx);
} cg_share_t;

/* The outer iterations from x = 1, each a CG solve of A z = x and its
 * zeta, rnorm; z holds the last solve's result.  The arithmetic is the same
 * in every version, in the same order: only the sums over shares differ. */
void cg_iterate(const cg_params_t *p, const cg_share_t *s);

#endif
