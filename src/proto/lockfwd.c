/*
 * lockfwd.c - ibec's lock diffs at a barrier: each home keeps the diffL it
 * applied since the last barrier (inval.c, on_diff), and at the barrier's
 * completion forwards to every other holder of their pages the last value
 * of every byte they wrote, but the bytes whose last diffL is the
 * holder's own.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/home_int.h"

/*
 * ibec, at barrier completion (service thread, epoch already moved on): the
 * diffL this home applied since the last barrier go to every other holder
 * of their pages, acknowledged to sdsm_home_lock_fwd_pending, which
 * barrier_second waits for.  Sent before any frame of the new epoch is
 * handled, so they reach each holder ahead of the diffB forwarded in the
 * second phase.
 *
 * Each holder gets, per page, the last value of every byte a diffL wrote,
 * except the bytes whose last diffL is its own: it has those already, or
 * newer.  A diffL can carry bytes another thread of its rank wrote outside
 * the critical section (the twinL is per page, not per thread), and that
 * thread may have written them again since; given back to the writer, the
 * older value would undo the newer one - after the writer's diffB went, or
 * taking it out of that diffB.
 */
_Atomic uint32_t sdsm_home_lock_fwd_pending;

typedef struct lockfwd_ent {
    uint32_t pg, seq;
    int writer;
    size_t off; /* of the entry's runs in the record buffer */
    uint32_t nb;
} lockfwd_ent_t;

static int cmp_lockfwd(const void *a, const void *b)
{
    const lockfwd_ent_t *x = a, *y = b;
    if (x->pg != y->pg)
        return x->pg < y->pg ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The entries of the records in `in`, sorted by page, in arrival order. */
static lockfwd_ent_t *lockfwd_index(const buf_t *in, uint32_t *count)
{
    uint32_t n = 0;
    for (size_t off = 0; off < in->len; off += 8 + rd32(in->p + off + 4))
        for (size_t e = off + 8; e < off + 8 + rd32(in->p + off + 4); e += 8 + rd32(in->p + e + 4))
            n++;
    lockfwd_ent_t *ent = malloc(((size_t)n + 1) * sizeof *ent);
    if (!ent)
        sdsm_fatal("out of memory forwarding lock diffs");
    n = 0;
    for (size_t off = 0; off < in->len; off += 8 + rd32(in->p + off + 4)) {
        int writer = (int)rd32(in->p + off);
        for (size_t e = off + 8; e < off + 8 + rd32(in->p + off + 4); e += 8 + rd32(in->p + e + 4)) {
            ent[n] = (lockfwd_ent_t){
                .pg = rd32(in->p + e), .seq = n, .writer = writer, .off = e + 8, .nb = rd32(in->p + e + 4)};
            n++;
        }
    }
    qsort(ent, n, sizeof *ent, cmp_lockfwd);
    *count = n;
    return ent;
}

/* One page: the last value and writer of each byte its diffL wrote (val,
 * last), then per holder the bytes last written by someone else. */
static void lockfwd_page(const buf_t *in, const lockfwd_ent_t *ent, uint32_t k, uint8_t *val, uint8_t *twin,
                         int32_t *last)
{
    uint32_t pg = ent[0].pg;
    size_t lo = hs.ps, hi = 0;
    for (size_t b = 0; b < hs.ps; b++)
        last[b] = -1;
    for (uint32_t i = 0; i < k; i++) {
        size_t off = 0, pos = 0, at, n;
        const uint8_t *d;
        while ((d = sdsm_diff_next(in->p + ent[i].off, ent[i].nb, &off, &pos, &at, &n))) {
            memcpy(val + at, d, n);
            for (size_t b = at; b < at + n; b++)
                last[b] = ent[i].writer;
            if (n && at < lo)
                lo = at;
            if (n && at + n > hi)
                hi = at + n;
        }
    }
    if (lo >= hi)
        return;
    sdsm_page_lock(pg);
    for (int r = 0; r < hs.n; r++) {
        if (r == hs.me || !sdsm_copyset_has(pg, r))
            continue;
        /* twin differs from val exactly where r is to get val */
        memcpy(twin, val, hs.ps);
        for (size_t b = lo; b < hi; b++)
            if (last[b] >= 0 && last[b] != r)
                twin[b] = (uint8_t)~val[b];
        sdsm_buf_reserve(&hs.fwd[r], 8 + sdsm_diff_bound(hs.ps));
        uint8_t *e = hs.fwd[r].p + hs.fwd[r].len;
        uint32_t nb = (uint32_t)sdsm_diff_encode(twin, val, hs.ps, 1, 0, e + 8, NULL, NULL);
        if (!nb)
            continue;
        memcpy(e, &pg, 4);
        memcpy(e + 4, &nb, 4);
        hs.fwd[r].len += 8 + nb;
    }
    sdsm_page_unlock(pg);
}

void sdsm_home_forward_lock_diffs(void)
{
    pthread_mutex_lock(&hs.lockfwd_mtx);
    buf_t in = hs.lockfwd;
    hs.lockfwd = (buf_t){0};
    pthread_mutex_unlock(&hs.lockfwd_mtx);
    if (!in.len)
        return;
    uint32_t n;
    lockfwd_ent_t *ent = lockfwd_index(&in, &n);
    uint8_t *val = malloc(2 * hs.ps);
    int32_t *last = malloc(hs.ps * sizeof *last);
    if (!val || !last)
        sdsm_fatal("out of memory forwarding lock diffs");
    for (uint32_t i = 0; i < n;) {
        uint32_t k = 1;
        while (i + k < n && ent[i + k].pg == ent[i].pg)
            k++;
        lockfwd_page(&in, ent + i, k, val, val + hs.ps, last);
        i += k;
    }
    for (int r = 0; r < hs.n; r++)
        if (hs.fwd[r].len) {
            atomic_fetch_add(&sdsm_home_lock_fwd_pending, 1);
            sdsm_net_send(r, SDSM_MSG_FWD_DIFF, 2, 0, hs.fwd[r].p, hs.fwd[r].len, NULL, 0);
            hs.fwd[r].len = 0;
        }
    free(val);
    free(last);
    free(ent);
    free(in.p);
}
