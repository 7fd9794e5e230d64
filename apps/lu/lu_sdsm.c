/*
 * lu_sdsm.c - blocked LU on sdsm shared memory, barriers only.
 *
 * Blocks are scattered over a pr x pc grid of ranks (block (I,J) belongs to
 * rank (I mod pr) * pc + (J mod pc)); the owner does every write to a block,
 * and the block is homed at its owner, so writes never travel: only reads of
 * other ranks' finished blocks do.  Per step k:
 *   owner of (k,k) factors it;                       barrier
 *   owners of row k / column k blocks solve them;    barrier
 *   owners of the interior blocks update them;       barrier
 *
 * Placement.  At step k a rank in grid row r reads ALL blocks (i,k), i > k,
 * i = r mod pr (they have one owner), and a rank in grid column c reads all
 * blocks (k,j), j > k, j = c mod pc.  So each such run is one allocation,
 * homed at its owner, blocks in the order they are read: a run is fetched with
 * sequential faults, which sdsm's prefetch turns into a few large requests,
 * and the prefetch window stops at the end of the allocation instead of
 * pulling in blocks that are still being updated.  Before the interior update
 * a rank touches its two runs page by page, so the faults come in sequence.
 * Every block then crosses the network only to the ranks that need it, once.
 *
 * Private working copies (--private 1, the default).  Until a block is final
 * (factored, or solved as part of row/column k) only its owner reads it, so
 * the owner updates a private copy and copies the block into the shared
 * matrix once, when it is final; the shared matrix fills with L and U step by
 * step.  With --private 0 the owner updates the shared (home) block in place,
 * as on a hardware shared-memory machine: same traffic, but sdsm write-
 * protects a rank's written home pages at every barrier to catch the next
 * write, so each block costs two write faults per step, ~nb^3/3 faults in
 * all (4.7 million at the medium size), which dominates the run time.
 *
 * Check: each owner stores a digest (hash of the bits, sum) of each of its
 * blocks in a table homed at it; rank 0 runs the sequential kernel and
 * compares digests, fetching a block only when its digest differs.
 */
#include <sdsm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "lu_kernel.h"

typedef struct {
    uint64_t hash;
    double sum;
} digest_t;

typedef struct {
    int pr, pc; /* grid of ranks */
} grid_t;

static grid_t make_grid(int np)
{
    grid_t g = {1, np};
    for (int r = 1; r * r <= np; r++)
        if (np % r == 0)
            g = (grid_t){r, np / r};
    return g;
}

static int owner(const grid_t *g, long I, long J) { return (int)(I % g->pr) * g->pc + (int)(J % g->pc); }

static uint64_t block_hash(const double *blk, long b)
{
    return app_hash_doubles(APP_HASH_INIT, blk, b * b, NULL);
}

/*
 * Allocate the matrix as runs (see the top comment).  Collective: every rank
 * makes the same calls in the same order.
 */
static double **alloc_blocks(const lu_dims_t *d, const grid_t *g)
{
    long nb = d->nb;
    size_t bbytes = (size_t)d->b * (size_t)d->b * sizeof(double);
    double **blk = malloc((size_t)nb * (size_t)nb * sizeof *blk);
    if (!blk)
        sdsm_abort(1, "out of memory");
    for (long k = 0; k < nb; k++) {
        blk[k * nb + k] = sdsm_alloc(bbytes, owner(g, k, k));
        for (int r = 0; r < g->pr; r++) { /* column k below the diagonal, grid row r */
            long cnt = 0;
            for (long i = k + 1; i < nb; i++)
                cnt += i % g->pr == r;
            if (!cnt)
                continue;
            char *run = sdsm_alloc((size_t)cnt * bbytes, r * g->pc + (int)(k % g->pc));
            for (long i = k + 1; i < nb; i++)
                if (i % g->pr == r) {
                    blk[i * nb + k] = (double *)run;
                    run += bbytes;
                }
        }
        for (int c = 0; c < g->pc; c++) { /* row k right of the diagonal, grid column c */
            long cnt = 0;
            for (long j = k + 1; j < nb; j++)
                cnt += j % g->pc == c;
            if (!cnt)
                continue;
            char *run = sdsm_alloc((size_t)cnt * bbytes, (int)(k % g->pr) * g->pc + c);
            for (long j = k + 1; j < nb; j++)
                if (j % g->pc == c) {
                    blk[k * nb + j] = (double *)run;
                    run += bbytes;
                }
        }
    }
    return blk;
}

/* A block is final: copy it from the private working copy to the matrix. */
static void publish(double **blk, double **work, long idx, size_t bytes)
{
    if (work != blk)
        memcpy(blk[idx], work[idx], bytes);
}

