/*
 * barrier.c - the global barrier, which is also the memory barrier.
 *
 * Each rank completes its release (the protocol flushes its diffs to the
 * homes and waits for them), then sends the manager the pages it wrote since
 * its last release and any home moves (sdsm_set_home) it asked for.  The
 * manager merges the pages into (page, writer) pairs, writer -1 when several
 * ranks wrote the page, and sends the result to everyone; each rank lets the
 * protocol apply it, advances its epoch and lets the application go on.  One
 * round trip when nothing was written.  Home moves, when there are any, are
 * carried out right after, followed by one more barrier so nobody fetches a
 * page from its new home before the contents have arrived there.
 *
 * Every arrival carries the collective call it belongs to (core/coll.h), so
 * the manager sees at once a rank that is in another collective call; when
 * the manager is not rank 0, an announcement to rank 0 (which also checks
 * the allocations) catches ranks that named different managers.
 *
 * ARRIVE:  u32 flags, sdsm_coll_t call, u32 npages, u32 pages[npages], move_t moves[]
 * RELEASE: u32 flags (ORed), u32 npairs, {u32 page, i32 writer}[npairs], move_t moves[]
 * A protocol that sets a flag gets a second phase and one more round.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/waits.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/proto.h"
#include "sync.h"

typedef struct move {
    uint32_t first, count;
    int32_t  rank;
} move_t;
_Static_assert(sizeof(move_t) == 12, "move on the wire");

static _Atomic uint32_t done_count;
static int              cur_manager;  /* manager of the barrier in progress */
static uint8_t         *moves_in;     /* moves of the last barrier (service -> app) */
static uint32_t         nmoves_in;
static pthread_mutex_t  pend_mtx = PTHREAD_MUTEX_INITIALIZER;
static move_t          *pend;         /* sdsm_set_home calls not yet announced */
static uint32_t         npend, cappend;
static uint32_t         flags_in;     /* ORed protocol flags of the last barrier */

/* Manager state, handlers only. */
static struct {
    uint64_t *pairs; /* page << 32 | rank */
    size_t    n, cap;
    uint8_t  *moves;
    size_t    mlen;
    uint32_t  flags;
    int       arrived;
    uint8_t  *seen;
} M;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void finish(void)
{
    if (M.n)
        qsort(M.pairs, M.n, sizeof *M.pairs, cmp_u64);
    uint32_t *out = malloc(8 + M.n * 8 + M.mlen);
    uint32_t k = 0;
    if (!out)
        sdsm_fatal("out of memory merging barrier notices");
    uint32_t *pairs = out + 2;
    for (size_t i = 0; i < M.n; i++) {
        uint32_t pg = (uint32_t)(M.pairs[i] >> 32);
        int32_t w = (int32_t)(uint32_t)M.pairs[i];
        if (k && pairs[2 * (k - 1)] == pg) {
            if ((int32_t)pairs[2 * (k - 1) + 1] != w)
                pairs[2 * (k - 1) + 1] = (uint32_t)-1;
            continue;
        }
        pairs[2 * k] = pg;
        pairs[2 * k + 1] = (uint32_t)w;
        k++;
    }
    out[0] = M.flags;
    out[1] = k;
    if (M.mlen)
        memcpy(pairs + 2 * k, M.moves, M.mlen);
    size_t len = 8 + (size_t)k * 8 + M.mlen;
    int n = sdsm_net_nprocs(), me = sdsm_net_rank();
    for (int r = 0; r < n; r++) /* ourselves last: our epoch must not move before we have sent */
        if (r != me)
            sdsm_net_send(r, SDSM_MSG_BAR_RELEASE, 0, 0, out, len, NULL, 0);
    sdsm_net_send(me, SDSM_MSG_BAR_RELEASE, 0, 0, out, len, NULL, 0);
    free(out);
    M.n = 0;
    M.mlen = 0;
    M.flags = 0;
    M.arrived = 0;
    memset(M.seen, 0, (size_t)n);
}

