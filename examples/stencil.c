/*
 * stencil.c - heat diffusion on a shared 2-D grid (Jacobi iteration), the
 * shape of the laplace application of the papers.
 *
 * Rows are block-distributed: each rank is the home of the rows it updates,
 * so only the boundary rows travel at each barrier.  At the end rank 0
 * recomputes the whole run sequentially and compares bit for bit.
 *
 *   sdsmrun -n 4 --stats ./stencil [rows cols iterations]
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void init_grid(double *g, int rows, int cols)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            g[(size_t)i * cols + j] = (i == 0) ? 100.0 : (j == 0 ? 50.0 : 0.0);
}

static void sweep(const double *src, double *dst, int rows, int cols, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        if (i == 0 || i == rows - 1) {
            memcpy(dst + (size_t)i * cols, src + (size_t)i * cols, (size_t)cols * sizeof *dst);
            continue;
        }
        const double *up = src + (size_t)(i - 1) * cols, *me = src + (size_t)i * cols,
                     *dn = src + (size_t)(i + 1) * cols;
        double *out = dst + (size_t)i * cols;
        out[0] = me[0];
        out[cols - 1] = me[cols - 1];
        for (int j = 1; j < cols - 1; j++)
            out[j] = 0.25 * (up[j] + dn[j] + me[j - 1] + me[j + 1]);
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int rows = argc > 1 ? atoi(argv[1]) : 512;
    int cols = argc > 2 ? atoi(argv[2]) : 512;
    int iters = argc > 3 ? atoi(argv[3]) : 100;
    int me = sdsm_rank(), n = sdsm_nprocs();
    if (rows < 3 || cols < 3 || iters < 1)
        sdsm_abort(2, "usage: stencil [rows>=3 cols>=3 iterations>=1]");
    size_t bytes = (size_t)rows * cols * sizeof(double);
    double *a = sdsm_alloc(bytes, SDSM_HOME_BLOCK);
    double *b = sdsm_alloc(bytes, SDSM_HOME_BLOCK);
    /* Rows are split on page boundaries of the block-homed arrays' pages
     * only approximately; correctness does not depend on it. */
    int lo = (int)((long)rows * me / n), hi = (int)((long)rows * (me + 1) / n);
    if (me == 0)
        init_grid(a, rows, cols);
    sdsm_barrier();
    double t0 = sdsm_wtime();
    for (int it = 0; it < iters; it++) {
        sweep(a, b, rows, cols, lo, hi);
        sdsm_barrier();
        double *t = a;
        a = b;
        b = t;
    }
    double t1 = sdsm_wtime();
    int status = 0;
    if (me == 0) {
        double *s = malloc(bytes), *d = malloc(bytes);
        init_grid(s, rows, cols);
        for (int it = 0; it < iters; it++) {
            sweep(s, d, rows, cols, 0, rows);
            double *t = s;
            s = d;
            d = t;
        }
        size_t bad = 0;
        double sum = 0;
        for (size_t k = 0; k < (size_t)rows * cols; k++) {
            bad += memcmp(&s[k], &a[k], sizeof(double)) != 0;
            sum += a[k];
        }
        printf("stencil %dx%d, %d iterations on %d ranks: %.3f s, checksum %.6f\n", rows, cols, iters, n,
               t1 - t0, sum);
        printf("%s: %zu of %zu values differ from the sequential run\n", bad ? "FAILED" : "PASSED", bad,
               (size_t)rows * cols);
        status = bad != 0;
        free(s);
        free(d);
    }
    sdsm_finalize();
    return status;
}
