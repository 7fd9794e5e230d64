/*
 * fft_kernel.c - the sequential 3-D FFT algorithm shared by every version.
 *
 * Sizes (fft_*.c pick them with --size):
 *   small   32 x  32 x  32, 4 iterations  (a few ms: runs under ctest)
 *   medium 256 x 256 x 128, 50 iterations (NPB class A grid; about 6 s
 *          sequentially on the 2-core test machine)
 *   paper  128 x 128 x 128, 6 iterations  (seed 002 table 3: "128x128x128
 *          6 iterations"; its 96 MB of data are NPB FT's three 32 MB complex
 *          arrays - fft_sdsm.c shares two of them and keeps the others
 *          private, see there)
 * alpha = 1e-6 and the evolve/checksum shape follow NPB FT's description;
 * the initial values come from app_rng (one stream per z plane).
 */
#include "fft_kernel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

static int plan_init(fft_plan *pl, int n)
{
    if (n < 1 || (n & (n - 1)))
        return -1;
    pl->n = n;
    pl->logn = 0;
    while ((1 << pl->logn) < n)
        pl->logn++;
    pl->w = malloc(sizeof(cplx) * (size_t)(n / 2 + 1));
    pl->rev = malloc(sizeof(int) * (size_t)n);
    if (!pl->w || !pl->rev)
        abort();
    for (int k = 0; k < n / 2; k++) {
        double a = -2.0 * M_PI * (double)k / (double)n;
        pl->w[k].re = cos(a);
        pl->w[k].im = sin(a);
    }
    for (int i = 0; i < n; i++) {
        int r = 0;
        for (int b = 0; b < pl->logn; b++)
            if (i & (1 << b))
                r |= 1 << (pl->logn - 1 - b);
        pl->rev[i] = r;
    }
    return 0;
}

int fft_prob_init(fft_prob *p, int nx, int ny, int nz, int iters)
{
    memset(p, 0, sizeof *p);
    p->nx = nx;
    p->ny = ny;
    p->nz = nz;
    p->iters = iters;
    p->alpha = 1e-6;
    p->seed = 314159265;
    if (iters < 1 || plan_init(&p->px, nx) || plan_init(&p->py, ny) || plan_init(&p->pz, nz))
        return -1;
    return 0;
}

void fft_prob_free(fft_prob *p)
{
    free(p->px.w);
    free(p->px.rev);
    free(p->py.w);
    free(p->py.rev);
    free(p->pz.w);
    free(p->pz.rev);
}

/* The one butterfly every version uses: (a, b) <- (a + w b, a - w b). */
static inline void bfly(cplx *a, cplx *b, double wr, double wi)
{
    double tr = wr * b->re - wi * b->im;
    double ti = wr * b->im + wi * b->re;
    b->re = a->re - tr;
    b->im = a->im - ti;
    a->re = a->re + tr;
    a->im = a->im + ti;
}

/* One contiguous line, in place. */
static void fft_line(const fft_plan *pl, cplx *d, int dir)
{
    int n = pl->n;
    for (int i = 0; i < n; i++) {
        int r = pl->rev[i];
        if (i < r) {
            cplx t = d[i];
            d[i] = d[r];
            d[r] = t;
        }
    }
    for (int len = 2, step = n / 2; len <= n; len <<= 1, step >>= 1) {
        int half = len / 2;
        for (int s = 0; s < n; s += len)
            for (int j = 0; j < half; j++) {
                double wr = pl->w[j * step].re, wi = dir < 0 ? pl->w[j * step].im : -pl->w[j * step].im;
                bfly(&d[s + j], &d[s + j + half], wr, wi);
            }
    }
}

/* `count` lines side by side: element k of every line is row k, a run of
 * `count` contiguous elements at d + k * stride. */
static void fft_rows_butterflies(const fft_plan *pl, cplx *d, size_t stride, size_t count, int dir);

static void fft_rows(const fft_plan *pl, cplx *d, size_t stride, size_t count, int dir)
{
    int n = pl->n;
    for (int i = 0; i < n; i++) {
        int r = pl->rev[i];
        if (i < r) {
            cplx *a = d + (size_t)i * stride, *b = d + (size_t)r * stride;
            for (size_t c = 0; c < count; c++) {
                cplx t = a[c];
                a[c] = b[c];
                b[c] = t;
            }
        }
    }
    fft_rows_butterflies(pl, d, stride, count, dir);
}

void fft_copy_row(cplx *dst, const cplx *src, size_t n)
{
    for (size_t c = 0; c < n; c++)
        dst[c] = src[c];
}

void fft_rows_from(const fft_plan *pl, cplx *d, size_t stride, size_t count, const cplx *const *src, int dir)
{
    for (int i = 0; i < pl->n; i++)
        fft_copy_row(d + (size_t)i * stride, src[pl->rev[i]], count);
    if (pl->n > 1)
        fft_rows_butterflies(pl, d, stride, count, dir);
}

static void fft_rows_butterflies(const fft_plan *pl, cplx *d, size_t stride, size_t count, int dir)
{
    int n = pl->n;
    for (int len = 2, step = n / 2; len <= n; len <<= 1, step >>= 1) {
        int half = len / 2;
        for (int s = 0; s < n; s += len)
            for (int j = 0; j < half; j++) {
                double wr = pl->w[j * step].re, wi = dir < 0 ? pl->w[j * step].im : -pl->w[j * step].im;
                cplx *a = d + (size_t)(s + j) * stride, *b = d + (size_t)(s + j + half) * stride;
                for (size_t c = 0; c < count; c++)
                    bfly(&a[c], &b[c], wr, wi);
            }
    }
}

