/*
 * cg_sdsmt.c - CG on sdsm shared memory with compute threads: P ranks x T
 * threads (sdsmrun --threads T).
 *
 * The layout is cg_sdsm.c's: p in per-rank segments of whole pages homed at
 * their ranks (one SDSM_HOME_BLOCK allocation), the matrix columns
 * renumbered into that layout.  Thread id (sdsm_thread_id, rank-major) owns
 * rows app_block(n, P x T, id), which lie inside its rank's block, so it
 * writes only pages homed at its rank; it builds those rows of the matrix
 * itself and keeps x, z, r, q for them in private memory.  The threads of a
 * rank share its copy of the other segments: a page is fetched once per
 * rank, not once per thread.
 *
 * Before A p the other segments are touched page by page in order, so that
 * the sequential prefetch brings them in few large replies.  --touch 1
 * (default): the rank's first thread touches them all, as cg_sdsm.c does,
 * while its other threads fault on the same pages and wait for those
 * replies.  --touch 2: thread t of a rank touches the t-th 1/T of each
 * segment, so T streams are in flight at once; each restarts the prefetch,
 * so the pages come in more, smaller replies.  --touch 3: as 2, but each
 * thread takes the next page not yet taken (a counter the rank's threads
 * share), so T fetches stay in flight until the last page, however late
 * some replies come.  --touch 0: no touching, the
 * faults of A p itself (one page each, T in flight).  Every row of A needs
 * almost every page of p, so no thread can compute A p before the pages
 * have come: what threads can overlap is fetches with fetches, and a
 * thread's reductions and updates with another's waits.
 *
 * Dot products: every thread writes its partial sums into its slot (all
 * slots in one page homed at rank 0, alternating halves as in cg_sdsm.c),
 * sdsm_barrier (every thread of every rank), and every thread adds all
 * P x T slots in id order: the blocking of the sequential kernel with P x T
 * parts, so the check compares with cg_run_seq(P x T parts) bit for bit.
 *
 * Allocation happens in the main thread before the threads start; the check
 * runs in rank 0's main thread after they are joined.
 */
#include <sdsm.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "cg_kernel.h"

#define PAGE_DOUBLES (4096 / (long)sizeof(double))
#define NSLOT        CG_NSUM /* values per thread per reduction */

/* What every thread of a rank shares (set by the main thread). */
static struct {
    cg_params_t P;
    int np, nt, T;     /* ranks, threads in all, threads per rank */
    long seg, touch;   /* doubles per rank segment of p; --touch */
    long *los;         /* rank r's rows: [los[r], los[r+1]) */
    double *p, *slots; /* shared */
    double *zeta, *rnorm;
    double t0, t1;
} G;

typedef struct {
    int id, phase;
    int me, lt;  /* rank, thread within it */
    long rounds; /* touch rounds so far (--touch 3) */
} thr_t;

static double *slot(int id, int phase) { return G.slots + ((long)phase * G.nt + id) * NSLOT; }

/* Sum k values over all threads, in id order; includes a barrier (cg_share_t's
 * reduce). */
static void reduce(void *ctx, const double *mine, double *out, int k)
{
    thr_t *s = ctx;
    double *w = slot(s->id, s->phase);
    for (int t = 0; t < k; t++)
        w[t] = mine[t];
    sdsm_barrier();
    for (int t = 0; t < k; t++)
        out[t] = cg_sum_parts(slot(0, s->phase) + t, G.nt, NSLOT);
    s->phase ^= 1;
}

/* --touch 3: the next page to touch, counted over all touch rounds (the
 * threads of a rank share it; a round ends at a barrier of all threads). */
static _Atomic long next_touch;

/* Read one word per page of the other ranks' segments, in address order:
 * thread lt of a rank its 1/T of each (--touch 2), or the first thread all;
 * with --touch 3 each thread takes the next untouched page in turn, so a
 * thread whose page comes late holds up no fixed share of the others. */
static void touch_others(int me, int lt, long round)
{
    volatile double sink = 0;
    long npg = G.seg / PAGE_DOUBLES, plo = 0, phi = npg;
    if (G.touch == 3) {
        long per = npg * (G.np - 1), end = (round + 1) * per;
        for (long k = atomic_load(&next_touch); k < end;)
            if (atomic_compare_exchange_weak(&next_touch, &k, k + 1)) {
                long i = k - round * per, r = i / npg;
                sink += G.p[(r + (r >= me)) * G.seg + (i % npg) * PAGE_DOUBLES];
                k = atomic_load(&next_touch);
            }
        return;
    }
    if (G.touch == 2)
        app_block(npg, G.T, lt, &plo, &phi);
    else if (lt != 0)
        return; /* --touch 1: the rank's first thread touches for all */
    for (int r = 0; r < G.np; r++)
        if (r != me)
            for (long k = plo; k < phi; k++)
                sink += G.p[r * G.seg + k * PAGE_DOUBLES];
    (void)sink;
}

static void p_written(void *ctx)
{
    (void)ctx;
    sdsm_barrier();
}

static void p_needed(void *ctx)
{
    thr_t *s = ctx;
    if (G.touch)
        touch_others(s->me, s->lt, s->rounds++);
}

