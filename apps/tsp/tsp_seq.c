/*
 * tsp_seq.c - the sequential branch and bound (tsp_kernel.c), timed whole.
 */
#include <stdio.h>

#include "app.h"
#include "tsp_kernel.h"

int main(int argc, char **argv)
{
    int n = (int)app_pick(argc, argv, "n", 12, 22, 19);
    long seed = app_pick(argc, argv, "seed", 31, 5, 38);
    tsp_prob p;
    if (tsp_prob_init(&p, n, (uint64_t)seed)) {
        fprintf(stderr, "tsp: n must be in [3, %d]\n", TSP_MAXN);
        return 2;
    }
    int tour[TSP_MAXN];
    long nodes;
    app_header("tsp", "seq", 1, "n=%d seed=%ld", n, seed);
    double t0 = app_now();
    int best = tsp_seq_solve(&p, tour, &nodes);
    app_time(app_now() - t0);
    app_result("optimal tour length %d (%ld nodes)", best, nodes);
    return tsp_tour_length(&p, tour) == best ? 0 : 1;
}
