/*
 * batch.c - the helpers every part of the home-based protocols uses: a
 * growing buffer, a batch of diffs (or bare write notices) and its sending
 * to a home, whether other ranks hold a copy of a page, and the per-page
 * arrays of the state (mapped, so untouched pages cost nothing).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/log.h"
#include "core/stats.h"
#include "core/trace.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/home_int.h"

void sdsm_buf_reserve(buf_t *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more)
        cap *= 2;
    if (!(b->p = realloc(b->p, cap)))
        sdsm_fatal("out of memory building a diff batch");
    b->cap = cap;
}

/* Append pg's diff (or, with twin == NULL, a bare write notice) to b. */
void sdsm_batch_add(buf_t *b, uint32_t pg, const uint8_t *twin)
{
    sdsm_buf_reserve(b, 8 + sdsm_diff_bound(hs.ps));
    uint8_t *e = b->p + b->len;
    uint32_t nb = 0;
    if (twin) {
        uint64_t t0 = sdsm_trace_t0();
        const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
        size_t gran = a ? a->elem : 1, nruns, ndata;
        size_t phase = a && gran > 1 ? ((size_t)(pg - a->first) * hs.ps) % gran : 0;
        nb = (uint32_t)sdsm_diff_encode(twin, sdsm_page_rt(pg), hs.ps, gran, phase, e + 8, &nruns, &ndata);
        sdsm_stat_add(SDSM_ST_DIFFS_MADE, 1);
        sdsm_stat_add(SDSM_ST_DIFF_BYTES_MADE, ndata);
        sdsm_stat_add(SDSM_ST_DIFF_RUNS_MADE, nruns);
        sdsm_stat_add(SDSM_ST_DIFF_WIRE_BYTES, 8 + (uint64_t)nb);
        SDSM_TRACE(SDSM_TR_DIFF_MADE, t0, pg, ndata, 8 + (uint64_t)nb);
    }
    memcpy(e, &pg, 4);
    memcpy(e + 4, &nb, 4);
    b->len += 8 + nb;
}

int sdsm_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int sdsm_copyset_others(uint32_t pg)
{
    const sdsm_page_t *m = sdsm_page(pg);
    if (!m->copyset)
        return 0;
    for (size_t w = 0; w < sdsm_region.copyset_words; w++) {
        uint64_t bits = m->copyset[w];
        if (w == (size_t)hs.me / 64)
            bits &= ~(1ull << (hs.me % 64));
        if (bits)
            return 1;
    }
    return 0;
}

void sdsm_batch_send(buf_t *b, int home, unsigned flags, sdsm_rpc_t *r, uint32_t id)
{
    if (!b->len)
        return;
    if (!(flags & SDSM_DIFF_NOACK))
        sdsm_rpc_expect(r, 1);
    sdsm_net_send(home, SDSM_MSG_DIFF, flags, id, b->p, b->len, NULL, 0);
    b->len = 0;
}

void *sdsm_home_map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *sdsm_home_per_page(size_t elem) { return sdsm_home_map_zeroed((size_t)sdsm_region.npages * elem); }
