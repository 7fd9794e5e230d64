/*
 * update.c - SDSM_PROTOCOL=update: a copy read before a barrier is kept
 * valid across it - the home pushes the new contents - so reading it after
 * the barrier fetches nothing and sees the new values.
 */
#define PT_NAME "update"
#include "pt.h"

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank();
    volatile long *a = sdsm_alloc(4 * 4096, 0); /* 4 pages at rank 0 */
    long sum = 0;
    for (int round = 1; round <= 3; round++) {
        if (me != 0)
            for (int i = 0; i < 4 * 512; i += 64)
                sum += a[i]; /* hold a copy of every page */
        sdsm_barrier();
        if (me == 0)
            for (int i = 0; i < 4 * 512; i++)
                a[i] = round * 100000 + i;
        uint64_t fetched = pt_stat(SDSM_ST_PAGES_FETCHED), pushed = pt_stat(SDSM_ST_PAGES_UPDATED);
        sdsm_barrier();
        for (int i = 0; i < 4 * 512; i++)
            PT_CHECK("a[i] after the barrier", round * 100000 + i, a[i]);
        if (me != 0) {
            PT_CHECK("pages fetched after the barrier", 0, pt_stat(SDSM_ST_PAGES_FETCHED) - fetched);
            PT_CHECK("pages pushed by the home", 4, pt_stat(SDSM_ST_PAGES_UPDATED) - pushed);
        }
    }
    (void)sum;
    pt_ok();
    return 0;
}
