/*
 * mm_sdsmt.c - matrix product on sdsm shared memory with compute threads:
 * P ranks x T threads (sdsmrun --threads T).
 *
 * A, B and C are laid out as in mm_sdsm.c (one block of rows per rank,
 * homed at it).  Thread id (sdsm_thread_id, rank-major) initializes and
 * computes rows app_block(n, P x T, id) of A, B and C, inside its rank's
 * block.  Every thread reads all of B, but the threads of a rank share its
 * copy: the part of B homed elsewhere is fetched once per rank (P-1 copies
 * of B in all, whatever T is), where P x T processes would fetch P x T - 1.
 *
 * Check: as mm_sdsm.c - digests of the rows of C in a table homed at each
 * rank, compared by rank 0's main thread after the threads are joined.
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "app_sdsm.h"
#include "mm_kernel.h"

/* What the threads of a rank share (set by the main thread). */
static struct {
    long n, corrupt;
    double **a, **b, **c;
    mm_digest_t **dg;
    double t0, t1;
} G;

static void *mm_thread(void *arg)
{
    (void)arg;
    int id = sdsm_thread_id(), nt = sdsm_thread_count();
    long n = G.n, lo, hi;
    app_block(n, nt, id, &lo, &hi);
    for (long i = lo; i < hi; i++) { /* set-up, not timed: own rows only */
        mm_init_a_row(i, n, G.a[i]);
        mm_init_b_row(i, n, G.b[i]);
    }

    sdsm_barrier();
    if (id == 0)
        G.t0 = sdsm_wtime();
    mm_rows(G.a, G.b, G.c, n, lo, hi);
    sdsm_barrier();
    if (id == 0)
        G.t1 = sdsm_wtime();

    mm_digest_rows(G.c, G.dg, n, lo, hi, G.corrupt && id == nt - 1);
    sdsm_barrier();
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    long n = G.n = app_pick(argc, argv, "n", 128, 3072, 2048);
    G.corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 1 || n < sdsm_thread_count())
        sdsm_abort(2, "mm: need --n >= 1 (and >= ranks x threads)");

    size_t rowbytes = (size_t)n * sizeof(double);
    G.a = app_sdsm_rows(n, rowbytes);
    G.b = app_sdsm_rows(n, rowbytes);
    G.c = app_sdsm_rows(n, rowbytes);
    G.dg = app_sdsm_rows(n, sizeof(mm_digest_t));

    app_sdsm_run_threads(mm_thread, NULL);

    int status = 0;
    if (me == 0)
        status = mm_verify(G.c, G.dg, n, "sdsmt", np, app_sdsm_threads(), G.t1 - G.t0);
    free(G.a);
    free(G.b);
    free(G.c);
    free(G.dg);
    sdsm_finalize();
    return status;
}