/* Read one word per page of a run, in order, so its faults are sequential. */
static double touch_run(double **blk, long first, long stride, long count, long b)
{
    volatile double sink = 0;
    long per_page = 4096 / (long)sizeof(double);
    for (long t = 0; t < count; t++)
        for (long e = 0; e < b * b; e += per_page)
            sink += blk[first + t * stride][e];
    return sink;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    lu_dims_t d = lu_dims_from_args(argc, argv);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    long touch = app_opt_long(argc, argv, "touch", 1);
    long priv = app_opt_long(argc, argv, "private", 1);
    long nb = d.nb, b = d.b;
    grid_t g = make_grid(np);
    int myr = me / g.pc, myc = me % g.pc;

    double **blk = alloc_blocks(&d, &g);
    /* Digest tables, one per rank, homed at it; slot = the block's rank among
     * its owner's blocks in (I,J) order. */
    long *slot = malloc((size_t)nb * (size_t)nb * sizeof *slot);
    long *count = calloc((size_t)np, sizeof *count);
    digest_t **dg = malloc((size_t)np * sizeof *dg);
    if (!slot || !count || !dg)
        sdsm_abort(1, "out of memory");
    for (long I = 0; I < nb; I++)
        for (long J = 0; J < nb; J++)
            slot[I * nb + J] = count[owner(&g, I, J)]++;
    for (int r = 0; r < np; r++)
        dg[r] = sdsm_alloc((size_t)(count[r] ? count[r] : 1) * sizeof(digest_t), r);

    /* The blocks this rank updates: the shared ones, or (--private 1) private
     * copies, published to the shared matrix when they are final. */
    size_t bbytes = (size_t)b * (size_t)b * sizeof(double);
    double **work = blk, *pdata = NULL;
    if (priv) {
        work = calloc((size_t)nb * (size_t)nb, sizeof *work);
        pdata = malloc((size_t)(count[me] ? count[me] : 1) * bbytes);
        if (!work || !pdata)
            sdsm_abort(1, "out of memory");
        for (long I = 0; I < nb; I++)
            for (long J = 0; J < nb; J++)
                if (owner(&g, I, J) == me)
                    work[I * nb + J] = pdata + slot[I * nb + J] * b * b;
    }
    for (long I = 0; I < nb; I++) /* set-up, not timed: own blocks only */
        for (long J = 0; J < nb; J++)
            if (owner(&g, I, J) == me)
                lu_init_block(work[I * nb + J], &d, I, J);
    sdsm_barrier();

    double t0 = sdsm_wtime();
    for (long k = 0; k < nb; k++) {
        double *dk = blk[k * nb + k];
        if (owner(&g, k, k) == me) {
            lu_factor_diag(work[k * nb + k], b);
            publish(blk, work, k * nb + k, bbytes);
        }
        sdsm_barrier();
        long i0 = k + 1 + ((myr - (k + 1)) % g.pr + g.pr) % g.pr; /* my first row > k */
        long j0 = k + 1 + ((myc - (k + 1)) % g.pc + g.pc) % g.pc; /* my first column > k */
        if (k % g.pr == myr)                                      /* my blocks of row k */
            for (long j = j0; j < nb; j += g.pc) {
                lu_solve_row(dk, work[k * nb + j], b);
                publish(blk, work, k * nb + j, bbytes);
            }
        if (k % g.pc == myc) /* my blocks of column k */
            for (long i = i0; i < nb; i += g.pr) {
                lu_solve_col(dk, work[i * nb + k], b);
                publish(blk, work, i * nb + k, bbytes);
            }
        sdsm_barrier();
        if (i0 < nb && j0 < nb) {
            if (touch) {
                touch_run(blk, i0 * nb + k, g.pr * nb, (nb - i0 + g.pr - 1) / g.pr, b);
                touch_run(blk, k * nb + j0, g.pc, (nb - j0 + g.pc - 1) / g.pc, b);
            }
            for (long i = i0; i < nb; i += g.pr)
                for (long j = j0; j < nb; j += g.pc)
                    lu_update(work[i * nb + j], blk[i * nb + k], blk[k * nb + j], b);
        }
        sdsm_barrier();
    }
    double t1 = sdsm_wtime();

    if (corrupt && owner(&g, nb - 1, nb - 1) == me)
        blk[nb * nb - 1][b * b - 1] *= 1.0 + 1e-9;
    for (long I = 0; I < nb; I++)
        for (long J = 0; J < nb; J++)
            if (owner(&g, I, J) == me) {
                digest_t *e = &dg[me][slot[I * nb + J]];
                e->hash = block_hash(blk[I * nb + J], b);
                e->sum = lu_block_sum(blk[I * nb + J], b);
            }
    sdsm_barrier();

    int status = 0;
    if (me == 0) {
        lu_matrix_t ref;
        if (lu_matrix_alloc(&ref, &d))
            sdsm_abort(1, "out of memory");
        lu_matrix_init(&ref, &d);
        lu_factor_seq(ref.blk, &d);
        double sum = 0, maxdiff = 0;
        long badblocks = 0;
        for (long I = 0; I < nb; I++)
            for (long J = 0; J < nb; J++) {
                const digest_t *e = &dg[owner(&g, I, J)][slot[I * nb + J]];
                const double *r = ref.blk[I * nb + J];
                sum += e->sum;
                if (e->hash != block_hash(r, b)) { /* fetch the block only when it differs */
                    badblocks++;
                    maxdiff = fmax(maxdiff, app_max_rel_diff(blk[I * nb + J], r, (size_t)(b * b)));
                }
            }
        double rsum = lu_checksum(ref.blk, &d);
        double sdiff = fabs(sum - rsum) / fmax(fabs(rsum), 1.0);
        int resid_ok = 1;
        double resid = 0;
        if (d.n <= 512) { /* small sizes: also check the reference itself */
            resid = lu_residual(ref.blk, &d);
            resid_ok = resid <= LU_TOL;
        }
        app_header("lu", "sdsm", np, "n=%ld b=%ld grid=%dx%d private=%ld", d.n, d.b, g.pr, g.pc, priv);
        app_time(t1 - t0);
        app_result("checksum=%.12e", sum);
        status = app_verdict(maxdiff <= LU_TOL && sdiff <= LU_TOL && resid_ok,
                             "blocks vs sequential kernel: max rel diff %.3g (tolerance %g), "
                             "%ld of %ld blocks not bit-identical; checksum rel diff %.3g; "
                             "reference max|LU-A|/max|A| %.3g",
                             maxdiff, LU_TOL, badblocks, nb * nb, sdiff, resid);
        lu_matrix_free(&ref);
    }
    if (priv) {
        free(work);
        free(pdata);
    }
    free(blk);
    free(slot);
    free(count);
    free(dg);
    sdsm_finalize();
    return status;
}
