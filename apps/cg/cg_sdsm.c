/*
 * cg_sdsm.c - CG on sdsm shared memory.
 *
 * Rows are block-distributed (app_block); each rank builds its own rows of
 * the matrix privately and keeps x, z, r, q for its rows in private memory.
 * Only the direction p is shared, since A p reads it at random columns over
 * the whole vector.  p is laid out in per-rank segments of whole pages, one
 * allocation with SDSM_HOME_BLOCK, so rank r's segment is exactly the pages
 * homed at r; the matrix columns are renumbered into that layout when the
 * rows are built.  Each iteration a rank rewrites its own segment (home
 * pages: no diffs) and, after the barrier, faults in the other segments; it
 * first touches them page by page in order so that sdsm's sequential
 * prefetch fetches them in large requests instead of one random page per
 * fault.
 *
 * Dot products: each rank writes its partial sums into its slot, barrier,
 * and every rank adds all slots in rank order (so all ranks get the same
 * value, and the sequential kernel with the same blocking gets it too).
 * --slots packed (default): all slots in one page homed at rank 0; a rank's
 * write goes home as a small diff at the barrier, then each rank refetches
 * that one page.  --slots padded: one page per rank, homed at it; writes stay
 * local but every rank fetches P-1 pages per reduction.  Slots alternate
 * between two halves so that the next reduction's writes cannot overtake a
 * slow reader of this one.
 *
 * Barriers per CG iteration: 3 (p.q, r.r, new p); per outer iteration 2 more.
 * Check: rank 0 runs the sequential kernel with P parts and compares zeta,
 * rnorm and z (z is left in p's segments at the end).
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "cg_kernel.h"

#define PAGE_DOUBLES (4096 / (long)sizeof(double))
#define NSLOT        CG_NSUM /* values per rank per reduction */

typedef struct {
    double *base;
    int padded, np, me, phase;
} slots_t;

static void slots_init(slots_t *s, int padded, int np, int me)
{
    s->padded = padded;
    s->np = np;
    s->me = me;
    s->phase = 0;
    if (padded) /* page r homed at rank r: np pages over np ranks */
        s->base = sdsm_calloc((size_t)np * PAGE_DOUBLES, sizeof(double), SDSM_HOME_BLOCK);
    else
        s->base = sdsm_calloc((size_t)2 * np * NSLOT, sizeof(double), 0);
}

/* Distance between two ranks' slots. */
static int slot_stride(const slots_t *s) { return s->padded ? (int)PAGE_DOUBLES : NSLOT; }

static double *slot(const slots_t *s, int rank, int phase)
{
    if (s->padded)
        return s->base + rank * PAGE_DOUBLES + phase * NSLOT;
    return s->base + (phase * s->np + rank) * NSLOT;
}

/* Sum k values over ranks, in rank order; includes a barrier. */
static void reduce(slots_t *s, const double *mine, double *out, int k)
{
    double *w = slot(s, s->me, s->phase);
    for (int t = 0; t < k; t++)
        w[t] = mine[t];
    sdsm_barrier();
    for (int t = 0; t < k; t++)
        out[t] = cg_sum_parts(slot(s, 0, s->phase) + t, s->np, slot_stride(s));
    s->phase ^= 1;
}

/* Read one word per page of the other ranks' segments, in address order. */
static void touch_others(const double *p, long seg, int np, int me)
{
    volatile double sink = 0;
    for (int r = 0; r < np; r++)
        if (r != me)
            for (long k = 0; k < seg; k += PAGE_DOUBLES)
                sink += p[r * seg + k];
    (void)sink;
}

/* What cg_iterate's hooks need. */
typedef struct {
    slots_t S;
    const double *p;
    long seg, touch;
} run_t;

static void reduce_run(void *ctx, const double *mine, double *out, int k)
{
    reduce(&((run_t *)ctx)->S, mine, out, k);
}

static void p_written(void *ctx)
{
    (void)ctx;
    sdsm_barrier();
}

