/*
 * mm_kernel.c - the sequential matrix product, and the digest check of the
 * sdsm versions against it (see mm_kernel.h).
 */
#include "mm_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

static void init_row(uint64_t seed, long n, double *row)
{
    app_rng_t r;
    app_rng_seed(&r, seed);
    for (long j = 0; j < n; j++)
        row[j] = 2.0 * app_rng_double(&r) - 1.0;
}

void mm_init_a_row(long i, long n, double *row) { init_row(0xa0000000ull + (uint64_t)i, n, row); }
void mm_init_b_row(long k, long n, double *row) { init_row(0xb0000000ull + (uint64_t)k, n, row); }

void mm_rows(double *const *a, double *const *b, double *const *c, long n, long lo, long hi)
{
    long i = lo;
    for (; i + MM_GROUP <= hi; i += MM_GROUP) {
        double *c0 = c[i], *c1 = c[i + 1], *c2 = c[i + 2], *c3 = c[i + 3];
        const double *a0 = a[i], *a1 = a[i + 1], *a2 = a[i + 2], *a3 = a[i + 3];
        memset(c0, 0, (size_t)n * sizeof *c0);
        memset(c1, 0, (size_t)n * sizeof *c1);
        memset(c2, 0, (size_t)n * sizeof *c2);
        memset(c3, 0, (size_t)n * sizeof *c3);
        for (long k = 0; k < n; k++) {
            const double *bk = b[k];
            double x0 = a0[k], x1 = a1[k], x2 = a2[k], x3 = a3[k];
            for (long j = 0; j < n; j++) {
                double y = bk[j];
                c0[j] += x0 * y;
                c1[j] += x1 * y;
                c2[j] += x2 * y;
                c3[j] += x3 * y;
            }
        }
    }
    for (; i < hi; i++) {
        double *ci = c[i];
        const double *ai = a[i];
        memset(ci, 0, (size_t)n * sizeof *ci);
        for (long k = 0; k < n; k++) {
            const double *bk = b[k];
            double x = ai[k];
            for (long j = 0; j < n; j++)
                ci[j] += x * bk[j];
        }
    }
}

uint64_t mm_row_digest(const double *row, long n, double *sum)
{
    *sum = 0;
    return app_hash_doubles(APP_HASH_INIT, row, n, sum);
}

double *mm_run(long n, double *seconds)
{
    size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    double **ra = malloc((size_t)n * sizeof *ra), **rb = malloc((size_t)n * sizeof *rb),
           **rc = malloc((size_t)n * sizeof *rc);
    if (!a || !b || !c || !ra || !rb || !rc) {
        fprintf(stderr, "mm: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < n; i++) {
        ra[i] = a + (size_t)i * n;
        rb[i] = b + (size_t)i * n;
        rc[i] = c + (size_t)i * n;
        mm_init_a_row(i, n, ra[i]);
        mm_init_b_row(i, n, rb[i]);
    }
    double t0 = app_now();
    mm_rows(ra, rb, rc, n, 0, n);
    if (seconds)
        *seconds = app_now() - t0;
    free(a);
    free(b);
    free(ra);
    free(rb);
    free(rc);
    return c;
}

void mm_digest_rows(double *const *c, mm_digest_t *const *dg, long n, long lo, long hi, int corrupt)
{
    if (corrupt && hi > lo)
        c[hi - 1][n / 2] *= 1.001;
    for (long i = lo; i < hi; i++)
        dg[i]->hash = mm_row_digest(c[i], n, &dg[i]->sum);
}

int mm_verify(double *const *c, mm_digest_t *const *dg, long n, const char *version, int procs, int threads,
              double secs)
{
    double *ref = mm_run(n, NULL);
    double sum = 0, maxdiff = 0;
    long badrows = 0, badvals = 0;
    for (long i = 0; i < n; i++) {
        double rs;
        uint64_t rh = mm_row_digest(ref + (size_t)i * n, n, &rs);
        sum += dg[i]->sum;
        if (rh != dg[i]->hash) { /* fetch the row only when it differs */
            badrows++;
            for (long j = 0; j < n; j++)
                badvals += memcmp(&c[i][j], &ref[(size_t)i * n + j], sizeof(double)) != 0;
            maxdiff = fmax(maxdiff, app_max_rel_diff(c[i], ref + (size_t)i * n, (size_t)n));
        }
    }
    if (threads > 0)
        app_header("mm", version, procs, "n=%ld threads=%d", n, threads);
    else
        app_header("mm", version, procs, "n=%ld", n);
    app_time(secs);
    app_result("checksum=%.12e", sum);
    int status = app_verdict(maxdiff <= MM_TOL,
                             "C vs sequential kernel: max rel diff %.3g (tolerance %g), %ld values in "
                             "%ld rows not bit-identical",
                             maxdiff, MM_TOL, badvals, badrows);
    free(ref);
    return status;
}
