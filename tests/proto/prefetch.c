/*
 * prefetch.c - sdsm_prefetch: a range written by the other ranks, asked for
 * after the barrier, travels as one FETCH per run of up to
 * SDSM_FETCH_RUN_MAX pages per home (instead of one per page: the test runs
 * with SDSM_PREFETCH=0, so without the call every page is a fault and a
 * FETCH), and reads see the values.  Also: a write to a page still on its
 * way, a prefetch overtaken by a barrier whose writes made it stale, pages
 * held or homed here (no request), and bad arguments (SDSM_ERRORS=return).
 *
 *   prefetch            the checks above
 *   prefetch badarg     rank 1 passes a range outside shared memory (the job
 *                       stops with a message naming the call and the rank)
 *   prefetch ibeccheck  (ibec, SDSM_IBEC_CHECK=1) the call asks for nothing
 *                       and the read still faults: the check notes reads at
 *                       their faults, so no page may arrive unread
 */
#define PT_NAME "prefetch"
#include <stdint.h>
#include <string.h>

#include "pt.h"

#define NPG   70 /* pages per block: three requests (33 + 33 + 4) */
#define PS    4096
#define WORDS (NPG * PS / 8)

static int me, np;

static long value(int round, int owner, long i) { return round * 10000000L + owner * 1000000L + i; }

static long *alloc_blocks(long **b)
{
    for (int r = 0; r < np; r++) {
        b[r] = sdsm_alloc(NPG * PS, r);
        if (!b[r])
            sdsm_abort(1, "prefetch: rank %d: sdsm_alloc failed", me);
    }
    return b[me];
}

static void write_own(long **b, int round)
{
    for (long i = 0; i < WORDS; i++)
        b[me][i] = value(round, me, i);
}

static void check_all(long **b, int round, const char *what)
{
    for (int r = 0; r < np; r++)
        for (long i = 0; i < WORDS; i++)
            if (b[r][i] != value(round, r, i))
                sdsm_abort(1, "prefetch: rank %d: %s: block %d word %ld: expected %ld, got %ld", me, what, r,
                           i, value(round, r, i), b[r][i]);
}

/* Every other block, from an address inside its first page to one inside
 * its last (the pages covering the range are asked for). */
