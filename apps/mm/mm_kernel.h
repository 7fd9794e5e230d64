/*
 * mm_kernel.h - dense matrix multiply C = A x B on n x n doubles: the
 * algorithm shared by every version (seq, sdsm, omp, mpi), so that all of
 * them produce bit-identical C.
 *
 * Shape (seed 002, "mm": JIAJIA's unblocked one-dimensional matrix product,
 * changed from float to double; 2048 x 2048 double, 96 MB of shared data
 * for A, B and C): row i of C is accumulated as sum over k = 0..n-1 of
 * A[i][k] * B[k][*] (i-k-j order, no cache blocking).  Rows of A and C are
 * distributed by blocks; every process reads all of B.  The kernel works on
 * up to MM_GROUP rows of C at once so that each row of B is streamed once
 * per group instead of once per row; every element is still summed in
 * ascending k, so the grouping does not change a bit of the result.
 *
 * Sizes:
 *   small   n=128  (a few ms; runs under ctest)
 *   medium  n=3072 (7-12 s sequentially on the shared 2-core dev box; B, 72
 *           MB, no longer fits the 32 MB L3, as in the paper's runs)
 *   paper   n=2048 (seed 002 table 3)
 * Initial values: A and B pseudo-random in [-1, 1) from generators seeded
 * by matrix and row, so the owner of a row can produce it.
 */
#ifndef MM_KERNEL_H
#define MM_KERNEL_H

#include <stdint.h>

#define MM_GROUP 4
#define MM_TOL   1e-12 /* max relative difference accepted (bit-identical expected) */

void mm_init_a_row(long i, long n, double *row);
void mm_init_b_row(long k, long n, double *row);

/* Rows [lo, hi) of C = A x B; a[i], b[k], c[i] are row pointers. */
void mm_rows(double *const *a, double *const *b, double *const *c, long n, long lo, long hi);

/* Digest of a row: 64-bit hash of the bits, and the sum. */
uint64_t mm_row_digest(const double *row, long n, double *sum);

/* The self-check of the sdsm versions: each row of C's digest, written by
 * its owner into a shared table. */
typedef struct {
    uint64_t hash;
    double sum;
} mm_digest_t;

/* Rows [lo, hi) of C digested into dg; corrupt (the check's own test)
 * first changes a value of the last row. */
void mm_digest_rows(double *const *c, mm_digest_t *const *dg, long n, long lo, long hi, int corrupt);

/* Rank 0's end of an sdsm version: the sequential kernel, its digests
 * against dg (rows of c read only where they differ), and the report
 * (header "n=<n>", then " threads=<threads>" if threads > 0).  Returns the
 * exit status. */
int mm_verify(double *const *c, mm_digest_t *const *dg, long n, const char *version, int procs, int threads,
              double secs);

/* The whole algorithm, sequentially: returns C (n*n, malloc'ed, row-major);
 * *seconds (if not NULL) gets the time of the product alone. */
double *mm_run(long n, double *seconds);

#endif
