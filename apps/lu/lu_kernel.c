/*
 * lu_kernel.c - the block operations and the sequential blocked LU.
 *
 * lu_update is where the time goes (2 b^3 flops per call).  It keeps a 2 x 8
 * tile of C in registers while it runs down k; each element still gets its
 * updates in k order, c - l0 u0 - l1 u1 - ..., exactly like the naive loop.
 */
#include "lu_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

lu_dims_t lu_dims_from_args(int argc, char **argv)
{
    lu_dims_t d;
    d.n = app_pick(argc, argv, "n", 256, 6144, 2048);
    d.b = app_pick(argc, argv, "b", 32, 32, 32);
    d.seed = (uint64_t)app_opt_long(argc, argv, "seed", LU_SEED);
    if (d.n < 1 || d.b < 1 || d.n % d.b != 0) {
        fprintf(stderr, "lu: --n (%ld) must be a positive multiple of --b (%ld)\n", d.n, d.b);
        exit(2);
    }
    d.nb = d.n / d.b;
    return d;
}

/* Element (i,j) of the input matrix, independent of any partition. */
static double entry(const lu_dims_t *d, long i, long j)
{
    app_rng_t r;
    app_rng_seed(&r, d->seed ^ ((uint64_t)i * (uint64_t)d->n + (uint64_t)j) * 0xD6E8FEB86659FD93ull);
    double v = app_rng_double(&r);
    return i == j ? v + (double)d->n : v;
}

void lu_init_block(double *blk, const lu_dims_t *d, long I, long J)
{
    long b = d->b;
    for (long r = 0; r < b; r++)
        for (long c = 0; c < b; c++)
            blk[r * b + c] = entry(d, I * b + r, J * b + c);
}

void lu_factor_diag(double *a, long b)
{
    for (long k = 0; k < b; k++) {
        const double *rk = a + k * b;
        for (long i = k + 1; i < b; i++) {
            double *ri = a + i * b;
            double l = ri[k] / rk[k];
            ri[k] = l;
            for (long j = k + 1; j < b; j++)
                ri[j] -= l * rk[j];
        }
    }
}

void lu_solve_row(const double *diag, double *blk, long b)
{
    /* Forward substitution with the unit lower triangle, whole rows at once. */
    for (long k = 0; k < b; k++) {
        const double *rk = blk + k * b;
        for (long i = k + 1; i < b; i++) {
            double l = diag[i * b + k];
            double *ri = blk + i * b;
            for (long j = 0; j < b; j++)
                ri[j] -= l * rk[j];
        }
    }
}

void lu_solve_col(const double *diag, double *blk, long b)
{
    /* Each row x of blk solves x U = a, column by column. */
    for (long r = 0; r < b; r++) {
        double *x = blk + r * b;
        for (long k = 0; k < b; k++) {
            const double *uk = diag + k * b;
            double v = x[k] / uk[k];
            x[k] = v;
            for (long j = k + 1; j < b; j++)
                x[j] -= v * uk[j];
        }
    }
}

/* C rows i0, i0+1, columns j0 .. j0+7: the register tile. */
static inline void tile2x8(double *restrict c, const double *restrict l, const double *restrict u, long b,
                           long i0, long j0)
{
    double a0[8], a1[8];
    double *c0 = c + i0 * b + j0, *c1 = c0 + b;
    for (int j = 0; j < 8; j++) {
        a0[j] = c0[j];
        a1[j] = c1[j];
    }
    const double *l0 = l + i0 * b, *l1 = l0 + b;
    for (long k = 0; k < b; k++) {
        const double *uk = u + k * b + j0;
        double x0 = l0[k], x1 = l1[k];
        for (int j = 0; j < 8; j++) {
            a0[j] -= x0 * uk[j];
            a1[j] -= x1 * uk[j];
        }
    }
    for (int j = 0; j < 8; j++) {
        c0[j] = a0[j];
        c1[j] = a1[j];
    }
}

void lu_update(double *restrict c, const double *restrict l, const double *restrict u, long b)
{
    long i2 = b & ~1L, j8 = b & ~7L;
    for (long i = 0; i < i2; i += 2)
        for (long j = 0; j < j8; j += 8)
            tile2x8(c, l, u, b, i, j);
    /* Leftover columns (b not a multiple of 8) and the last odd row. */
    for (long i = 0; i < b; i++)
        for (long j = (i < i2 ? j8 : 0); j < b; j++) {
            double s = c[i * b + j];
            for (long k = 0; k < b; k++)
                s -= l[i * b + k] * u[k * b + j];
            c[i * b + j] = s;
        }
}

int lu_matrix_alloc(lu_matrix_t *m, const lu_dims_t *d)
{
    size_t bs = (size_t)d->b * (size_t)d->b, nbl = (size_t)d->nb * (size_t)d->nb;
    m->data = malloc(nbl * bs * sizeof(double));
    m->blk = malloc(nbl * sizeof(double *));
    if (!m->data || !m->blk) {
        free(m->data);
        free(m->blk);
        return -1;
    }
    for (size_t k = 0; k < nbl; k++)
        m->blk[k] = m->data + k * bs;
    return 0;
}

void lu_matrix_free(lu_matrix_t *m)
{
    free(m->data);
    free(m->blk);
    m->data = NULL;
    m->blk = NULL;
}

void lu_matrix_init(lu_matrix_t *m, const lu_dims_t *d)
{
    for (long I = 0; I < d->nb; I++)
        for (long J = 0; J < d->nb; J++)
            lu_init_block(m->blk[I * d->nb + J], d, I, J);
}

void lu_factor_seq(double **blk, const lu_dims_t *d)
{
    long nb = d->nb, b = d->b;
    for (long k = 0; k < nb; k++) {
        double *dg = blk[k * nb + k];
        lu_factor_diag(dg, b);
        for (long j = k + 1; j < nb; j++)
            lu_solve_row(dg, blk[k * nb + j], b);
        for (long i = k + 1; i < nb; i++)
            lu_solve_col(dg, blk[i * nb + k], b);
        for (long i = k + 1; i < nb; i++)
            for (long j = k + 1; j < nb; j++)
                lu_update(blk[i * nb + j], blk[i * nb + k], blk[k * nb + j], b);
    }
}

double lu_block_sum(const double *blk, long b)
{
    double s = 0;
    for (long k = 0; k < b * b; k++)
        s += blk[k];
    return s;
}

double lu_checksum(double *const *blk, const lu_dims_t *d)
{
    double s = 0;
    for (long k = 0; k < d->nb * d->nb; k++)
        s += lu_block_sum(blk[k], d->b);
    return s;
}

double lu_residual(double *const *blk, const lu_dims_t *d)
{
    long n = d->n, b = d->b, nb = d->nb;
    double *L = calloc((size_t)n * (size_t)n, sizeof *L), *U = calloc((size_t)n * (size_t)n, sizeof *U);
    if (!L || !U) {
        free(L);
        free(U);
        return INFINITY;
    }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double v = blk[(i / b) * nb + j / b][(i % b) * b + j % b];
            if (i > j)
                L[i * n + j] = v;
            else
                U[i * n + j] = v;
        }
    for (long i = 0; i < n; i++)
        L[i * n + i] = 1.0;
    double err = 0, amax = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double s = 0;
            long m = i < j ? i : j;
            for (long k = 0; k <= m; k++)
                s += L[i * n + k] * U[k * n + j];
            double a = entry(d, i, j);
            err = fmax(err, fabs(s - a));
            amax = fmax(amax, fabs(a));
        }
    free(L);
    free(U);
    return err / amax;
}