static int check_moves(const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += 12) {
        move_t m;
        memcpy(&m, p + off, 12);
        if (m.rank < 0 || m.rank >= sdsm_net_nprocs() || m.first >= sdsm_region.npages ||
            m.count > sdsm_region.npages - m.first)
            return -EPROTO;
    }
    return 0;
}

static int on_arrive(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n, fl;
    sdsm_coll_t call;
    if (h->len < 8 + sizeof call)
        return -EPROTO;
    memcpy(&fl, p, 4);
    memcpy(&call, p + 4, sizeof call);
    if (sdsm_coll_check(src, &call))
        return -EPROTO;
    M.flags |= fl; /* only read once every rank has arrived */
    p += 4 + sizeof call;
    sdsm_hdr_t hh = *h;
    hh.len -= 4 + sizeof call;
    h = &hh;
    memcpy(&n, p, 4);
    if (M.seen[src] || n > (h->len - 4) / 4 || (h->len - 4 - 4 * (size_t)n) % 12)
        return -EPROTO;
    const uint8_t *mv = p + 4 + 4 * (size_t)n;
    size_t mlen = h->len - 4 - 4 * (size_t)n;
    if (check_moves(mv, mlen))
        return -EPROTO;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg;
        memcpy(&pg, p + 4 + 4 * i, 4);
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
        memcpy(&pg, p + 4 + 4 * i, 4);
        M.pairs[M.n++] = (uint64_t)pg << 32 | (uint32_t)src;
    }
    if (mlen) {
        if (!(M.moves = realloc(M.moves, M.mlen + mlen)))
            sdsm_fatal("out of memory collecting home moves");
        memcpy(M.moves + M.mlen, mv, mlen);
        M.mlen += mlen;
    }
    M.seen[src] = 1;
    if (++M.arrived == sdsm_net_nprocs())
        finish();
    return 0;
}

static int on_release(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t k;
    if (h->len < 8)
        return -EPROTO;
    memcpy(&flags_in, p, 4);
    p += 4;
    sdsm_hdr_t hh = *h;
    hh.len -= 4;
    h = &hh;
    memcpy(&k, p, 4);
    if (src != cur_manager || k > (h->len - 4) / 8 || (h->len - 4 - 8 * (size_t)k) % 12)
        return -EPROTO;
    const uint8_t *pairs = p + 4, *mv = p + 4 + 8 * (size_t)k;
    size_t mlen = h->len - 4 - 8 * (size_t)k;
    if (check_moves(mv, mlen) || sdsm_proto->barrier_done(pairs, k))
        sdsm_fatal("barrier manager rank %d sent an invalid barrier release", src);
    /* Moves ride on the first round's release only: a second round (the
     * protocol's flags) must not erase them before they are applied. */
    if (mlen) {
        free(moves_in);
        if (!(moves_in = malloc(mlen)))
            sdsm_fatal("out of memory for %zu home moves", mlen / 12);
        memcpy(moves_in, mv, mlen);
        nmoves_in = (uint32_t)(mlen / 12);
    }
    sdsm_net_epoch_advance();
    sdsm_proto->barrier_after(pairs, k);
    atomic_fetch_add(&done_count, 1);
    sdsm_wake_all(&done_count);
    return 0;
}

static int barrier_round(int manager)
{
    const uint32_t *pages;
    uint32_t n;
    sdsm_proto->release(SDSM_SYNC_BARRIER, &pages, &n);
    pthread_mutex_lock(&pend_mtx);
    const sdsm_coll_t *call = sdsm_coll_current();
    size_t head = 4 + sizeof *call + 4;
    size_t len = head + (size_t)n * 4 + (size_t)npend * 12;
    uint8_t *msg = malloc(len);
    if (!msg)
        sdsm_fatal("out of memory");
    uint32_t fl = sdsm_proto->barrier_flags();
    memcpy(msg, &fl, 4);
    memcpy(msg + 4, call, sizeof *call);
    memcpy(msg + head - 4, &n, 4);
    if (n)
        memcpy(msg + head, pages, (size_t)n * 4);
    if (npend)
        memcpy(msg + head + (size_t)n * 4, pend, (size_t)npend * 12);
    npend = 0;
    pthread_mutex_unlock(&pend_mtx);
    cur_manager = manager;
    uint32_t before = atomic_load(&done_count);
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_COLL, manager);
    sdsm_net_send(manager, SDSM_MSG_BAR_ARRIVE, 0, 0, msg, len, NULL, 0);
    free(msg);
    while (atomic_load(&done_count) == before)
        sdsm_wait_change(&done_count, before);
    sdsm_wait_leave(&sv);
    return 0;
}