static void p_needed(void *ctx)
{
    run_t *u = ctx;
    if (u->touch)
        touch_others(u->p, u->seg, u->S.np, u->S.me);
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    cg_params_t P = cg_params_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    long touch = app_opt_long(argc, argv, "touch", 1);
    const char *slotmode = app_opt_str(argc, argv, "slots", "packed");
    if (strcmp(slotmode, "packed") && strcmp(slotmode, "padded"))
        sdsm_abort(2, "cg: --slots packed|padded");
    long n = P.n;
    if (n < np)
        sdsm_abort(2, "cg: --n must be >= the number of ranks");

    /* Layout of p: rank r's rows at r * seg + (i - lo_r). */
    long maxrows = 0, *los = malloc(((size_t)np + 1) * sizeof *los);
    if (!los)
        sdsm_abort(1, "out of memory");
    for (int r = 0; r < np; r++) {
        long lo, hi;
        app_block(n, np, r, &lo, &hi);
        los[r] = lo;
        if (hi - lo > maxrows)
            maxrows = hi - lo;
    }
    los[np] = n;
    long seg = (maxrows + PAGE_DOUBLES - 1) / PAGE_DOUBLES * PAGE_DOUBLES;
    double *p = sdsm_calloc((size_t)np * (size_t)seg, sizeof(double), SDSM_HOME_BLOCK);
    if (sdsm_home_of(p + me * seg) != me)
        sdsm_abort(1, "cg: p's segment %d is not homed at its rank", me);
    run_t u = {.p = p, .seg = seg, .touch = touch};
    slots_init(&u.S, !strcmp(slotmode, "padded"), np, me);

    long lo = los[me], hi = los[me + 1], m = hi - lo;
    cg_csr_t a;
    if (cg_build_rows(&P, lo, hi, &a))
        sdsm_abort(1, "out of memory");
    for (long k = 0; k < a.rowptr[m]; k++) { /* renumber columns into p's layout */
        long c = a.col[k];
        int r = (int)((c * np + np - 1) / n); /* a guess at c's rank, then adjust */
        while (r > 0 && c < los[r])
            r--;
        while (r < np - 1 && c >= los[r + 1])
            r++;
        long idx = r * seg + (c - los[r]);
        if (idx > 0x7fffffffL)
            sdsm_abort(2, "cg: vector too long for int columns");
        a.col[k] = (int)idx;
    }
    double *x = malloc((size_t)(m ? m : 1) * sizeof *x), *z = malloc((size_t)(m ? m : 1) * sizeof *z),
           *r = malloc((size_t)(m ? m : 1) * sizeof *r), *q = malloc((size_t)(m ? m : 1) * sizeof *q);
    double *zeta = calloc((size_t)P.niter, sizeof *zeta), *rnorm = calloc((size_t)P.niter, sizeof *rnorm);
    if (!x || !z || !r || !q || !zeta || !rnorm)
        sdsm_abort(1, "out of memory");
    /* z goes through p's segments for the last A z, and stays there */
    cg_share_t sh = {.a = &a,
                     .m = m,
                     .x = x,
                     .z = z,
                     .r = r,
                     .q = q,
                     .pm = p + me * seg,
                     .p = p,
                     .zeta = zeta,
                     .rnorm = rnorm,
                     .ctx = &u,
                     .reduce = reduce_run,
                     .p_written = p_written,
                     .p_needed = p_needed};
    sdsm_barrier();

    double t0 = sdsm_wtime();
    cg_iterate(&P, &sh);
    double t1 = sdsm_wtime();

    int status = 0;
    if (me == 0) {
        cg_result_t got = {zeta, rnorm, malloc((size_t)n * sizeof(double))};
        if (!got.z)
            sdsm_abort(1, "out of memory");
        for (int rk = 0; rk < np; rk++) /* z, from every rank's segment of p */
            memcpy(got.z + los[rk], p + rk * seg, (size_t)(los[rk + 1] - los[rk]) * sizeof(double));
        char extra[64];
        snprintf(extra, sizeof extra, "slots=%s", slotmode);
        status = cg_verify(&P, "sdsm", np, extra, np, &got, corrupt, t1 - t0);
        if (status < 0)
            sdsm_abort(1, "out of memory");
        free(got.z);
    }
    cg_csr_free(&a);
    free(x), free(z), free(r), free(q), free(zeta), free(rnorm), free(los);
    sdsm_finalize();
    return status;
}
