/*
 * cg_kernel.c - matrix construction, the row-range primitives every version
 * uses, and the sequential algorithm.
 */
#include "cg_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

cg_params_t cg_params_from_args(int argc, char **argv)
{
    cg_params_t p;
    p.n = app_pick(argc, argv, "n", 2000, 75000, 14000);
    p.nzr = app_pick(argc, argv, "nzr", 8, 91, 66);
    p.niter = app_pick(argc, argv, "niter", 3, 25, 15);
    p.cgit = app_pick(argc, argv, "cgit", 25, 25, 25);
    const double shifts[3] = {10.0, 60.0, 20.0};
    p.shift = app_opt_double(argc, argv, "shift", shifts[app_size(argc, argv)]);
    p.seed = (uint64_t)app_opt_long(argc, argv, "seed", CG_SEED);
    if (p.n < 2 || p.n > 0x7fffffffL || p.nzr < 1 || p.niter < 1 || p.cgit < 1) {
        fprintf(stderr, "cg: need 2 <= --n < 2^31, --nzr, --niter, --cgit >= 1\n");
        exit(2);
    }
    return p;
}

/* Independent streams per row: the state is a scrambled row number, far
 * from the other rows' states along app_rng's sequence. */
static void row_rng(app_rng_t *g, uint64_t seed, long r)
{
    uint64_t x = seed ^ ((uint64_t)r + 1) * 0x9FB21C651E98DF25ull;
    x = (x ^ (x >> 32)) * 0xD6E8FEB86659FD93ull;
    app_rng_seed(g, x ^ (x >> 32));
}

static long partner(app_rng_t *g, long r, long n)
{
    long j = (long)(app_rng_next(g) % (uint64_t)(n - 1));
    return j >= r ? j + 1 : j;
}

typedef struct {
    int    col, ord; /* ord: arrival order, so equal columns sum in a fixed order */
    double v;
} ent_t;