void fft_lines(const fft_plan *pl, cplx *data, size_t stride, size_t count, size_t cstride, int dir)
{
    if (pl->n == 1 || count == 0)
        return;
    if (stride == 1) {
        for (size_t c = 0; c < count; c++)
            fft_line(pl, data + c * cstride, dir);
        return;
    }
    if (cstride == 1) {
        fft_rows(pl, data, stride, count, dir);
        return;
    }
    cplx *buf = malloc(sizeof(cplx) * (size_t)pl->n);
    if (!buf)
        abort();
    for (size_t c = 0; c < count; c++) {
        cplx *l = data + c * cstride;
        for (int k = 0; k < pl->n; k++)
            buf[k] = l[(size_t)k * stride];
        fft_line(pl, buf, dir);
        for (int k = 0; k < pl->n; k++)
            l[(size_t)k * stride] = buf[k];
    }
    free(buf);
}

void fft_init_plane(const fft_prob *p, int z, cplx *base, size_t ystride)
{
    app_rng_t r;
    app_rng_seed(&r, p->seed + (uint64_t)z);
    for (int y = 0; y < p->ny; y++)
        for (int x = 0; x < p->nx; x++) {
            cplx *e = base + (size_t)y * ystride + x;
            e->re = app_rng_double(&r);
            e->im = app_rng_double(&r);
        }
}

static void table(double *ex, int n, double c)
{
    for (int i = 0; i < n; i++) {
        int f = i < n / 2 ? i : i - n;
        ex[i] = exp(c * (double)f * (double)f);
    }
}

void fft_evolve_tables(const fft_prob *p, int t, double *exx, double *exy, double *exz)
{
    double c = -4.0 * p->alpha * M_PI * M_PI * (double)t;
    table(exx, p->nx, c);
    table(exy, p->ny, c);
    table(exz, p->nz, c);
}

void fft_evolve_row(const fft_prob *p, const double *exx, const double *exy, const double *exz, int y, int z,
                    const cplx *in, cplx *out)
{
    double f = exz[z] * exy[y] * (1.0 / ((double)p->nx * (double)p->ny * (double)p->nz));
    for (int x = 0; x < p->nx; x++) {
        double g = f * exx[x];
        out[x].re = in[x].re * g;
        out[x].im = in[x].im * g;
    }
}

void fft_seq_init(const fft_prob *p, cplx *u)
{
    size_t plane = (size_t)p->nx * (size_t)p->ny;
    for (int z = 0; z < p->nz; z++)
        fft_init_plane(p, z, u + (size_t)z * plane, (size_t)p->nx);
}

void fft_seq_compute(const fft_prob *p, cplx *u, cplx *v, cplx *sums)
{
    size_t nx = (size_t)p->nx, ny = (size_t)p->ny, nz = (size_t)p->nz, plane = nx * ny;
    double *exx = malloc(sizeof(double) * (nx + ny + nz)), *exy = exx + nx, *exz = exy + ny;
    if (!exx)
        abort();
    /* forward: x, y (plane by plane), z */
    for (size_t z = 0; z < nz; z++) {
        fft_lines(&p->px, u + z * plane, 1, ny, nx, -1);
        fft_lines(&p->py, u + z * plane, nx, nx, 1, -1);
    }
    for (size_t y = 0; y < ny; y++)
        fft_lines(&p->pz, u + y * nx, plane, nx, 1, -1);
    for (int t = 1; t <= p->iters; t++) {
        fft_evolve_tables(p, t, exx, exy, exz);
        /* evolve and backward z (x-z sheet by sheet), then y, x (plane by plane) */
        for (size_t y = 0; y < ny; y++) {
            for (size_t z = 0; z < nz; z++)
                fft_evolve_row(p, exx, exy, exz, (int)y, (int)z, u + z * plane + y * nx,
                               v + z * plane + y * nx);
            fft_lines(&p->pz, v + y * nx, plane, nx, 1, +1);
        }
        for (size_t z = 0; z < nz; z++) {
            fft_lines(&p->py, v + z * plane, nx, nx, 1, +1);
            fft_lines(&p->px, v + z * plane, 1, ny, nx, +1);
        }
        cplx s = {0, 0};
        for (int j = 1; j <= FFT_NCHECK; j++) {
            int x, y, z;
            fft_check_point(p, j, &x, &y, &z);
            const cplx *e = v + (size_t)z * plane + (size_t)y * nx + (size_t)x;
            s.re += e->re;
            s.im += e->im;
        }
        sums[t - 1] = s;
    }
    free(exx);
}

void fft_seq_run(const fft_prob *p, cplx *sums, cplx *final)
{
    size_t total = (size_t)p->nx * (size_t)p->ny * (size_t)p->nz;
    cplx *u = malloc(sizeof(cplx) * total), *v = malloc(sizeof(cplx) * total);
    if (!u || !v)
        abort();
    fft_seq_init(p, u);
    fft_seq_compute(p, u, v, sums);
    if (final)
        memcpy(final, v, sizeof(cplx) * total);
    free(u);
    free(v);
}
