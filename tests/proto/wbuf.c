/*
 * wbuf.c - the write buffer (run with SDSM_WRITE_BUFFER=4): each rank writes
 * every page of the next rank's block (homed there), so all but the last
 * few pages' diffs go home early, from the write faults; the values must be
 * right after a barrier, and after a lock handed from rank to rank (a lock
 * release must still make the early diffs visible, and invalidate the other
 * copies, before the next holder reads).  The statistics must show the
 * early diffs (hlrc and update; ibec has no write buffer).
 */
#define PT_NAME "wbuf"
#include <string.h>

#include "core/config.h"
#include "pt.h"

#define NPG   40
#define WORDS 512

static long value(int round, int writer, long pg, long w)
{
    return round * 10000000L + writer * 100000L + pg * WORDS + w;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    const char *proto = sdsm_proto_names[sdsm_cfg.protocol];
    long *blk[64];
    if (np > 64 || np < 2)
        sdsm_abort(2, "wbuf: 2 to 64 ranks");
    for (int r = 0; r < np; r++)
        blk[r] = sdsm_alloc(NPG * 4096, r);
    int next = (me + 1) % np, prev = (me + np - 1) % np;

    /* Barrier: every rank writes its neighbour's block. */
    uint64_t e0 = pt_stat(SDSM_ST_WBUF_FLUSHES);
    for (long pg = 0; pg < NPG; pg++)
        for (long w = 0; w < WORDS; w++)
            blk[next][pg * WORDS + w] = value(1, me, pg, w);
    uint64_t early = pt_stat(SDSM_ST_WBUF_FLUSHES) - e0;
    if (strcmp(proto, "ibec") == 0)
        PT_CHECK("diffs sent early under ibec", 0, early);
    else if (sdsm_cfg.write_buffer && early < NPG / 2)
        sdsm_abort(1, "wbuf: rank %d (%s): %llu diffs sent early for %d pages written, buffer %ld", me, proto,
                   (unsigned long long)early, NPG, sdsm_cfg.write_buffer);
    sdsm_barrier();
    for (long pg = 0; pg < NPG; pg++)
        for (long w = 0; w < WORDS; w++)
            PT_CHECK("the previous rank's writes after a barrier", value(1, prev, pg, w),
                     blk[me][pg * WORDS + w]);
    sdsm_barrier();

    /* Locks: rank by rank, each rewrites rank 0's block under lock 3 and the
     * next holder checks the previous holder's values first. */
    for (int turn = 0; turn < np; turn++) {
        if (turn == me) {
            sdsm_lock(3);
            if (turn > 0)
                for (long pg = 0; pg < NPG; pg++)
                    PT_CHECK("the last holder's writes after its unlock", value(2, turn - 1, pg, 7),
                             blk[0][pg * WORDS + 7]);
            for (long pg = 0; pg < NPG; pg++)
                for (long w = 0; w < WORDS; w++)
                    blk[0][pg * WORDS + w] = value(2, me, pg, w);
            sdsm_unlock(3);
        }
        sdsm_barrier();
    }
    for (long pg = 0; pg < NPG; pg++)
        for (long w = 0; w < WORDS; w++)
            PT_CHECK("the last holder's writes after the barrier", value(2, np - 1, pg, w),
                     blk[0][pg * WORDS + w]);
    pt_ok();
    return 0;
}
