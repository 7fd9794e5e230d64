/*
 * tsp_kernel.c - the sequential branch and bound shared by every version.
 *
 * Sizes (tsp_*.c pick them with --size):
 *   small  12 cities, seed 31 (about a millisecond: runs under ctest)
 *   medium 22 cities, seed 5  (about 13 s sequentially on the 2-core test
 *          machine; the search time varies by orders of magnitude with the
 *          instance, this one was picked to land in the 5-30 s range)
 *   paper  19 cities, seed 38 (seed 002 table 3: "19 cities (19b)"; about
 *          0.6 s here, 8.5 s on the paper's 1.13 GHz Pentium III)
 * The cities come from app_rng (--seed overrides).
 * The parallel versions expand the search tree best-first down to depth
 * --jobdepth (3 by default: paths 0, a, b) through the shared priority queue,
 * then search each such path depth first with tsp_dfs.
 */
#include "tsp_kernel.h"

#include <math.h>
#include <string.h>

#include "app.h"

int tsp_prob_init(tsp_prob *p, int n, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    if (n < 3 || n > TSP_MAXN)
        return -1;
    p->n = n;
    app_rng_t r;
    app_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        p->x[i] = (int)(app_rng_double(&r) * 1000);
        p->y[i] = (int)(app_rng_double(&r) * 1000);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dx = p->x[i] - p->x[j], dy = p->y[i] - p->y[j];
            p->d[i][j] = (int)(sqrt(dx * dx + dy * dy) + 0.5);
        }
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++)
            if (j != i)
                p->nbr[i][k++] = j;
        for (int a = 1; a < k; a++) { /* insertion sort by distance, then index */
            int c = p->nbr[i][a], b = a - 1;
            while (b >= 0 && p->d[i][p->nbr[i][b]] > p->d[i][c]) {
                p->nbr[i][b + 1] = p->nbr[i][b];
                b--;
            }
            p->nbr[i][b + 1] = c;
        }
    }
    return 0;
}

int tsp_nn_tour(const tsp_prob *p, int *tour)
{
    uint32_t vis = 1;
    int len = 0, cur = 0;
    tour[0] = 0;
    for (int k = 1; k < p->n; k++) {
        int next = -1;
        for (int j = 0; j < p->n - 1; j++)
            if (!(vis & (1u << p->nbr[cur][j]))) {
                next = p->nbr[cur][j];
                break;
            }
        len += p->d[cur][next];
        vis |= 1u << next;
        tour[k] = cur = next;
    }
    return len + p->d[cur][0];
}

int tsp_tour_length(const tsp_prob *p, const int *tour)
{
    uint32_t vis = 0;
    int len = 0;
    if (tour[0] != 0)
        return -1;
    for (int k = 0; k < p->n; k++) {
        int c = tour[k];
        if (c < 0 || c >= p->n || (vis & (1u << c)))
            return -1;
        vis |= 1u << c;
        len += p->d[c][tour[(k + 1) % p->n]];
    }
    return len;
}

int tsp_bound(const tsp_prob *p, const int *path, int depth, int len, uint32_t vis)
{
    int n = p->n, last = path[depth - 1];
    if (depth == n)
        return len + p->d[last][0];
    int lb = len;
    for (int j = 0; j < n - 1; j++) { /* last -> an unvisited city */
        int v = p->nbr[last][j];
        if (!(vis & (1u << v))) {
            lb += p->d[last][v];
            break;
        }
    }
    uint32_t open = ~vis | 1u; /* unvisited cities and city 0 */
    for (int u = 1; u < n; u++) {
        if (vis & (1u << u))
            continue;
        for (int j = 0; j < n - 1; j++) {
            int v = p->nbr[u][j];
            if (open & (1u << v)) {
                lb += p->d[u][v];
                break;
            }
        }
    }
    return lb;
}

static inline int read_best(const int *best) { return __atomic_load_n(best, __ATOMIC_RELAXED); }

long tsp_dfs(const tsp_prob *p, int *path, int depth, int len, uint32_t vis, const int *best,
             tsp_improve_fn improve, void *ctx)
{
    int n = p->n, last = path[depth - 1];
    if (depth == n) {
        int total = len + p->d[last][0];
        if (total < read_best(best))
            improve(ctx, total, path);
        return 1;
    }
    if (tsp_bound(p, path, depth, len, vis) >= read_best(best))
        return 1;
    long nodes = 1;
    for (int j = 0; j < n - 1; j++) {
        int v = p->nbr[last][j];
        if (vis & (1u << v))
            continue;
        int l = len + p->d[last][v];
        if (l >= read_best(best))
            break; /* neighbours come nearest first: the rest are no better */
        path[depth] = v;
        nodes += tsp_dfs(p, path, depth + 1, l, vis | (1u << v), best, improve, ctx);
    }
    return nodes;
}

typedef struct {
    int best;
    int *tour;
    int n;
} seq_ctx;

static void seq_improve(void *c, int len, const int *tour)
{
    seq_ctx *s = c;
    s->best = len;
    memcpy(s->tour, tour, sizeof(int) * (size_t)s->n);
}

int tsp_seq_solve(const tsp_prob *p, int *tour, long *nodes)
{
    seq_ctx s = {tsp_nn_tour(p, tour), tour, p->n};
    int path[TSP_MAXN] = {0};
    long k = tsp_dfs(p, path, 1, 0, 1u, &s.best, seq_improve, &s);
    if (nodes)
        *nodes = k;
    return s.best;
}

int tsp_key_path(const tsp_prob *p, uint64_t key, int *path, int *len, uint32_t *vis)
{
    int depth = (int)(key & 7);
    path[0] = 0;
    *len = 0;
    *vis = 1;
    for (int i = 1; i < depth; i++) {
        path[i] = (int)((key >> (3 + 5 * (i - 1))) & 31);
        *len += p->d[path[i - 1]][path[i]];
        *vis |= 1u << path[i];
    }
    return depth;
}

void tsp_heap_push(uint64_t *heap, int *count, uint64_t k)
{
    int i = (*count)++;
    while (i > 0 && heap[(i - 1) / 2] > k) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = k;
}

uint64_t tsp_heap_pop(uint64_t *heap, int *count)
{
    uint64_t top = heap[0], k = heap[--*count];
    int i = 0, n = *count;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= k)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (n > 0)
        heap[i] = k;
    return top;
}
