/*
 * bardiff.c - a barrier's diffs to the rank its arrival goes to travel
 * without an acknowledgement (that rank applies them before it reads the
 * arrival behind them), the others with one, and the values are right
 * either way.
 *
 * One page per rank, homed there.  Round r: every rank writes its slot of
 * page r % n (the others' writes are diffs to that page's home), then a
 * barrier whose manager is that home in odd rounds and the next rank in
 * even ones; then every rank reads every slot of the page.  A manager that
 * released the barrier before applying a diff shows as a stale slot.
 * Counted (hlrc and update, central barrier): the acknowledgements each
 * rank sent as a home are those of the diffs whose sender's arrival went
 * elsewhere (every diff acknowledged, as before, fails that check).
 */
#define PT_NAME "bardiff"
#include "pt.h"

#include "core/config.h"
#include "sync/sync.h"

#define ROUNDS 60
#define SLOTS  512 /* longs in a 4 KiB page */

static long value(int round, int rank) { return 1000L * (round + 1) + rank; }

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    if (n < 2)
        sdsm_abort(2, "%s needs 2 ranks or more", PT_NAME);
    volatile long *a = sdsm_calloc((size_t)n * SLOTS, sizeof(long), SDSM_HOME_BLOCK);
    for (int k = 0; k < n; k++)
        if (sdsm_home_of((const void *)(a + (long)k * SLOTS)) != k)
            sdsm_abort(1, "%s: page %d is not homed at rank %d", PT_NAME, k, k);
    /* ibec makes its own release; the tree sends arrivals to parents. */
    int counted = sdsm_cfg.protocol != SDSM_PROTO_IBEC && !sdsm_barrier_is_tree();
    uint64_t acks0 = pt_msgs(SDSM_MSG_DIFF_ACK), diffs0 = pt_msgs(SDSM_MSG_DIFF);
    long expect_acks = 0, expect_diffs = 0;
    sdsm_barrier(); /* nobody's diffs before everybody's counts start */
    for (int r = 0; r < ROUNDS; r++) {
        int home = r % n, manager = r % 2 ? home : (home + 1) % n;
        volatile long *pg = a + (long)home * SLOTS;
        pg[me] = value(r, me);
        if (me != home)
            expect_diffs++;
        else if (manager != me)
            expect_acks += n - 1;
        sdsm_barrier_at(manager);
        for (int k = 0; k < n; k++)
            if (pg[k] != value(r, k))
                sdsm_abort(1, "%s: rank %d: round %d (home %d, manager %d): slot %d: expected %ld, got %ld",
                           PT_NAME, me, r, home, manager, k, value(r, k), pg[k]);
        sdsm_barrier();
    }
    if (counted) {
        PT_CHECK("diffs sent", expect_diffs, pt_msgs(SDSM_MSG_DIFF) - diffs0);
        PT_CHECK("diff acknowledgements sent as a home", expect_acks, pt_msgs(SDSM_MSG_DIFF_ACK) - acks0);
    }
    sdsm_free((void *)a);
    pt_ok();
    return 0;
}
