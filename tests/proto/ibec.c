/*
 * ibec.c - SDSM_PROTOCOL=ibec: writes made inside L's critical section reach
 * the next acquirer of L without any barrier, a chain of L's holders carries
 * them around all ranks, and after a barrier every rank agrees on all memory.
 */
#define PT_NAME "ibec"
#include "pt.h"

#define L 5
#define W 32 /* longs each rank writes per lap */

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    volatile long *turn = sdsm_calloc(1, sizeof(long), n - 1);
    long *data = sdsm_calloc((size_t)n * W, sizeof(long), 0); /* one page, all ranks */
    long *own = sdsm_calloc((size_t)n * 512, sizeof(long), SDSM_HOME_BLOCK);
    for (int lap = 0; lap < 3; lap++) {
        /* The token goes round: rank r waits (polling under L) for its turn,
         * checks every earlier holder's writes made under L, adds its own. */
        for (;;) {
            sdsm_lock(L);
            long t = *turn;
            if (t == (long)lap * n + me)
                break;
            sdsm_unlock(L);
        }
        for (int r = 0; r < n; r++)
            for (int k = 0; k < W; k++) {
                long want = r < me ? lap * 1000 + r * 100 + k : (lap ? (lap - 1) * 1000 + r * 100 + k : 0);
                PT_CHECK("data written under the lock by an earlier holder", want, data[r * W + k]);
            }
        for (int k = 0; k < W; k++)
            data[me * W + k] = lap * 1000 + me * 100 + k;
        *turn = (long)lap * n + me + 1;
        sdsm_unlock(L);
    }
    /* Outside any lock, then a barrier: everyone sees everything. */
    for (int k = 0; k < 512; k++)
        own[me * 512 + k] = me * 10000 + k;
    sdsm_barrier();
    for (int r = 0; r < n; r++) {
        for (int k = 0; k < 512; k++)
            PT_CHECK("own[] after the barrier", r * 10000 + k, own[r * 512 + k]);
        for (int k = 0; k < W; k++)
            PT_CHECK("data[] after the barrier", 2 * 1000 + r * 100 + k, data[r * W + k]);
    }
    PT_CHECK("turn after the barrier", 3L * n, *turn);
    pt_ok();
    return 0;
}
