/*
 * private.c - a page nobody else holds costs nothing: each rank writes
 * every page of its own block (homed at it) between barriers, many times.
 * After the first interval (first touch), the writes make no fault and no
 * twin, and each barrier is a single round (one arrival message per rank):
 * there is nothing to send.  Runs under every protocol, from 1 rank up.
 * Then every rank reads its neighbour's block, so the pages are shared from
 * there on, and the values must be right; the counters show the cost of
 * sharing (twins) appear only then.
 *
 * usage: proto_private [pages] [intervals] [shared-rounds]
 */
#define PT_NAME "private"
#include "pt.h"

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    long pages = argc > 1 ? atol(argv[1]) : 64, iters = argc > 2 ? atol(argv[2]) : 100;
    long rounds = argc > 3 ? atol(argv[3]) : 3;
    int me = sdsm_rank(), n = sdsm_nprocs();
    long words = 4096 / sizeof(long), per = pages * words;
    long *a = sdsm_alloc((size_t)(n * per) * sizeof(long), SDSM_HOME_BLOCK);
    long *mine = a + me * per;
    for (long p = 0; p < pages; p++) /* first touch: a fault per page */
        mine[p * words] = -1;
    sdsm_barrier();
    uint64_t wf = pt_stat(SDSM_ST_WRITE_FAULTS), rf = pt_stat(SDSM_ST_READ_FAULTS);
    uint64_t tw = pt_stat(SDSM_ST_TWINS), arr = pt_stat(SDSM_ST_BARRIER_ROUNDS);
    for (long it = 0; it < iters; it++) {
        for (long p = 0; p < pages; p++)
            mine[p * words + it % words] = it;
        sdsm_barrier();
    }
    PT_CHECK("write faults on pages only this rank holds", 0, pt_stat(SDSM_ST_WRITE_FAULTS) - wf);
    PT_CHECK("read faults on pages only this rank holds", 0, pt_stat(SDSM_ST_READ_FAULTS) - rf);
    PT_CHECK("twins of pages only this rank holds", 0, pt_stat(SDSM_ST_TWINS) - tw);
    PT_CHECK("barrier rounds (arrivals) with nothing to send", iters, pt_stat(SDSM_ST_BARRIER_ROUNDS) - arr);

    /* Shared from here on: the neighbour reads, the owner keeps writing. */
    long *next = a + ((me + 1) % n) * per;
    for (long it = 0; it < rounds; it++) {
        for (long p = 0; p < pages; p++)
            mine[p * words] = 1000 * it + me;
        sdsm_barrier();
        for (long p = 0; p < pages; p++)
            PT_CHECK("the neighbour's writes after a barrier", 1000 * it + (me + 1) % n, next[p * words]);
        sdsm_barrier();
    }
    pt_ok();
    return 0;
}
