/*
 * tsp_omp.c - branch and bound TSP with OpenMP, in the same shape as
 * tsp_sdsm.c: a shared priority queue of paths under one lock, the best
 * tour under another, each thread taking paths of depth --jobdepth and
 * searching them depth first.  Check as in tsp_sdsm.c (exact).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "tsp_kernel.h"

typedef struct {
    int count, cap;
    uint64_t *heap;
} queue_t;

static void heap_push(queue_t *q, uint64_t k)
{
    if (q->count >= q->cap) {
        fprintf(stderr, "tsp: queue overflow\n");
        exit(1);
    }
    tsp_heap_push(q->heap, &q->count, k);
}

static uint64_t heap_pop(queue_t *q) { return tsp_heap_pop(q->heap, &q->count); }

static omp_lock_t best_lock;
static int best_len, best_tour[TSP_MAXN];

static void improve(void *c, int len, const int *tour)
{
    int n = *(int *)c;
    omp_set_lock(&best_lock);
    if (len < best_len) {
        memcpy(best_tour, tour, sizeof(int) * (size_t)n);
        __atomic_store_n(&best_len, len, __ATOMIC_RELAXED);
    }
    omp_unset_lock(&best_lock);
}

int main(int argc, char **argv)
{
    int n = (int)app_pick(argc, argv, "n", 12, 22, 19);
    long seed = app_pick(argc, argv, "seed", 31, 5, 38);
    int jobdepth = (int)app_opt_long(argc, argv, "jobdepth", 3);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    tsp_prob p;
    if (tsp_prob_init(&p, n, (uint64_t)seed) || jobdepth < 1 || jobdepth > TSP_MAXJOBDEPTH || jobdepth > n) {
        fprintf(stderr, "tsp: n must be in [3, %d], --jobdepth in [1, min(n, %d)]\n", TSP_MAXN,
                TSP_MAXJOBDEPTH);
        return 2;
    }
    long cap = 0, paths = 1;
    for (int d = 1; d <= jobdepth; d++) {
        cap += paths;
        paths *= n - d;
    }
    queue_t q = {0, (int)cap, malloc(sizeof(uint64_t) * (size_t)cap)};
    omp_lock_t qlock;
    omp_init_lock(&qlock);
    omp_init_lock(&best_lock);
    long nodes = 0;

    double t0 = app_now();
    best_len = tsp_nn_tour(&p, best_tour);
    int root[1] = {0};
    heap_push(&q, tsp_key(tsp_bound(&p, root, 1, 0, 1u), root, 1));
#pragma omp parallel reduction(+ : nodes)
    for (;;) {
        int path[TSP_MAXN], depth = 0, len = 0;
        uint32_t vis = 0;
        omp_set_lock(&qlock);
        while (q.count > 0) {
            uint64_t k = heap_pop(&q);
            int b = __atomic_load_n(&best_len, __ATOMIC_RELAXED);
            if (tsp_key_bound(k) >= b)
                continue;
            depth = tsp_key_path(&p, k, path, &len, &vis);
            if (depth >= jobdepth)
                break;
            int last = path[depth - 1];
            for (int v = 1; v < n; v++) {
                if (vis & (1u << v))
                    continue;
                path[depth] = v;
                int l = len + p.d[last][v], lb = tsp_bound(&p, path, depth + 1, l, vis | (1u << v));
                if (lb < b)
                    heap_push(&q, tsp_key(lb, path, depth + 1));
            }
            depth = 0;
        }
        omp_unset_lock(&qlock);
        if (depth == 0)
            break;
        nodes += tsp_dfs(&p, path, depth, len, vis, &best_len, improve, &n);
    }
    double t1 = app_now();

    app_header("tsp", "omp", omp_get_max_threads(), "n=%d seed=%ld jobdepth=%d", n, seed, jobdepth);
    app_time(t1 - t0);
    int found = best_len;
    app_result("optimal tour length %d (%ld nodes)", found, nodes);
    if (fail)
        found++;
    long rnodes;
    int rtour[TSP_MAXN];
    int ref = tsp_seq_solve(&p, rtour, &rnodes);
    int tl = tsp_tour_length(&p, best_tour);
    int status =
        app_verdict(found == ref && tl == found,
                    "tour length %d vs sequential %d (exact), tour checked: length %d", found, ref, tl);
    omp_destroy_lock(&qlock);
    omp_destroy_lock(&best_lock);
    free(q.heap);
    return status;
}
