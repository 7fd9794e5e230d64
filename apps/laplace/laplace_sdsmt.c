/*
 * laplace_sdsmt.c - Jacobi iteration on sdsm shared memory with compute
 * threads: P ranks x T threads (sdsmrun --threads T).
 *
 * The arrays are laid out as in laplace_sdsm.c (one block of rows per rank,
 * homed at it).  Thread id (sdsm_thread_id, rank-major) updates rows
 * app_block(n, P x T, id), which lie inside its rank's block: the halo rows
 * between threads of one rank are plain memory, only the two rows at a
 * rank's edges travel, once per rank and iteration.  sdsm_barrier (every
 * thread of every rank) ends each sweep.
 *
 * Check: as laplace_sdsm.c - every thread digests its own rows into the
 * table homed at its rank; rank 0's main thread, after the threads are
 * joined, runs the sequential kernel and compares digests.
 */
#include <sdsm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "laplace_kernel.h"

typedef laplace_digest_t digest_t;

/* What the threads of a rank share (set by the main thread). */
static struct {
    long n, iters, corrupt;
    double **a, **b; /* row pointers to the two arrays */
    digest_t **dg;
    double **result; /* the array holding the last iterate */
    double t0, t1;
} G;

static void *laplace_thread(void *arg)
{
    (void)arg;
    int id = sdsm_thread_id(), nt = sdsm_thread_count();
    long n = G.n, lo, hi;
    app_block(n, nt, id, &lo, &hi);
    long ulo = lo > 1 ? lo : 1, uhi = hi < n - 1 ? hi : n - 1;
    double **a = G.a, **b = G.b;
    for (long i = lo; i < hi; i++) { /* set-up, not timed: own rows only */
        laplace_init_row(i, n, a[i]);
        memcpy(b[i], a[i], (size_t)n * sizeof(double));
    }

    sdsm_barrier();
    if (id == 0)
        G.t0 = sdsm_wtime();
    for (long it = 0; it < G.iters; it++) {
        laplace_sweep(a, b, n, ulo, uhi);
        sdsm_barrier();
        double **t = a;
        a = b;
        b = t;
    }
    if (id == 0) {
        G.t1 = sdsm_wtime();
        G.result = a;
    }

    /* a holds the result, b the previous iterate; digest own rows. */
    if (G.corrupt && id == nt - 1 && uhi > ulo)
        a[uhi - 1][n / 2] *= 1.001;
    for (long i = lo; i < hi; i++) {
        G.dg[i]->hash = laplace_row_digest(a[i], n, &G.dg[i]->sum);
        G.dg[i]->change = laplace_row_change(a[i], b[i], n);
    }
    sdsm_barrier();
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    long n = G.n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = G.iters = app_pick(argc, argv, "iters", 50, 600, 50);
    G.corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 3 || iters < 1 || n < sdsm_thread_count())
        sdsm_abort(2, "laplace: need --n >= 3 (and >= ranks x threads) and --iters >= 1");

    size_t rowbytes = (size_t)n * sizeof(double);
    G.a = app_sdsm_rows(n, rowbytes);
    G.b = app_sdsm_rows(n, rowbytes);
    G.dg = app_sdsm_rows(n, sizeof(digest_t));

    app_sdsm_run_threads(laplace_thread, NULL);

    int status = 0;
    if (me == 0) {
        double **a = G.result;
        digest_t **dg = G.dg;
        char why[256];
        double sum, resid;
        int ok = laplace_check_digests(a, dg, n, iters, &sum, &resid, why, sizeof why);
        app_header("laplace", "sdsmt", np, "n=%ld iters=%ld threads=%d", n, iters, app_sdsm_threads());
        app_time(G.t1 - G.t0);
        app_result("checksum=%.12e resid=%.12e", sum, resid);
        status = app_verdict(ok, "%s", why);
    }
    free(G.a);
    free(G.b);
    free(G.dg);
    sdsm_finalize();
    return status;
}
