/*
 * tsp_sdsm.c - branch and bound TSP on sdsm (SPMD), TreadMarks TSP style.
 *
 * Shared, homed at rank 0 (the work has no data partition):
 *   - the priority queue: a binary min-heap of 64-bit keys (bound, packed
 *     path: tsp_key) under lock 0;
 *   - the best tour: its length and cities, on a page of its own, under
 *     lock 1.
 * Every rank loops: under the queue lock, pop the most promising path; drop
 * it if its bound reaches the best length; if it is shorter than --jobdepth,
 * expand it (push its children whose bound is below the best) and pop again;
 * otherwise take it as a job, release the lock and search it depth first
 * (tsp_dfs).  Expansion happens only under the lock, so an empty queue means
 * no more work will appear: the rank is done.
 * The DFS reads the best length at every node without the lock (an atomic
 * relaxed load, as the TreadMarks TSP reads its bound): a stale value is
 * larger, so it only prunes less.  An improvement is written under lock 1
 * after re-checking, and copied into the queue header under lock 0, which
 * is what the pruning at pop time uses (so it is up to date under every
 * protocol, ibec included).  Reading the shared bound inside the DFS matters:
 * refreshing a private copy only at job starts searched 40% more nodes at
 * 8 ranks (paper size).
 *
 * Check: rank 0 runs the sequential branch and bound and compares the tour
 * length exactly; the tour found must be a permutation of that length.
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "tsp_kernel.h"

#define LOCK_QUEUE 0
#define LOCK_BEST  1

typedef struct {
    int count, cap;
    int best; /* copy of the best length, for pruning at pop time */
    int pad;
    long nodes;      /* nodes searched, summed by the ranks as they finish */
    uint64_t heap[]; /* cap entries */
} queue_t;

typedef struct {
    int len;
    int tour[TSP_MAXN];
} best_t;

static void heap_push(queue_t *q, uint64_t k)
{
    if (q->count >= q->cap)
        sdsm_abort(1, "tsp: queue overflow");
    tsp_heap_push(q->heap, &q->count, k);
}

static uint64_t heap_pop(queue_t *q) { return tsp_heap_pop(q->heap, &q->count); }

typedef struct {
    best_t *best;
    queue_t *q;
    int n;
    int improvements;
} ctx_t;

static void improve(void *c, int len, const int *tour)
{
    ctx_t *x = c;
    sdsm_lock(LOCK_BEST);
    int better = len < x->best->len;
    if (better) {
        x->best->len = len;
        memcpy(x->best->tour, tour, sizeof(int) * (size_t)x->n);
        x->improvements++;
    }
    sdsm_unlock(LOCK_BEST);
    if (better) {
        sdsm_lock(LOCK_QUEUE);
        if (len < x->q->best)
            x->q->best = len;
        sdsm_unlock(LOCK_QUEUE);
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    int n = (int)app_pick(argc, argv, "n", 12, 22, 19);
    long seed = app_pick(argc, argv, "seed", 31, 5, 38);
    int jobdepth = (int)app_opt_long(argc, argv, "jobdepth", 3);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    tsp_prob p;
    if (tsp_prob_init(&p, n, (uint64_t)seed))
        sdsm_abort(2, "tsp: n must be in [3, %d]", TSP_MAXN);
    if (jobdepth < 1 || jobdepth > TSP_MAXJOBDEPTH || jobdepth > n)
        sdsm_abort(2, "tsp: --jobdepth must be in [1, %d] and at most n", TSP_MAXJOBDEPTH);

    /* Queue capacity: every path of depth <= jobdepth could be queued. */
    long cap = 0, paths = 1;
    for (int d = 1; d <= jobdepth; d++) {
        cap += paths;
        paths *= n - d;
    }
    queue_t *q = sdsm_alloc(sizeof(queue_t) + sizeof(uint64_t) * (size_t)cap, 0);
    best_t *best = sdsm_alloc(sizeof(best_t), 0);
    ctx_t ctx = {best, q, n, 0};
    long nodes = 0;
    int jobs = 0, expanded = 0;

    sdsm_barrier();
    double t0 = sdsm_wtime();
    if (me == 0) {
        q->cap = (int)cap;
        best->len = q->best = tsp_nn_tour(&p, best->tour);
        int root[1] = {0};
        heap_push(q, tsp_key(tsp_bound(&p, root, 1, 0, 1u), root, 1));
    }
    sdsm_barrier();
    for (;;) {
        int path[TSP_MAXN], depth = 0, len = 0;
        uint32_t vis = 0;
        sdsm_lock(LOCK_QUEUE);
        while (q->count > 0) {
            uint64_t k = heap_pop(q);
            int b = q->best;
            if (tsp_key_bound(k) >= b)
                continue;
            depth = tsp_key_path(&p, k, path, &len, &vis);
            if (depth >= jobdepth)
                break;
            expanded++;
            int last = path[depth - 1];
            for (int v = 1; v < n; v++) {
                if (vis & (1u << v))
                    continue;
                path[depth] = v;
                int l = len + p.d[last][v], lb = tsp_bound(&p, path, depth + 1, l, vis | (1u << v));
                if (lb < b)
                    heap_push(q, tsp_key(lb, path, depth + 1));
            }
            depth = 0;
        }
        if (depth == 0)
            q->nodes += nodes;
        sdsm_unlock(LOCK_QUEUE);
        if (depth == 0)
            break;
        jobs++;
        nodes += tsp_dfs(&p, path, depth, len, vis, &best->len, improve, &ctx);
    }
    sdsm_barrier();
    double t1 = sdsm_wtime();

    int status = 0;
    if (me == 0) {
        app_header("tsp", "sdsm", np, "n=%d seed=%ld jobdepth=%d", n, seed, jobdepth);
        app_time(t1 - t0);
        int found = best->len, tour[TSP_MAXN];
        memcpy(tour, best->tour, sizeof tour);
        app_result("optimal tour length %d (%ld nodes; rank 0: %d jobs, %d expansions)", found, q->nodes,
                   jobs, expanded);
        if (fail)
            found++;
        long rnodes;
        int rtour[TSP_MAXN];
        int ref = tsp_seq_solve(&p, rtour, &rnodes);
        int tl = tsp_tour_length(&p, tour);
        status =
            app_verdict(found == ref && tl == found,
                        "tour length %d vs sequential %d (exact), tour checked: length %d", found, ref, tl);
    }
    sdsm_finalize();
    return status;
}