/* Columns of a into p's layout (cg_sdsm.c's renumbering). */
static void renumber(cg_csr_t *a, long m)
{
    long n = G.P.n;
    int np = G.np;
    for (long k = 0; k < a->rowptr[m]; k++) {
        long c = a->col[k];
        int r = (int)((c * np + np - 1) / n); /* a guess at c's rank, then adjust */
        while (r > 0 && c < G.los[r])
            r--;
        while (r < np - 1 && c >= G.los[r + 1])
            r++;
        long idx = r * G.seg + (c - G.los[r]);
        if (idx > 0x7fffffffL)
            sdsm_abort(2, "cg: vector too long for int columns");
        a->col[k] = (int)idx;
    }
}

static void *cg_thread(void *arg)
{
    (void)arg;
    const cg_params_t *P = &G.P;
    int id = sdsm_thread_id(), me = sdsm_rank();
    thr_t S = {id, 0, me, id % G.T, 0};
    long lo, hi;
    app_block(P->n, G.nt, S.id, &lo, &hi);
    long m = hi - lo;
    cg_csr_t a;
    if (cg_build_rows(P, lo, hi, &a))
        sdsm_abort(1, "out of memory");
    renumber(&a, m);
    size_t vb = (size_t)(m ? m : 1) * sizeof(double);
    double *x = malloc(vb), *z = malloc(vb), *r = malloc(vb), *q = malloc(vb);
    if (!x || !z || !r || !q)
        sdsm_abort(1, "out of memory");
    /* My rows of p; z goes through them for the last A z.  The first thread
     * keeps the results. */
    cg_share_t sh = {.a = &a,
                     .m = m,
                     .x = x,
                     .z = z,
                     .r = r,
                     .q = q,
                     .pm = G.p + me * G.seg + (lo - G.los[me]),
                     .p = G.p,
                     .zeta = id == 0 ? G.zeta : NULL,
                     .rnorm = id == 0 ? G.rnorm : NULL,
                     .ctx = &S,
                     .reduce = reduce,
                     .p_written = p_written,
                     .p_needed = p_needed};
    sdsm_barrier();

    if (S.id == 0)
        G.t0 = sdsm_wtime();
    cg_iterate(P, &sh);
    if (S.id == 0) /* as cg_sdsm.c: right after the last reduction's barrier */
        G.t1 = sdsm_wtime();
    cg_csr_free(&a);
    free(x), free(z), free(r), free(q);
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    G.P = cg_params_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    G.touch = app_opt_long(argc, argv, "touch", 1);
    G.np = np;
    G.nt = sdsm_thread_count();
    G.T = app_sdsm_threads();
    long n = G.P.n;
    if (G.touch < 0 || G.touch > 3)
        sdsm_abort(2, "cg: --touch 0|1|2|3");
    if (n < G.nt)
        sdsm_abort(2, "cg: --n must be >= the number of threads (ranks x threads)");

    /* Layout of p: rank r's rows at r * seg + (i - los[r]). */
    long maxrows = 0;
    G.los = malloc(((size_t)np + 1) * sizeof *G.los);
    G.zeta = calloc((size_t)G.P.niter, sizeof *G.zeta);
    G.rnorm = calloc((size_t)G.P.niter, sizeof *G.rnorm);
    if (!G.los || !G.zeta || !G.rnorm)
        sdsm_abort(1, "out of memory");
    for (int r = 0; r < np; r++) {
        long lo, hi;
        app_block(n, np, r, &lo, &hi);
        G.los[r] = lo;
        if (hi - lo > maxrows)
            maxrows = hi - lo;
    }
    G.los[np] = n;
    G.seg = (maxrows + PAGE_DOUBLES - 1) / PAGE_DOUBLES * PAGE_DOUBLES;
    G.p = sdsm_calloc((size_t)np * (size_t)G.seg, sizeof(double), SDSM_HOME_BLOCK);
    if (sdsm_home_of(G.p + me * G.seg) != me)
        sdsm_abort(1, "cg: p's segment %d is not homed at its rank", me);
    G.slots = sdsm_calloc((size_t)2 * G.nt * NSLOT, sizeof(double), 0);

    app_sdsm_run_threads(cg_thread, NULL);

    int status = 0;
    if (me == 0) {
        cg_result_t got = {G.zeta, G.rnorm, malloc((size_t)n * sizeof(double))};
        if (!got.z)
            sdsm_abort(1, "out of memory");
        for (int rk = 0; rk < np; rk++) /* z, from every rank's segment of p */
            memcpy(got.z + G.los[rk], G.p + rk * G.seg, (size_t)(G.los[rk + 1] - G.los[rk]) * sizeof(double));
        char extra[64];
        snprintf(extra, sizeof extra, "threads=%d touch=%ld", G.T, G.touch);
        status = cg_verify(&G.P, "sdsmt", np, extra, G.nt, &got, corrupt, G.t1 - G.t0);
        if (status < 0)
            sdsm_abort(1, "out of memory");
        free(got.z);
    }
    free(G.los), free(G.zeta), free(G.rnorm);
    sdsm_finalize();
    return status;
}
