/*
 * tsp_kernel.h - branch and bound for the traveling salesman problem, plain C.
 *
 * n cities with integer coordinates in [0, 1000)^2 from app_rng; distances
 * are the Euclidean distances rounded to the nearest integer, so tour
 * lengths are exact integers.  Tours start and end at city 0.
 *
 * A partial tour is a path 0 = p[0], p[1], ..., p[d-1] (d = depth).  Its lower
 * bound is its length plus, for the last city and every unvisited city, the
 * shortest edge it could still leave by (the last city: to an unvisited city;
 * an unvisited city: to another unvisited city or back to 0) - those edges
 * are all distinct edges of any completion.  Search: depth first, nearest
 * city first, pruning a path whose bound reaches the best tour found so far
 * (initially the nearest-neighbour tour).
 */
#ifndef TSP_KERNEL_H
#define TSP_KERNEL_H

#include <stdint.h>

#define TSP_MAXN 32

typedef struct {
    int n;
    int x[TSP_MAXN], y[TSP_MAXN];
    int d[TSP_MAXN][TSP_MAXN];
    int nbr[TSP_MAXN][TSP_MAXN - 1]; /* other cities, nearest first */
} tsp_prob;

int tsp_prob_init(tsp_prob *p, int n, uint64_t seed); /* 0, or -1 if n is not in [3, TSP_MAXN] */

/* The nearest-neighbour tour from city 0: returns its length, fills tour[n]. */
int tsp_nn_tour(const tsp_prob *p, int *tour);
/* Length of the closed tour tour[0..n-1], or -1 if it is not a permutation starting at 0. */
int tsp_tour_length(const tsp_prob *p, const int *tour);

/* Lower bound of the path p[0..depth-1] of length len with visited set `vis`
 * (bit c set for every city on the path). */
int tsp_bound(const tsp_prob *p, const int *path, int depth, int len, uint32_t vis);

/*
 * Depth-first branch and bound below a path.  `best` is read (atomically,
 * relaxed) at every node: it may be shared and lowered by others meanwhile.
 * A complete tour shorter than *best is passed to improve(ctx, len, tour),
 * which must lower *best (under whatever lock it needs).  Returns the number
 * of nodes visited.  path must have room for n cities.
 */
typedef void (*tsp_improve_fn)(void *ctx, int len, const int *tour);
long tsp_dfs(const tsp_prob *p, int *path, int depth, int len, uint32_t vis, const int *best,
             tsp_improve_fn improve, void *ctx);

/* The sequential algorithm: the whole search from city 0.  Returns the
 * optimal length and fills tour[n]; *nodes gets the nodes visited. */
int tsp_seq_solve(const tsp_prob *p, int *tour, long *nodes);

/*
 * Work-queue entries of the parallel versions: a path of depth <= 7 packed
 * in 64 bits with its bound on top, so that ordering the keys orders the
 * paths by bound (smallest first).
 */
#define TSP_MAXJOBDEPTH 6
static inline uint64_t tsp_key(int bound, const int *path, int depth)
{
    uint64_t code = (uint64_t)depth;
    for (int i = 1; i < depth; i++)
        code |= (uint64_t)path[i] << (3 + 5 * (i - 1));
    return ((uint64_t)(uint32_t)bound << 32) | code;
}
static inline int tsp_key_bound(uint64_t k) { return (int)(k >> 32); }
/* Unpacks the path; returns its depth, fills *len and *vis. */
int tsp_key_path(const tsp_prob *p, uint64_t key, int *path, int *len, uint32_t *vis);

/* The work queue's binary min-heap of keys, heap[0 .. *count): push (the
 * caller has checked there is room) and pop the smallest (*count > 0).
 * Plain memory operations, so the heap may live in shared memory. */
void tsp_heap_push(uint64_t *heap, int *count, uint64_t k);
uint64_t tsp_heap_pop(uint64_t *heap, int *count);

#endif