static int on_coll(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    sdsm_coll_t call;
    memcpy(&call, p, sizeof call);
    if (sdsm_net_rank() != 0 || h->len != sizeof call)
        return -EPROTO;
    return sdsm_coll_check(src, &call);
}

/* One barrier: one round, a second when a protocol has something to send
 * after the first (its flags), one more after home moves.  The protocol's
 * acquire runs once, at the end. */
int sdsm_barrier_run_at(int manager)
{
    uint64_t t0 = sdsm_now_ns();
    if (manager != 0) /* rank 0 sees every collective call, whoever manages this one */
        sdsm_net_send(0, SDSM_MSG_COLL, 0, 0, sdsm_coll_current(), sizeof(sdsm_coll_t), NULL, 0);
    barrier_round(manager);
    if (flags_in) {
        sdsm_proto->barrier_second();
        barrier_round(manager);
    }
    if (nmoves_in) {
        sdsm_home_apply_moves(moves_in, nmoves_in);
        nmoves_in = 0;
        barrier_round(manager); /* new homes hold their pages before anyone asks */
    }
    sdsm_proto->acquire(SDSM_SYNC_BARRIER);
    sdsm_stat_add(SDSM_ST_BARRIERS, 1);
    sdsm_stat_add(SDSM_ST_BARRIER_WAIT_NS, sdsm_now_ns() - t0);
    SDSM_TRACE(SDSM_TR_BARRIER, t0, atomic_load(&sdsm_stats.v[SDSM_ST_BARRIERS]), manager, 0);
    return 0;
}

int sdsm_barrier_run(void)
{
    return sdsm_barrier_run_at((int)(sdsm_cfg.barrier_manager % sdsm_net_nprocs()));
}

int sdsm_barrier_describe(char *buf, size_t len)
{
    int n = sdsm_net_nprocs(), shown = 0;
    if (!M.arrived || !len)
        return 0;
    size_t off = (size_t)snprintf(buf, len, "manages a barrier that %d of %d ranks reached; waiting for rank%s",
                                  M.arrived, n, n - M.arrived > 1 ? "s" : "");
    for (int r = 0; r < n && off < len; r++)
        if (!M.seen[r] && shown++ < 16)
            off += (size_t)snprintf(buf + off, len - off, shown > 1 ? ", %d" : " %d", r);
    if (shown > 16 && off < len)
        snprintf(buf + off, len - off, " and %d more", shown - 16);
    return 1;
}

int sdsm_barrier_add_move(uint32_t first, uint32_t count, int rank)
{
    pthread_mutex_lock(&pend_mtx);
    if (npend == cappend) {
        uint32_t cap = cappend ? 2 * cappend : 16;
        move_t *m = realloc(pend, cap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&pend_mtx);
            return -ENOMEM;
        }
        pend = m;
        cappend = cap;
    }
    pend[npend++] = (move_t){first, count, rank};
    pthread_mutex_unlock(&pend_mtx);
    return 0;
}

int sdsm_barrier_init(void)
{
    M.seen = calloc((size_t)sdsm_region.nprocs, 1);
    if (!M.seen)
        return -ENOMEM;
    sdsm_msg_set_handler(SDSM_MSG_BAR_ARRIVE, on_arrive);
    sdsm_msg_set_handler(SDSM_MSG_BAR_RELEASE, on_release);
    sdsm_msg_set_handler(SDSM_MSG_COLL, on_coll);
    return 0;
}
