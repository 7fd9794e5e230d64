/*
 * laplace_kernel.c - the sequential Jacobi algorithm (see laplace_kernel.h).
 */
#include "laplace_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void laplace_init_row(long i, long n, double *row)
{
    app_rng_t r;
    app_rng_seed(&r, 0x1a91ace00ull + (uint64_t)i);
    for (long j = 0; j < n; j++)
        row[j] = app_rng_double(&r);
}

void laplace_sweep(double *const *src, double *const *dst, long n, long lo, long hi)
{
    for (long i = lo; i < hi; i++) {
        const double *up = src[i - 1], *me = src[i], *dn = src[i + 1];
        double *out = dst[i];
        for (long j = 1; j < n - 1; j++)
            out[j] = 0.25 * (up[j] + dn[j] + me[j - 1] + me[j + 1]);
    }
}

double laplace_row_change(const double *a, const double *b, long n)
{
    double m = 0;
    for (long j = 1; j < n - 1; j++)
        m = fmax(m, fabs(a[j] - b[j]));
    return m;
}

uint64_t laplace_row_digest(const double *row, long n, double *sum)
{
    *sum = 0;
    return app_hash_doubles(APP_HASH_INIT, row, n, sum);
}

int laplace_check_digests(double *const *a, laplace_digest_t *const *dg, long n, long iters, double *sum,
                          double *resid, char *why, size_t len)
{
    double rresid, *ref = laplace_run(n, iters, &rresid, NULL), maxdiff = 0;
    long badrows = 0, badvals = 0;
    *sum = *resid = 0;
    for (long i = 0; i < n; i++) {
        double rs;
        uint64_t rh = laplace_row_digest(ref + (size_t)i * n, n, &rs);
        *sum += dg[i]->sum;
        *resid = fmax(*resid, dg[i]->change);
        if (rh != dg[i]->hash) { /* fetch the row only when it differs */
            badrows++;
            for (long j = 0; j < n; j++)
                badvals += memcmp(&a[i][j], &ref[(size_t)i * n + j], sizeof(double)) != 0;
            maxdiff = fmax(maxdiff, app_max_rel_diff(a[i], ref + (size_t)i * n, (size_t)n));
        }
    }
    free(ref);
    double rdiff = fabs(*resid - rresid) / fmax(fabs(rresid), 1.0);
    snprintf(why, len,
             "grid vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values "
             "in %ld rows not bit-identical; resid rel diff %.3g",
             maxdiff, LAPLACE_TOL, badvals, badrows, rdiff);
    return maxdiff <= LAPLACE_TOL && rdiff <= LAPLACE_TOL;
}

double *laplace_run(long n, long iters, double *resid, double *seconds)
{
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    double **ra = malloc((size_t)n * sizeof *ra), **rb = malloc((size_t)n * sizeof *rb);
    if (!a || !b || !ra || !rb) {
        fprintf(stderr, "laplace: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < n; i++) {
        ra[i] = a + (size_t)i * n;
        rb[i] = b + (size_t)i * n;
        laplace_init_row(i, n, ra[i]);
        memcpy(rb[i], ra[i], (size_t)n * sizeof *a);
    }
    double t0 = app_now();
    for (long it = 0; it < iters; it++) {
        laplace_sweep(ra, rb, n, 1, n - 1);
        double **t = ra;
        ra = rb;
        rb = t;
    }
    if (seconds)
        *seconds = app_now() - t0;
    double m = 0;
    for (long i = 1; i < n - 1; i++)
        m = fmax(m, laplace_row_change(ra[i], rb[i], n));
    *resid = m;
    double *res = ra[0], *other = rb[0];
    free(other);
    free(ra);
    free(rb);
    return res;
}
