/*
 * sor_kernel.c - the sequential red-black SOR algorithm (see sor_kernel.h).
 */
#include "sor_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void sor_init_row(long i, long w, float *red, float *black)
{
    app_rng_t r;
    app_rng_seed(&r, 0x50200000ull + (uint64_t)i);
    for (long j = 0; j < w; j++) {
        red[j] = (float)app_rng_double(&r);
        black[j] = (float)app_rng_double(&r);
    }
}

/* Interior points j in [jlo, jhi) of out: left neighbour mid[j - 1 + s],
 * right neighbour mid[j + s].  out is a row of one colour and up, mid, dn
 * rows of the other, so they never overlap; saying so (restrict) lets the
 * compiler vectorize the loop (same arithmetic, element by element). */
static void relax(float *restrict out, const float *restrict up, const float *restrict mid,
                  const float *restrict dn, long jlo, long jhi, long s)
{
    const float a = 1.0f - SOR_OMEGA, b = SOR_OMEGA / 4.0f;
    for (long j = jlo; j < jhi; j++) {
        float sum = up[j] + dn[j] + mid[j - 1 + s] + mid[j + s];
        out[j] = a * out[j] + b * sum;
    }
}

/* Row i: its colour-c points sit at x = 2j + p with p = (i + c) % 2; the
 * interior ones are 1 <= x <= 2W-2, i.e. j in [1-p, W-p) (p=0: [1, W),
 * p=1: [0, W-1)); the other colour's left/right neighbours are at j-1+p and
 * j+p. */
void sor_red_row(long i, long w, float *red, const float *up, const float *mid, const float *dn)
{
    long p = i & 1;
    relax(red, up, mid, dn, 1 - p, w - p, p);
}

void sor_black_row(long i, long w, float *black, const float *up, const float *mid, const float *dn)
{
    long p = 1 - (i & 1);
    relax(black, up, mid, dn, 1 - p, w - p, p);
}

void sor_phase(int color, float *const *red, float *const *black, long w, long lo, long hi)
{
    for (long i = lo; i < hi; i++) {
        if (color == 0)
            sor_red_row(i, w, red[i], black[i - 1], black[i], black[i + 1]);
        else
            sor_black_row(i, w, black[i], red[i - 1], red[i], red[i + 1]);
    }
}

uint64_t sor_row_digest(const float *red, const float *black, long w, double *sum)
{
    *sum = 0;
    return app_hash_floats(app_hash_floats(APP_HASH_INIT, red, w, sum), black, w, sum);
}

long sor_black_offset(long n, long w) { return (n + n / 2) * w; }

long sor_block_floats(long n, long w) { return sor_black_offset(n, w) + n * w; }

void sor_run(long r, long w, long iters, float **red, float **black, double *seconds)
{
    float *rd = malloc((size_t)sor_block_floats(r, w) * sizeof *rd);
    float *bk = rd ? rd + sor_black_offset(r, w) : NULL;
    float **rr = malloc((size_t)r * sizeof *rr), **rb = malloc((size_t)r * sizeof *rb);
    if (!rd || !rr || !rb) {
        fprintf(stderr, "sor: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < r; i++) {
        rr[i] = rd + (size_t)i * w;
        rb[i] = bk + (size_t)i * w;
        sor_init_row(i, w, rr[i], rb[i]);
    }
    double t0 = app_now();
    for (long it = 0; it < iters; it++) {
        sor_phase(0, rr, rb, w, 1, r - 1);
        sor_phase(1, rr, rb, w, 1, r - 1);
    }
    if (seconds)
        *seconds = app_now() - t0;
    free(rr);
    free(rb);
    *red = rd;
    *black = bk;
}