static int cmp_ent(const void *a, const void *b)
{
    const ent_t *x = a, *y = b;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

int cg_build_rows(const cg_params_t *p, long lo, long hi, cg_csr_t *a)
{
    long m = hi - lo, n = p->n;
    long *cnt = calloc((size_t)m + 1, sizeof *cnt);
    if (!cnt)
        return -1;
    /* Pass 1: how many draws land in each local row. */
    for (long r = 0; r < n; r++) {
        app_rng_t g;
        row_rng(&g, p->seed, r);
        for (long t = 0; t < p->nzr; t++) {
            long j = partner(&g, r, n);
            (void)app_rng_next(&g); /* the value */
            if (r >= lo && r < hi)
                cnt[r - lo]++;
            if (j >= lo && j < hi)
                cnt[j - lo]++;
        }
    }
    long *start = malloc(((size_t)m + 1) * sizeof *start);
    size_t total = 0;
    for (long i = 0; i < m; i++)
        total += (size_t)cnt[i] + 1; /* + the diagonal */
    ent_t *e = malloc((total ? total : 1) * sizeof *e);
    a->rowptr = malloc(((size_t)m + 1) * sizeof *a->rowptr);
    a->col = malloc((total ? total : 1) * sizeof *a->col);
    a->val = malloc((total ? total : 1) * sizeof *a->val);
    if (!start || !e || !a->rowptr || !a->col || !a->val) {
        free(cnt);
        free(start);
        free(e);
        cg_csr_free(a);
        return -1;
    }
    start[0] = 0;
    for (long i = 0; i < m; i++) {
        start[i + 1] = start[i] + cnt[i];
        cnt[i] = 0;
    }
    /* Pass 2: the same draws, stored. */
    for (long r = 0; r < n; r++) {
        app_rng_t g;
        row_rng(&g, p->seed, r);
        for (long t = 0; t < p->nzr; t++) {
            long j = partner(&g, r, n);
            double v = app_rng_double(&g);
            if (r >= lo && r < hi) {
                long k = start[r - lo] + cnt[r - lo];
                e[k] = (ent_t){(int)j, (int)cnt[r - lo]++, v};
            }
            if (j >= lo && j < hi) {
                long k = start[j - lo] + cnt[j - lo];
                e[k] = (ent_t){(int)r, (int)cnt[j - lo]++, v};
            }
        }
    }
    /* Per row: sort, merge equal columns, add the diagonal in its place. */
    long nz = 0;
    for (long i = 0; i < m; i++) {
        ent_t *row = e + start[i];
        long k = cnt[i], row0 = nz;
        qsort(row, (size_t)k, sizeof *row, cmp_ent);
        double diag = 0;
        long out = 0;
        for (long t = 0; t < k; t++) {
            if (out && row[out - 1].col == row[t].col)
                row[out - 1].v += row[t].v;
            else
                row[out++] = row[t];
        }
        for (long t = 0; t < out; t++)
            diag += fabs(row[t].v);
        diag += 1.0;
        a->rowptr[i] = row0;
        int placed = 0;
        for (long t = 0; t < out; t++) {
            if (!placed && row[t].col > lo + i) {
                a->col[nz] = (int)(lo + i);
                a->val[nz++] = diag;
                placed = 1;
            }
            a->col[nz] = row[t].col;
            a->val[nz++] = row[t].v;
        }
        if (!placed) {
            a->col[nz] = (int)(lo + i);
            a->val[nz++] = diag;
        }
    }
    a->rowptr[m] = nz;
    a->lo = lo;
    a->hi = hi;
    free(cnt);
    free(start);
    free(e);
    return 0;
}

void cg_csr_free(cg_csr_t *a)
{
    free(a->rowptr);
    free(a->col);
    free(a->val);
    a->rowptr = NULL;
    a->col = NULL;
    a->val = NULL;
}

void cg_spmv(const cg_csr_t *a, const double *restrict x, double *restrict y)
{
    long m = a->hi - a->lo;
    const long *rp = a->rowptr;
    const int *col = a->col;
    const double *val = a->val;
    for (long i = 0; i < m; i++) {
        double s = 0;
        for (long k = rp[i]; k < rp[i + 1]; k++)
            s += val[k] * x[col[k]];
        y[i] = s;
    }
}

double cg_dot(const double *a, const double *b, long m)
{
    double s = 0;
    for (long i = 0; i < m; i++)
        s += a[i] * b[i];
    return s;
}

double cg_diff2(const double *a, const double *b, long m)
{
    double s = 0;
    for (long i = 0; i < m; i++) {
        double d = a[i] - b[i];
        s += d * d;
    }
    return s;
}

double cg_sum_parts(const double *parts, int nparts, int stride)
{
    double s = 0;
    for (int k = 0; k < nparts; k++)
        s += parts[(long)k * stride];
    return s;
}

int cg_result_alloc(cg_result_t *r, const cg_params_t *p)
{
    r->zeta = calloc((size_t)p->niter, sizeof(double));
    r->rnorm = calloc((size_t)p->niter, sizeof(double));
    r->z = calloc((size_t)p->n, sizeof(double));
    if (!r->zeta || !r->rnorm || !r->z) {
        cg_result_free(r);
        return -1;
    }
    return 0;
}

void cg_result_free(cg_result_t *r)
{
    free(r->zeta);
    free(r->rnorm);
    free(r->z);
    r->zeta = r->rnorm = r->z = NULL;
}

/* A dot product blocked like a run on nparts processes. */
static double dot_parts(const double *a, const double *b, long n, int nparts,
                        double (*f)(const double *, const double *, long))
{
    double parts[nparts];
    for (int k = 0; k < nparts; k++) {
        long lo, hi;
        app_block(n, nparts, k, &lo, &hi);
        parts[k] = f(a + lo, b + lo, hi - lo);
    }
    return cg_sum_parts(parts, nparts, 1);
}

double cg_run_seq(const cg_params_t *p, int nparts, cg_result_t *res)
{
    long n = p->n;
    cg_csr_t a;
    if (cg_build_rows(p, 0, n, &a))
        return -1;
    double *x = malloc((size_t)n * sizeof *x), *r = malloc((size_t)n * sizeof *r),
           *pv = malloc((size_t)n * sizeof *pv), *q = malloc((size_t)n * sizeof *q);
    double *z = res->z;
    if (!x || !r || !pv || !q) {
        free(x), free(r), free(pv), free(q);
        cg_csr_free(&a);
        return -1;
    }
    double t0 = app_now();
    for (long i = 0; i < n; i++)
        x[i] = 1.0;
    for (long it = 0; it < p->niter; it++) {
        for (long i = 0; i < n; i++) {
            z[i] = 0;
            r[i] = x[i];
            pv[i] = r[i];
        }
        double rho = dot_parts(r, r, n, nparts, cg_dot);
        for (long c = 0; c < p->cgit; c++) {
            cg_spmv(&a, pv, q);
            double alpha = rho / dot_parts(pv, q, n, nparts, cg_dot);
            for (long i = 0; i < n; i++) {
                z[i] += alpha * pv[i];
                r[i] -= alpha * q[i];
            }
            double rho0 = rho;
            rho = dot_parts(r, r, n, nparts, cg_dot);
            double beta = rho / rho0;
            if (c < p->cgit - 1)
                for (long i = 0; i < n; i++)
                    pv[i] = r[i] + beta * pv[i];
        }
        cg_spmv(&a, z, q);
        double rr = dot_parts(x, q, n, nparts, cg_diff2);
        double xz = dot_parts(x, z, n, nparts, cg_dot);
        double zz = dot_parts(z, z, n, nparts, cg_dot);
        res->rnorm[it] = sqrt(rr);
        res->zeta[it] = p->shift + 1.0 / xz;
        double s = 1.0 / sqrt(zz);
        for (long i = 0; i < n; i++)
            x[i] = s * z[i];
    }
    double t1 = app_now();
    free(x), free(r), free(pv), free(q);
    cg_csr_free(&a);
    return t1 - t0;
}

double cg_compare(const cg_result_t *a, const cg_result_t *ref, const cg_params_t *p)
{
    double d = app_max_rel_diff(a->zeta, ref->zeta, (size_t)p->niter);
    double e = app_max_rel_diff(a->rnorm, ref->rnorm, (size_t)p->niter);
    double f = app_max_rel_diff(a->z, ref->z, (size_t)p->n);
    return fmax(d, fmax(e, f));
}
