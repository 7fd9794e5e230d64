/*
 * barrier.c - the global barrier, which is also the memory barrier.
 *
 * Each rank flushes its diffs to the homes (waiting for their acks), then
 * sends the manager the list of pages it wrote since its last release.  The
 * manager merges the lists into (page, writer) pairs, writer -1 when several
 * ranks wrote the page, and sends the result to everyone; each rank applies
 * it (drops stale copies, homes fix their copysets), advances its epoch and
 * lets the application go on.  One round trip when nothing was written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/proto.h"
#include "sync.h"

static _Atomic uint32_t done_count;

/* Manager, service thread only. */
static struct {
    uint64_t *pairs; /* page << 32 | rank */
    size_t    n, cap;
    int       arrived;
    uint8_t  *seen;
} M;

static int manager(void) { return (int)(sdsm_cfg.barrier_manager % sdsm_net_nprocs()); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void finish(void)
{
    if (M.n)
        qsort(M.pairs, M.n, sizeof *M.pairs, cmp_u64);
    uint32_t *out = malloc((M.n ? M.n : 1) * 8);
    size_t k = 0;
    if (!out)
        sdsm_fatal("out of memory merging barrier notices");
    for (size_t i = 0; i < M.n; i++) {
        uint32_t pg = (uint32_t)(M.pairs[i] >> 32);
        int32_t w = (int32_t)(uint32_t)M.pairs[i];
        if (k && out[2 * (k - 1)] == pg) {
            if ((int32_t)out[2 * (k - 1) + 1] != w)
                out[2 * (k - 1) + 1] = (uint32_t)-1;
            continue;
        }
        out[2 * k] = pg;
        out[2 * k + 1] = (uint32_t)w;
        k++;
    }
    int n = sdsm_net_nprocs(), me = sdsm_net_rank();
    for (int r = 0; r < n; r++) /* ourselves last: our epoch must not move before we have sent */
        if (r != me)
            sdsm_net_send(r, SDSM_MSG_BAR_RELEASE, 0, 0, out, k * 8, NULL, 0);
    sdsm_net_send(me, SDSM_MSG_BAR_RELEASE, 0, 0, out, k * 8, NULL, 0);
    free(out);
    M.n = 0;
    M.arrived = 0;
    memset(M.seen, 0, (size_t)n);
}

static int on_arrive(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n = h->len / 4;
    if (sdsm_net_rank() != manager() || M.seen[src])
        return -EPROTO;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg;
        memcpy(&pg, p + 4 * i, 4);
        if (pg >= sdsm_region.npages)
            return -EPROTO;
    }
    if (M.n + n > M.cap) {
        size_t cap = M.cap ? M.cap : 1024;
        while (cap < M.n + n)
            cap *= 2;
        if (!(M.pairs = realloc(M.pairs, cap * sizeof *M.pairs)))
            sdsm_fatal("out of memory collecting barrier notices");
        M.cap = cap;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg;
        memcpy(&pg, p + 4 * i, 4);
        M.pairs[M.n++] = (uint64_t)pg << 32 | (uint32_t)src;
    }
    M.seen[src] = 1;
    if (++M.arrived == sdsm_net_nprocs())
        finish();
    return 0;
}

static int on_release(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (src != manager())
        return -EPROTO;
    int rc = sdsm_proto->barrier_done(p, h->len / 8);
    if (rc)
        sdsm_fatal("barrier manager rank %d sent an invalid barrier release", src);
    sdsm_net_epoch_advance();
    atomic_fetch_add(&done_count, 1);
    sdsm_wake_all(&done_count);
    return 0;
}

int sdsm_barrier_run(void)
{
    uint64_t t0 = sdsm_now_ns();
    const uint32_t *pages;
    uint32_t n;
    sdsm_proto->release(SDSM_SYNC_BARRIER, &pages, &n);
    uint32_t before = atomic_load(&done_count);
    sdsm_net_send(manager(), SDSM_MSG_BAR_ARRIVE, 0, 0, pages, (size_t)n * 4, NULL, 0);
    while (atomic_load(&done_count) == before)
        sdsm_wait_change(&done_count, before);
    sdsm_proto->acquire(SDSM_SYNC_BARRIER);
    sdsm_stat_add(SDSM_ST_BARRIERS, 1);
    sdsm_stat_add(SDSM_ST_BARRIER_WAIT_NS, sdsm_now_ns() - t0);
    return 0;
}

int sdsm_barrier_init(void)
{
    M.seen = calloc((size_t)sdsm_region.nprocs, 1);
    if (!M.seen)
        return -ENOMEM;
    sdsm_msg_set_handler(SDSM_MSG_BAR_ARRIVE, on_arrive);
    sdsm_msg_set_handler(SDSM_MSG_BAR_RELEASE, on_release);
    return 0;
}
