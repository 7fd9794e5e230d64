/*
 * locks.c - the omp lock API: simple and nestable locks living in a
 * global, on main's stack and on the heap; set/unset around updates,
 * test_lock spinning, nested acquisition counts, an array of locks
 * guarding buckets, and locks initialized and destroyed inside a region.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define N       500
#define BUCKETS 8

static omp_lock_t glock;
static long gcount;

int main(void)
{
    omp_lock_t slock; /* on main's stack */
    omp_nest_lock_t nlock;
    omp_lock_t *hlocks = malloc(BUCKETS * sizeof *hlocks); /* on the heap */
    long buckets[BUCKETS] = {0};
    long scount = 0, ncount = 0, depth_ok = 0, tested = 0;

    omp_init_lock(&glock);
    omp_init_lock(&slock);
    omp_init_nest_lock(&nlock);
    for (int b = 0; b < BUCKETS; b++)
        omp_init_lock(&hlocks[b]);

    /* serial: test_lock on a free lock takes it */
    int got = omp_test_lock(&glock);
    omp_unset_lock(&glock);
    ot_check(got == 1, "test_lock on a free lock");

#pragma omp parallel for schedule(dynamic, 7) reduction(+ : depth_ok, tested)
    for (int i = 0; i < N; i++) {
        omp_set_lock(&glock);
        gcount += i;
        omp_unset_lock(&glock);

        while (!omp_test_lock(&slock))
            ;
        scount += 2;
        omp_unset_lock(&slock);
        tested++;

        int d1 = omp_test_nest_lock(&nlock);
        if (!d1) {
            omp_set_nest_lock(&nlock);
            d1 = 1;
        }
        omp_set_nest_lock(&nlock);
        int d3 = omp_test_nest_lock(&nlock); /* owned: always succeeds */
        ncount += 1;
        depth_ok += d1 == 1 && d3 == 3;
        omp_unset_nest_lock(&nlock);
        omp_unset_nest_lock(&nlock);
        omp_unset_nest_lock(&nlock);

        int b = (i * 13) % BUCKETS;
        omp_set_lock(&hlocks[b]);
        buckets[b] += i;
        omp_unset_lock(&hlocks[b]);
    }
    printf("global lock %ld, stack lock %ld, nest lock %ld\n", gcount, scount, ncount);
    ot_check(depth_ok == N, "nest lock: nesting counts 1 and 3");
    ot_check(tested == N, "test_lock loop");
    printf("bucket locks:");
    for (int b = 0; b < BUCKETS; b++)
        printf(" %ld", buckets[b]);
    printf("\n");

    /* a lock made inside the region (by one thread, on the heap) */
    omp_lock_t *made = NULL;
    long inside = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            made = malloc(sizeof *made);
            omp_init_lock(made);
        }
#pragma omp for
        for (int i = 0; i < 300; i++) {
            omp_set_lock(made);
            inside += i % 10;
            omp_unset_lock(made);
        }
#pragma omp single
        {
            omp_destroy_lock(made);
            free(made);
        }
    }
    printf("lock made in a region: %ld\n", inside);

    /* locks held across a barrier-free handoff: a token passed in order */
    int token = 0, order_ok = 1;
#pragma omp parallel for ordered schedule(static, 1) reduction(&& : order_ok)
    for (int i = 0; i < 64; i++) {
#pragma omp ordered
        {
            omp_set_lock(&glock);
            order_ok = order_ok && token == i;
            token++;
            omp_unset_lock(&glock);
        }
    }
    ot_check(order_ok && token == 64, "lock inside ordered");

    omp_destroy_lock(&glock);
    omp_destroy_lock(&slock);
    omp_destroy_nest_lock(&nlock);
    for (int b = 0; b < BUCKETS; b++)
        omp_destroy_lock(&hlocks[b]);
    free(hlocks);
    return ot_done();
}
