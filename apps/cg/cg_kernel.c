/*
 * cg_kernel.c - matrix construction, the row-range primitives every version
 * uses, the iterations every version runs on its share (cg_iterate), the
 * sequential algorithm, and the check the parallel versions end with.
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
    int col, ord; /* ord: arrival order, so equal columns sum in a fixed order */
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
    if (!x || !r || !pv || !q) {
        free(x), free(r), free(pv), free(q);
        cg_csr_free(&a);
        return -1;
    }
    cg_share_t s = {.a = &a,
                    .m = n,
                    .x = x,
                    .z = res->z,
                    .r = r,
                    .q = q,
                    .pm = pv,
                    .p = pv,
                    .z_all = res->z,
                    .nparts = nparts,
                    .zeta = res->zeta,
                    .rnorm = res->rnorm};
    double t0 = app_now();
    cg_iterate(p, &s);
    double t1 = app_now();
    free(x), free(r), free(pv), free(q);
    cg_csr_free(&a);
    return t1 - t0;
}

/* A share's partial sum of f over its rows; the sequential kernel blocks it
 * like a run on nparts processes. */
static double part_sum(const cg_share_t *s, const double *a, const double *b,
                       double (*f)(const double *, const double *, long))
{
    if (s->nparts > 0)
        return dot_parts(a, b, s->m, s->nparts, f);
    return f(a, b, s->m);
}

static void combine(const cg_share_t *s, const double *part, double *tot, int k)
{
    if (s->reduce)
        s->reduce(s->ctx, part, tot, k);
    else
        for (int t = 0; t < k; t++)
            tot[t] = part[t];
}

static void hook(void (*f)(void *), void *ctx)
{
    if (f)
        f(ctx);
}

/* One solve of A z = x from z = 0: cgit CG iterations. */
static void cg_solve(const cg_params_t *p, const cg_share_t *s)
{
    long m = s->m;
    double *z = s->z, *r = s->r, *q = s->q, *pm = s->pm;
    double part[CG_NSUM] = {0}, tot[CG_NSUM];
    for (long i = 0; i < m; i++) {
        z[i] = 0;
        r[i] = s->x[i];
        pm[i] = r[i];
    }
    part[0] = part_sum(s, r, r, cg_dot);
    combine(s, part, tot, 1); /* a barrier in it also publishes p */
    double rho = tot[0];
    for (long c = 0; c < p->cgit; c++) {
        hook(s->p_needed, s->ctx);
        cg_spmv(s->a, s->p, q);
        part[0] = part_sum(s, pm, q, cg_dot);
        combine(s, part, tot, 1);
        double alpha = rho / tot[0];
        for (long i = 0; i < m; i++) {
            z[i] += alpha * pm[i];
            r[i] -= alpha * q[i];
        }
        double rho0 = rho;
        part[0] = part_sum(s, r, r, cg_dot);
        combine(s, part, tot, 1);
        rho = tot[0];
        double beta = rho / rho0;
        if (c < p->cgit - 1) {
            for (long i = 0; i < m; i++)
                pm[i] = r[i] + beta * pm[i];
            hook(s->p_written, s->ctx);
        }
    }
}

/* After solve it: rnorm = |x - A z|, zeta = shift + 1 / (x.z), and the next
 * x = z / |z|. */
static void cg_finish(const cg_params_t *p, const cg_share_t *s, long it)
{
    long m = s->m;
    double *x = s->x, *z = s->z, *q = s->q;
    double part[CG_NSUM] = {0}, tot[CG_NSUM];
    const double *zv = s->z_all;
    if (!zv) { /* z goes through p's rows (nobody reads p now) */
        memcpy(s->pm, z, (size_t)m * sizeof *z);
        hook(s->p_written, s->ctx);
        hook(s->p_needed, s->ctx);
        zv = s->p;
    } /* else z is whole: the last r.r's sums came after every share's update */
    cg_spmv(s->a, zv, q);
    part[0] = part_sum(s, x, q, cg_diff2);
    part[1] = part_sum(s, x, z, cg_dot);
    part[2] = part_sum(s, z, z, cg_dot);
    combine(s, part, tot, 3);
    if (s->rnorm) {
        s->rnorm[it] = sqrt(tot[0]);
        s->zeta[it] = p->shift + 1.0 / tot[1];
    }
    double sc = 1.0 / sqrt(tot[2]);
    for (long i = 0; i < m; i++)
        x[i] = sc * z[i];
}

void cg_iterate(const cg_params_t *p, const cg_share_t *s)
{
    for (long i = 0; i < s->m; i++)
        s->x[i] = 1.0;
    for (long it = 0; it < p->niter; it++) {
        cg_solve(p, s);
        cg_finish(p, s, it);
    }
}

double cg_compare(const cg_result_t *a, const cg_result_t *ref, const cg_params_t *p)
{
    double d = app_max_rel_diff(a->zeta, ref->zeta, (size_t)p->niter);
    double e = app_max_rel_diff(a->rnorm, ref->rnorm, (size_t)p->niter);
    double f = app_max_rel_diff(a->z, ref->z, (size_t)p->n);
    return fmax(d, fmax(e, f));
}

int cg_verify(const cg_params_t *p, const char *version, int procs, const char *extra, int nparts,
              cg_result_t *got, long corrupt, double secs)
{
    cg_result_t ref;
    if (cg_result_alloc(&ref, p))
        return -1;
    if (cg_run_seq(p, nparts, &ref) < 0) {
        cg_result_free(&ref);
        return -1;
    }
    if (corrupt)
        got->zeta[p->niter - 1] *= 1.0 + 1e-8;
    double diff = cg_compare(got, &ref, p);
    app_header("cg", version, procs, "n=%ld nzr=%ld niter=%ld cgit=%ld shift=%g%s%s", p->n, p->nzr, p->niter,
               p->cgit, p->shift, *extra ? " " : "", extra);
    app_time(secs);
    app_result("zeta=%.15e rnorm=%.6e", got->zeta[p->niter - 1], got->rnorm[p->niter - 1]);
    int status = app_verdict(diff <= CG_TOL,
                             "zeta, rnorm and z vs sequential kernel (%d parts): max rel diff %.3g "
                             "(tolerance %g)",
                             nparts, diff, CG_TOL);
    cg_result_free(&ref);
    return status;
}