static void prefetch_others(long **b)
{
    for (int k = 1; k < np; k++) {
        int r = (me + k) % np;
        PT_CHECK("sdsm_prefetch of another rank's block", 0,
                 sdsm_prefetch((char *)b[r] + 100, (size_t)NPG * PS - 200));
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    me = sdsm_rank();
    np = sdsm_nprocs();
    long *a[64], *b[64];
    if (np > 64)
        sdsm_abort(2, "prefetch: at most 64 ranks");
    uint64_t runs = (NPG + SDSM_FETCH_RUN_MAX - 1) / SDSM_FETCH_RUN_MAX;

    if (argc > 1 && strcmp(argv[1], "badarg") == 0) {
        alloc_blocks(a);
        sdsm_barrier();
        if (me == 1)
            sdsm_prefetch((char *)a[np - 1] + NPG * PS - 8, 4096 * 1024);
        sdsm_barrier();
        pt_ok();
        return 0;
    }

    if (argc > 1 && strcmp(argv[1], "ibeccheck") == 0) {
        volatile long *x = sdsm_alloc(4 * PS, 0);
        if (me == 0)
            x[0] = 42;
        sdsm_barrier();
        if (me == 1) {
            uint64_t q = pt_stat(SDSM_ST_PREFETCH_REQS), f = pt_stat(SDSM_ST_READ_FAULTS);
            PT_CHECK("sdsm_prefetch", 0, sdsm_prefetch((const void *)x, 4 * PS));
            PT_CHECK("prefetch requests in check mode", 0, pt_stat(SDSM_ST_PREFETCH_REQS) - q);
            PT_CHECK("x", 42, x[0]);
            PT_CHECK("read faults (the check sees the read)", 1, pt_stat(SDSM_ST_READ_FAULTS) - f);
        }
        sdsm_barrier();
        pt_ok();
        return 0;
    }

    /* Without the call: one FETCH per page read. */
    alloc_blocks(a);
    write_own(a, 1);
    sdsm_barrier();
    uint64_t f0 = pt_msgs(SDSM_MSG_FETCH);
    check_all(a, 1, "read without prefetch");
    PT_CHECK("FETCH messages without sdsm_prefetch", (uint64_t)(np - 1) * NPG, pt_msgs(SDSM_MSG_FETCH) - f0);

    /* With it: a few requests per home, and the reads fetch nothing more. */
    alloc_blocks(b);
    write_own(b, 2);
    sdsm_barrier();
    f0 = pt_msgs(SDSM_MSG_FETCH);
    uint64_t p0 = pt_stat(SDSM_ST_PREFETCH_PAGES), q0 = pt_stat(SDSM_ST_PREFETCH_REQS);
    prefetch_others(b);
    PT_CHECK("FETCH messages sent by sdsm_prefetch", (uint64_t)(np - 1) * runs, pt_msgs(SDSM_MSG_FETCH) - f0);
    PT_CHECK("pages prefetched (statistics)", (uint64_t)(np - 1) * NPG, pt_stat(SDSM_ST_PREFETCH_PAGES) - p0);
    PT_CHECK("prefetch requests (statistics)", (uint64_t)(np - 1) * runs,
             pt_stat(SDSM_ST_PREFETCH_REQS) - q0);
    check_all(b, 2, "read after prefetch");
    PT_CHECK("FETCH messages after sdsm_prefetch and the reads", (uint64_t)(np - 1) * runs,
             pt_msgs(SDSM_MSG_FETCH) - f0);

    /* Held pages and pages homed here: nothing to ask for. */
    q0 = pt_stat(SDSM_ST_PREFETCH_REQS);
    for (int r = 0; r < np; r++)
        PT_CHECK("sdsm_prefetch of a held block", 0, sdsm_prefetch(b[r], NPG * PS));
    PT_CHECK("requests for held pages", 0, pt_stat(SDSM_ST_PREFETCH_REQS) - q0);

    /* Written while still on its way: each rank writes word 1 + me of every
     * page of the next rank's block right after asking for it (the write
     * fault waits for the reply). */
    sdsm_barrier();
    write_own(a, 3);
    sdsm_barrier();
    prefetch_others(a);
    int next = (me + 1) % np;
    if (next != me)
        for (long pg = 0; pg < NPG; pg++)
            a[next][pg * 512 + 1 + me] = -1 - me;
    sdsm_barrier();
    for (int r = 0; r < np; r++) {
        int writer = (r - 1 + np) % np;
        for (long i = 0; i < WORDS; i++) {
            long want = writer != r && i % 512 == 1 + writer ? -1 - writer : value(3, r, i);
            if (a[r][i] != want)
                sdsm_abort(
                    1,
                    "prefetch: rank %d: written while prefetched: block %d word %ld: expected %ld, got %ld",
                    me, r, i, want, a[r][i]);
        }
    }

    /* Asked for, then overtaken: the owners write while the requests are in
     * flight, and the barrier after makes whatever came back stale. */
    sdsm_barrier();
    prefetch_others(b);
    write_own(b, 4);
    sdsm_barrier();
    check_all(b, 4, "prefetch overtaken by a barrier");

    /* Bad arguments (SDSM_ERRORS=return): an error, nothing asked for. */
    q0 = pt_stat(SDSM_ST_PREFETCH_REQS);
    long local[4];
    PT_CHECK("sdsm_prefetch(NULL, 8)", SDSM_EINVAL, sdsm_prefetch(NULL, 8));
    PT_CHECK("sdsm_prefetch(private memory)", SDSM_EINVAL, sdsm_prefetch(local, sizeof local));
    PT_CHECK("sdsm_prefetch(len SIZE_MAX)", SDSM_EINVAL, sdsm_prefetch(b[0], SIZE_MAX));
    PT_CHECK("sdsm_prefetch(len 0)", 0, sdsm_prefetch(b[0], 0));
    sdsm_barrier();
    long *gone = b[np - 1];
    for (int r = 0; r < np; r++)
        sdsm_free(b[r]);
    PT_CHECK("sdsm_prefetch(freed block)", SDSM_EINVAL, sdsm_prefetch(gone, 8));
    PT_CHECK("requests for bad arguments", 0, pt_stat(SDSM_ST_PREFETCH_REQS) - q0);
    pt_ok();
    return 0;
}
