/*
 * granularity.c - diffs follow sdsm_calloc's element size (SMS §5.6): 100
 * ints, each changed in one byte by a rank that is not their home, give one
 * diff run with element granularity and 100 runs with byte granularity.
 */
#define PT_NAME "granularity"
#include "pt.h"

static void round_(int calloc_it)
{
    int me = sdsm_rank();
    int *a = calloc_it ? sdsm_calloc(100, sizeof(int), 0) : sdsm_alloc(100 * sizeof(int), 0);
    sdsm_barrier();
    uint64_t runs0 = pt_stat(SDSM_ST_DIFF_RUNS_MADE), bytes0 = pt_stat(SDSM_ST_DIFF_BYTES_MADE);
    if (me == 1)
        for (int i = 0; i < 100; i++)
            a[i] += 1; /* 0 -> 1: one byte of each int changes */
    sdsm_barrier();
    if (me == 1) {
        PT_CHECK(calloc_it ? "diff runs, sdsm_calloc(100, 4)" : "diff runs, sdsm_alloc", calloc_it ? 1 : 100,
                 pt_stat(SDSM_ST_DIFF_RUNS_MADE) - runs0);
        PT_CHECK(calloc_it ? "diff bytes, sdsm_calloc(100, 4)" : "diff bytes, sdsm_alloc",
                 calloc_it ? 400 : 100, pt_stat(SDSM_ST_DIFF_BYTES_MADE) - bytes0);
    }
    for (int i = 0; i < 100; i++)
        PT_CHECK("a[i] after the barrier", 1, a[i]);
    sdsm_free(a);
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    if (sdsm_nprocs() < 2)
        sdsm_abort(2, "granularity needs 2 ranks or more");
    round_(1);
    round_(0);
    pt_ok();
    return 0;
}
