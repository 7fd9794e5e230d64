/*
 * zcopy.c - pages read straight from a same-host home's heap (zero-copy)
 * must hold what a TCP reply would, and the path must be the one expected.
 *
 * Pages are homed cyclically; every rank reads every page after
 *  1. its home wrote it (barrier),
 *  2. another rank wrote it (a diff applied at the home, then barrier),
 *  3. every rank added to it in turn under a lock (diffs at each release),
 * and checks each word.  Then it checks how its pages arrived (argument):
 *   all      every fetched page was read zero-copy, no page byte on the wire
 *   none     no page was read zero-copy (SDSM_ZEROCOPY=0, or ibec, whose
 *            homes send what their serve hook saw)
 *   refused  rank 1 cannot open rank 0's heap (another user): rank 1 gets
 *            its pages over TCP, rank 0 still reads rank 1's heap
 */
#define PT_NAME "zcopy"
#include "pt.h"

#include <string.h>

#include "net/msg.h"

#define NPG    48
#define WORDS  512 /* longs per 4 KiB page */
#define ROUNDS 10

static void check_all(volatile long *a, int n, int phase)
{
    for (int pg = 0; pg < NPG; pg++) {
        volatile long *w = a + (size_t)pg * WORDS;
        for (int k = 64; k < WORDS; k += 64)
            PT_CHECK("a word its home wrote", pg * 1000 + k, w[k]);
        if (phase >= 2)
            PT_CHECK("a word another rank wrote", -(pg + 1), w[8]);
        if (phase >= 3)
            PT_CHECK("a word every rank added to under a lock", ROUNDS * n, w[16]);
    }
}

/* Pages a home sent as bytes though zero-copy was asked for: it was writing
 * one of them (its twin is what readers get meanwhile, serve.c) - a
 * prefetch of the lock rounds' pages can meet that.  Summed over the ranks
 * (they are counted at the homes): shared[0..n) fetched - zc, [n..2n) the
 * declined pages. */
static void check_declined(volatile long *shared, int me, int n, uint64_t fetched, uint64_t zc)
{
    shared[me] = (long)(fetched - zc);
    shared[n + me] = (long)pt_stat(SDSM_ST_ZC_DECLINED);
    sdsm_barrier();
    long missing = 0, declined = 0;
    for (int r = 0; r < n; r++)
        missing += shared[r], declined += shared[n + r];
    PT_CHECK("pages fetched not zero-copy (all ranks) = pages declined at their homes", declined, missing);
}

/* Bytes of the page replies this rank received over TCP ("bytes fetched"
 * counts the pages read zero-copy too). */
static uint64_t wire_bytes(void)
{
    return atomic_load(&sdsm_stats.bytes_recv[SDSM_MSG_FETCH_REP]) +
           atomic_load(&sdsm_stats.bytes_recv[SDSM_MSG_FETCH_RUN]) +
           atomic_load(&sdsm_stats.bytes_recv[SDSM_MSG_FETCH_REPZ]);
}

static void check_path(const char *expect, int me, int n, volatile long *shared)
{
    uint64_t zc = pt_stat(SDSM_ST_ZC_PAGES), fetched = pt_stat(SDSM_ST_PAGES_FETCHED);
    uint64_t wire = wire_bytes();
    if (fetched == 0)
        sdsm_abort(1, "zcopy: rank %d fetched no page", me);
    int all = !strcmp(expect, "all") || (!strcmp(expect, "refused") && me != 1);
    if (!strcmp(expect, "all")) {
        check_declined(shared, me, n, fetched, zc);
        if (fetched == zc)
            PT_CHECK("page bytes fetched over TCP", 0, wire);
    } else if (all) {
        PT_CHECK("pages read zero-copy", fetched, zc);
        PT_CHECK("page bytes fetched over TCP", 0, wire);
    } else {
        PT_CHECK("pages read zero-copy", 0, zc);
        if (wire == 0)
            sdsm_abort(1, "zcopy: rank %d: no page bytes came over TCP", me);
    }
}

int main(int argc, char **argv)
{
    if (sdsm_init(&argc, &argv))
        return 1;
    const char *expect = argc > 1 ? argv[1] : "all";
    int me = sdsm_rank(), n = sdsm_nprocs();
    volatile long *a = sdsm_alloc((size_t)NPG * 4096, SDSM_HOME_CYCLIC);
    for (int pg = me; pg < NPG; pg += n)
        for (int k = 64; k < WORDS; k += 64)
            a[(size_t)pg * WORDS + k] = pg * 1000 + k;
    sdsm_barrier();
    check_all(a, n, 1);
    sdsm_barrier();
    for (int pg = 0; pg < NPG; pg++)
        if ((pg + 1) % n == me)
            a[(size_t)pg * WORDS + 8] = -(pg + 1);
    sdsm_barrier();
    check_all(a, n, 2);
    for (int r = 0; r < ROUNDS; r++) {
        sdsm_lock(1);
        for (int pg = 0; pg < NPG; pg++)
            a[(size_t)pg * WORDS + 16] += 1;
        sdsm_unlock(1);
    }
    sdsm_barrier();
    check_all(a, n, 3);
    volatile long *shared = sdsm_calloc((size_t)2 * n, sizeof(long), 0);
    check_path(expect, me, n, shared);
    pt_ok();
    return 0;
}
