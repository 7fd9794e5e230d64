/*
 * bigalloc.c - a 1 GiB shared block touched sparsely.
 *
 *   mp_bigalloc [PER_RANK [MAX_RSS_MB]]     (defaults 100, 200)
 *
 * Two 1 GiB blocks (SDSM_HOME_CYCLIC and SDSM_HOME_BLOCK).  Every rank
 * writes one long at PER_RANK scattered offsets of its own in each block,
 * barrier, then every rank reads all N*PER_RANK of them and checks.  The
 * offsets are (j*N + r) * ODD mod 2^27 longs: distinct for every (r, j),
 * spread over the whole GiB.  Finally each rank checks its VmRSS stays
 * below MAX_RSS_MB: only the touched pages may cost memory.
 */
#define MP_NAME "bigalloc"
#include "mp.h"

#define GIB    (1024UL * 1024 * 1024)
#define NLONGS (GIB / sizeof(long)) /* 2^27 */

static size_t slot(long j, int r, int n, uint64_t mul)
{
    return (size_t)(((uint64_t)j * (uint64_t)n + (uint64_t)r) * mul % NLONGS);
}

static long value(size_t idx, int r, int block)
{
    return (long)(idx * 2654435761u) ^ ((long)r << 48) ^ ((long)block << 56);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long per = argc > 1 ? atol(argv[1]) : 100;
    long max_mb = argc > 2 ? atol(argv[2]) : 200;
    int n = sdsm_nprocs(), me = sdsm_rank();
    const int homes[2] = {SDSM_HOME_CYCLIC, SDSM_HOME_BLOCK};
    const uint64_t muls[2] = {1048573, 40503 * 2 + 1};

    volatile long *blk[2];
    for (int b = 0; b < 2; b++) {
        blk[b] = sdsm_alloc(GIB, homes[b]);
        MP_NONNULL(blk[b]);
    }
    for (int b = 0; b < 2; b++)
        for (long j = 0; j < per; j++) {
            size_t i = slot(j, me, n, muls[b]);
            blk[b][i] = value(i, me, b);
        }
    MP_OK(sdsm_barrier());

    for (int b = 0; b < 2; b++)
        for (int r = 0; r < n; r++)
            for (long j = 0; j < per; j++) {
                size_t i = slot(j, r, n, muls[b]);
                MP_CHECK(b ? "block-homed GiB long" : "cyclic-homed GiB long", i, value(i, r, b), blk[b][i]);
            }
    /* A few untouched places read zero, including the very ends. */
    size_t probes[3] = {0, NLONGS / 2 + 3, NLONGS - 1};
    for (int b = 0; b < 2; b++)
        for (int p = 0; p < 3; p++) {
            int written = 0;
            for (int r = 0; r < n && !written; r++)
                for (long j = 0; j < per && !written; j++)
                    written = slot(j, r, n, muls[b]) == probes[p];
            if (!written)
                MP_CHECK("untouched GiB long", probes[p], 0, blk[b][probes[p]]);
        }

    long rss = mp_vm_rss_kb();
    MP_ASSERT(rss > 0, "cannot read VmRSS from /proc/self/status");
    if (rss > max_mb * 1024)
        sdsm_abort(1, "%s: rank %d: VmRSS is %ld kB after touching %ld pages of 2 GiB, limit %ld MB", MP_NAME,
                   me, rss, 2 * per * n, max_mb);
    MP_OK(sdsm_barrier());
    if (me == 0)
        fprintf(stderr, "bigalloc: rank 0 VmRSS %ld kB\n", rss);
    MP_OK(sdsm_free((void *)blk[0]));
    MP_OK(sdsm_free((void *)blk[1]));
    return mp_finish("bigalloc");
}
