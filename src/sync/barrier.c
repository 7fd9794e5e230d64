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
 * The tree barrier (SDSM_BARRIER=tree) does the same along a FANOUT-ary
 * tree rooted at the manager, in O(log P) message latencies instead of the
 * manager's P-1 receptions and P-1 sends in a row: each rank waits for
 * itself and its children, merges their (page, writer) pairs as the manager
 * would, and sends the merged pairs, flags and moves to its parent (BAR_UP,
 * which also carries its collective call, so a mismatch is caught on the
 * way: every rank compares its children's calls with its own).  The root
 * builds the release, which each rank forwards to its children before it
 * applies it itself, so it always leaves with the epoch it arrived with.
 * Both kinds send 2(P-1) messages per round.
 *
 * ARRIVE:  u32 flags, sdsm_coll_t call, u32 npages, u32 pages[npages], move_t moves[]
 * UP:      u32 flags (ORed), sdsm_coll_t call, u32 root, u32 npairs, pairs[npairs], moves[]
 * RELEASE: u32 flags (ORed), u32 npairs, u32 plen, payload[plen],
 *          {u32 page, i32 writer}[npairs], move_t moves[]
 * The payload is what the manager's caller gave sdsm_barrier_set_payload
 * (the first round's release only): a fork of OpenMP's team carries its
 * region there, which the workers would otherwise fetch from a page the
 * master just wrote.
 * A protocol that sets a flag gets a second phase and one more round.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/trace.h"
#include "core/blocked.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/proto.h"
#include "sync.h"

typedef struct move {
    uint32_t first, count;
    int32_t rank; /* in an arrival, | MOVE_PROPOSED: a migration the manager may drop */
} move_t;
_Static_assert(sizeof(move_t) == 12, "move on the wire");

/* A one-page move a writer proposes (proto/migrate.c): kept only if the
 * merged notices name it the page's only writer. */
#define MOVE_PROPOSED 0x40000000

/* Header flag of a BAR_UP or BAR_RELEASE a rank posts to itself, read from
 * its host's stage (hoststage.c): an UP of the rank in the header's seq, or
 * the release of this rank's parent. */
#define BAR_STAGE 1

/* Children per rank in the tree barrier among the ranks of a host, and
 * among the hosts' leaders (measured: see docs/developers.md,
 * 'Micro-benchmarks'). */
#define FANOUT      4
#define HOST_FANOUT 16

static _Atomic uint32_t done_count;
static _Atomic int collecting; /* this rank reads its host's arrivals in the stage */
static int cur_manager;        /* manager of the barrier in progress */
static int cur_tree;           /* ... and whether it runs as a tree */
static uint8_t *moves_in;      /* moves of the last barrier (service -> app) */
static uint32_t nmoves_in;
static pthread_mutex_t pend_mtx = PTHREAD_MUTEX_INITIALIZER;
static move_t *pend; /* sdsm_set_home calls not yet announced */
static uint32_t npend, cappend;
static uint32_t flags_in; /* ORed protocol flags of the last barrier */

/* The payload of the manager's next release (out, under pend_mtx until this
 * rank's arrival takes it into rel) and of the last release (in). */
static struct {
    uint8_t out[SDSM_BARRIER_PAYLOAD_MAX], rel[SDSM_BARRIER_PAYLOAD_MAX], in[SDSM_BARRIER_PAYLOAD_MAX];
    uint32_t out_len, rel_len, in_len;
} payload;

/* Manager state, handlers only. */
static struct {
    uint64_t *pairs; /* page << 32 | rank */
    size_t n, cap;
    uint8_t *moves;
    size_t mlen;
    uint32_t flags;
    int arrived;
    uint8_t *seen;
    /* tree only */
    int root;         /* of the tree this round runs on (valid while arrived > 0) */
    int expect;       /* arrivals that complete this rank's subtree: itself and its children */
    sdsm_coll_t call; /* this rank's own call, passed up */
} mgr;

int sdsm_barrier_is_tree(void)
{
    switch (sdsm_cfg.barrier_kind) {
    case SDSM_BARRIER_CENTRAL: return 0;
    case SDSM_BARRIER_TREE: return 1;
    default:
        /* auto: the tree where the job spans hosts, else central.  On one
         * host (bench/barrier, 2 to 64 ranks on 2 CPUs) the tree never
         * won: every level is one more wake-up on the path, and the ranks
         * share the CPUs anyway, so the manager's P-1 receptions in a row
         * cost no more than a tree's.  Across hosts the tree goes by host
         * (topo.c) and crosses the network once per level of the hosts'
         * tree, which is the central barrier among the leaders up to
         * HOST_FANOUT + 1 hosts: with one rank per host it is the central
         * barrier (8 emulated hosts, lan profile: tree / central 1.00-1.02),
         * with several it leaves the network to the leaders (8 hosts x 8
         * ranks: 0.38-0.42 of the central barrier's time; 4 x 2 0.66-0.87,
         * 4 x 4 0.57-0.71 with the hosts' fanout of 4; docs/developers.md,
         * "Micro-benchmarks"). */
        return sdsm_topo_hosts() > 1 || sdsm_stage_on();
    }
}

/* The tree's shape (topo.c: by host, then by rank). */
static int tree_parent(int r, int root) { return sdsm_topo_parent(r, root); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The writer of pg in the merged pairs[0, k): a rank, -1 for several, -2 if none. */
static int merged_writer(const uint32_t *pairs, uint32_t k, uint32_t pg)
{
    uint32_t lo = 0, hi = k;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k && pairs[2 * lo] == pg ? (int32_t)pairs[2 * lo + 1] : -2;
}

/* At the manager (root): proposed migrations (moves[0, *mlen)) whose page
 * the merged pairs name the proposer as the only writer of stay, as plain
 * moves; the others go.  Explicit moves stay as they are. */
static void keep_proposals(const uint32_t *pairs, uint32_t k, uint8_t *moves, size_t *mlen)
{
    size_t out = 0;
    for (size_t off = 0; off < *mlen; off += 12) {
        move_t m;
        memcpy(&m, moves + off, 12);
        if (m.rank & MOVE_PROPOSED) {
            m.rank &= ~MOVE_PROPOSED;
            if (merged_writer(pairs, k, m.first) != m.rank)
                continue;
            sdsm_stat_add(SDSM_ST_MIGRATIONS, 1);
        }
        memcpy(moves + out, &m, 12);
        out += 12;
    }
    *mlen = out;
}

/* Sorted, one pair per page (writer -1 when several ranks wrote it), with
 * the moves after them: the body of UP and RELEASE after their heads.
 * final: the release (proposed moves decided), not a tree node's UP. */
static uint8_t *merge(size_t head, uint32_t *npairs, size_t *len, int final)
{
    if (mgr.n)
        qsort(mgr.pairs, mgr.n, sizeof *mgr.pairs, cmp_u64);
    uint8_t *out = malloc(head + mgr.n * 8 + mgr.mlen);
    uint32_t k = 0;
    if (!out)
        sdsm_fatal("out of memory merging barrier notices");
    uint32_t *pairs = (uint32_t *)(out + head);
    for (size_t i = 0; i < mgr.n; i++) {
        uint32_t pg = (uint32_t)(mgr.pairs[i] >> 32);
        int32_t w = (int32_t)(uint32_t)mgr.pairs[i];
        if (k && pairs[2 * (k - 1)] == pg) {
            if ((int32_t)pairs[2 * (k - 1) + 1] != w)
                pairs[2 * (k - 1) + 1] = (uint32_t)-1;
            continue;
        }
        pairs[2 * k] = pg;
        pairs[2 * k + 1] = (uint32_t)w;
        k++;
    }
    if (final && mgr.mlen)
        keep_proposals(pairs, k, mgr.moves, &mgr.mlen);
    if (mgr.mlen)
        memcpy(out + head + (size_t)k * 8, mgr.moves, mgr.mlen);
    *npairs = k;
    *len = head + (size_t)k * 8 + mgr.mlen;
    return out;
}

static void reset(void)
{
    mgr.n = 0;
    mgr.mlen = 0;
    mgr.flags = 0;
    mgr.arrived = 0;
    mgr.expect = 0;
    memset(mgr.seen, 0, (size_t)sdsm_net_nprocs());
}

static int apply_release(int src, const uint8_t *p, size_t len);

/* A tree node's release to its children: those of other hosts first (the
 * network is the longer way), then those of its host, through the host's
 * stage where there is one. */
static void forward(int me, int root, const uint8_t *p, size_t len)
{
    const int *kids;
    int nc = sdsm_topo_kids(me, root, &kids), local = 0;
    for (int i = 0; i < nc; i++) {
        if (sdsm_stage_local(kids[i]))
            local++;
        else
            sdsm_net_send(kids[i], SDSM_MSG_BAR_RELEASE, 0, 0, p, len, NULL, 0);
    }
    if (local && sdsm_stage_release(p, len))
        return;
    for (int i = 0; i < nc; i++)
        if (sdsm_stage_local(kids[i]))
            sdsm_net_send(kids[i], SDSM_MSG_BAR_RELEASE, 0, 0, p, len, NULL, 0);
}

/* Every rank of the barrier (or of the tree) arrived, at its manager (root):
 * release the others, then ourselves, so our epoch moves after the sends. */
static void finish(void)
{
    uint32_t k, plen = payload.rel_len;
    size_t len;
    uint8_t *out = merge(12 + plen, &k, &len, 1);
    memcpy(out, &mgr.flags, 4);
    memcpy(out + 4, &k, 4);
    memcpy(out + 8, &plen, 4);
    memcpy(out + 12, payload.rel, plen);
    payload.rel_len = 0;
    int n = sdsm_net_nprocs(), me = sdsm_net_rank();
    if (cur_tree) {
        forward(me, me, out, len);
    } else {
        for (int r = 0; r < n; r++)
            if (r != me)
                sdsm_net_send(r, SDSM_MSG_BAR_RELEASE, 0, 0, out, len, NULL, 0);
    }
    reset();
    if (apply_release(me, out, len))
        sdsm_fatal("internal error: this rank's own barrier release is invalid");
    free(out);
}

/* proposed: an arrival's moves, which may hold proposals (one page each). */
static int check_moves(const uint8_t *p, size_t len, int proposed)
{
    for (size_t off = 0; off < len; off += 12) {
        move_t m;
        memcpy(&m, p + off, 12);
        if (proposed && m.rank >= 0 && (m.rank & MOVE_PROPOSED) && m.count == 1)
            m.rank &= ~MOVE_PROPOSED;
        if (m.rank < 0 || m.rank >= sdsm_net_nprocs() || m.first >= sdsm_region.npages ||
            m.count > sdsm_region.npages - m.first)
            return SDSM_EPROTO;
    }
    return 0;
}

static void reserve(size_t n)
{
    if (mgr.n + n > mgr.cap) {
        size_t cap = mgr.cap ? mgr.cap : 1024;
        while (cap < mgr.n + n)
            cap *= 2;
        if (!(mgr.pairs = realloc(mgr.pairs, cap * sizeof *mgr.pairs)))
            sdsm_fatal("out of memory collecting barrier notices");
        mgr.cap = cap;
    }
}

static void add_moves(const uint8_t *mv, size_t mlen)
{
    if (!mlen)
        return;
    if (!(mgr.moves = realloc(mgr.moves, mgr.mlen + mlen)))
        sdsm_fatal("out of memory collecting home moves");
    memcpy(mgr.moves + mgr.mlen, mv, mlen);
    mgr.mlen += mlen;
}

static int on_arrive(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n, fl;
    sdsm_coll_t call;
    if (h->len < 8 + sizeof call)
        return SDSM_EPROTO;
    memcpy(&fl, p, 4);
    memcpy(&call, p + 4, sizeof call);
    if (sdsm_coll_check(src, &call))
        return SDSM_EPROTO;
    mgr.flags |= fl; /* only read once every rank has arrived */
    p += 4 + sizeof call;
    sdsm_hdr_t hh = *h;
    hh.len -= 4 + sizeof call;
    h = &hh;
    memcpy(&n, p, 4);
    if (mgr.seen[src] || n > (h->len - 4) / 4 || (h->len - 4 - 4 * (size_t)n) % 12)
        return SDSM_EPROTO;
    const uint8_t *mv = p + 4 + 4 * (size_t)n;
    size_t mlen = h->len - 4 - 4 * (size_t)n;
    if (check_moves(mv, mlen, 1))
        return SDSM_EPROTO;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg;
        memcpy(&pg, p + 4 + 4 * i, 4);
        if (pg >= sdsm_region.npages)
            return SDSM_EPROTO;
    }
    reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg;
        memcpy(&pg, p + 4 + 4 * i, 4);
        mgr.pairs[mgr.n++] = (uint64_t)pg << 32 | (uint32_t)src;
    }
    add_moves(mv, mlen);
    mgr.seen[src] = 1;
    if (++mgr.arrived == sdsm_net_nprocs())
        finish();
    return 0;
}

/* This round's tree (the one this rank arrived in) from the release's point
 * of view: its root is the manager the application named. */
static int apply_release(int src, const uint8_t *p, size_t len)
{
    uint32_t k, plen;
    if (len < 12)
        return SDSM_EPROTO;
    memcpy(&flags_in, p, 4);
    memcpy(&k, p + 4, 4);
    memcpy(&plen, p + 8, 4);
    if (plen > SDSM_BARRIER_PAYLOAD_MAX || plen > len - 12)
        return SDSM_EPROTO;
    size_t head = 12 + (size_t)plen;
    if (k > (len - head) / 8 || (len - head - 8 * (size_t)k) % 12)
        return SDSM_EPROTO;
    const uint8_t *pairs = p + head, *mv = p + head + 8 * (size_t)k;
    size_t mlen = len - head - 8 * (size_t)k;
    if (check_moves(mv, mlen, 0) || sdsm_proto->barrier_done(pairs, k))
        sdsm_fatal("barrier %s rank %d sent an invalid barrier release",
                   src == cur_manager ? "manager" : "tree parent", src);
    /* Moves ride on the first round's release only: a second round (the
     * protocol's flags) must not erase them before they are applied. */
    if (plen) { /* (the first round's: later rounds carry none) */
        memcpy(payload.in, p + 12, plen);
        payload.in_len = plen;
    }
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

static int on_release(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int me = sdsm_net_rank();
    int from = cur_tree ? tree_parent(me, cur_manager) : cur_manager;
    if (h->flags & BAR_STAGE) { /* read from the host's stage by this rank */
        if (src != me || !cur_tree || from < 0 || !sdsm_stage_local(from))
            return SDSM_EPROTO;
        src = from;
    }
    if (src != from || src == me)
        return SDSM_EPROTO;
    if (cur_tree) /* down the tree before our epoch moves */
        forward(me, cur_manager, p, h->len);
    return apply_release(src, p, h->len);
}

/* Tree: this rank's subtree has arrived.  Pass it up, or release it all. */
static void subtree_done(void)
{
    int parent = tree_parent(sdsm_net_rank(), mgr.root);
    if (parent < 0) {
        finish();
        return;
    }
    size_t head = 4 + sizeof mgr.call + 8, len;
    uint32_t k, root = (uint32_t)mgr.root;
    uint8_t *out = merge(head, &k, &len, 0);
    memcpy(out, &mgr.flags, 4);
    memcpy(out + 4, &mgr.call, sizeof mgr.call);
    memcpy(out + 4 + sizeof mgr.call, &root, 4);
    memcpy(out + head - 4, &k, 4);
    reset();
    sdsm_net_send(parent, SDSM_MSG_BAR_UP, 0, 0, out, len, NULL, 0);
    free(out);
}

static int is_child(int src, int me, int root) { return src != me && tree_parent(src, root) == me; }

static int on_up(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t fl, root, k;
    sdsm_coll_t call;
    int n = sdsm_net_nprocs(), me = sdsm_net_rank();
    size_t head = 4 + sizeof call + 8;
    if (h->flags & BAR_STAGE) { /* a rank of this host's, read from the stage by this rank */
        if (src != me || h->seq >= (uint32_t)n || (int)h->seq == me || !sdsm_stage_local((int)h->seq))
            return SDSM_EPROTO;
        src = (int)h->seq;
    }
    memcpy(&fl, p, 4);
    memcpy(&call, p + 4, sizeof call);
    memcpy(&root, p + 4 + sizeof call, 4);
    memcpy(&k, p + head - 4, 4);
    if (sdsm_coll_check(src, &call))
        return SDSM_EPROTO;
    if (root >= (uint32_t)n || (src != me && !is_child(src, me, (int)root)) || mgr.seen[src] ||
        k > (h->len - head) / 8 || (h->len - head - 8 * (size_t)k) % 12)
        return SDSM_EPROTO;
    if (mgr.arrived && mgr.root != (int)root)
        sdsm_fatal("barrier tree: rank %d arrived in the tree of manager %u, rank %d in that of "
                   "manager %d; every rank must name the same manager",
                   src, root, mgr.seen[me] ? me : src, mgr.root);
    const uint8_t *pairs = p + head, *mv = pairs + 8 * (size_t)k;
    size_t mlen = h->len - head - 8 * (size_t)k;
    if (check_moves(mv, mlen, 1))
        return SDSM_EPROTO;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t pg;
        int32_t w;
        memcpy(&pg, pairs + 8 * i, 4);
        memcpy(&w, pairs + 8 * i + 4, 4);
        if (pg >= sdsm_region.npages || w < -1 || w >= n)
            return SDSM_EPROTO;
    }
    if (!mgr.arrived) {
        const int *kids;
        mgr.root = (int)root;
        mgr.expect = 1 + sdsm_topo_kids(me, (int)root, &kids);
    }
    mgr.flags |= fl;
    reserve(k);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t pg, w;
        memcpy(&pg, pairs + 8 * i, 4);
        memcpy(&w, pairs + 8 * i + 4, 4);
        mgr.pairs[mgr.n++] = (uint64_t)pg << 32 | w;
    }
    add_moves(mv, mlen);
    if (src == me)
        mgr.call = call;
    mgr.seen[src] = 1;
    if (++mgr.arrived == mgr.expect)
        subtree_done();
    return 0;
}

/* This rank's arrival: pages (ARRIVE) or (page, this rank) pairs and the
 * root (UP), each after the flags and the call, then the pending moves. */
static uint8_t *arrival(int tree, int manager, int staged, size_t *lenp)
{
    const uint32_t *pages;
    uint32_t n, me = (uint32_t)sdsm_net_rank(), root = (uint32_t)manager;
    /* Our arrival goes to this rank after the release's diffs, on the same
     * connection (a tree node's too, later, with its subtree's); through
     * the host's stage it overtakes them, so every diff is acknowledged. */
    int via = staged ? -1 : tree ? tree_parent((int)me, manager) : manager == (int)me ? -1 : manager;
    sdsm_proto->release(SDSM_SYNC_BARRIER, via, &pages, &n);
    uint32_t *mig, nmig = sdsm_home_pick_moves(pages, n, &mig);
    pthread_mutex_lock(&pend_mtx);
    const sdsm_coll_t *call = sdsm_coll_current();
    size_t head = 4 + sizeof *call + (tree ? 8 : 4), each = tree ? 8 : 4;
    size_t len = head + (size_t)n * each + ((size_t)npend + nmig) * 12;
    uint8_t *msg = malloc(len);
    if (!msg)
        sdsm_fatal("out of memory");
    uint32_t fl = sdsm_proto->barrier_flags();
    memcpy(msg, &fl, 4);
    memcpy(msg + 4, call, sizeof *call);
    if (tree)
        memcpy(msg + 4 + sizeof *call, &root, 4);
    memcpy(msg + head - 4, &n, 4);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(msg + head + i * each, &pages[i], 4);
        if (tree)
            memcpy(msg + head + i * each + 4, &me, 4);
    }
    if (npend)
        memcpy(msg + head + (size_t)n * each, pend, (size_t)npend * 12);
    for (uint32_t i = 0; i < nmig; i++) {
        move_t m = {mig[i], 1, (int32_t)me | MOVE_PROPOSED};
        memcpy(msg + head + (size_t)n * each + ((size_t)npend + i) * 12, &m, 12);
    }
    free(mig);
    npend = 0;
    /* A payload goes with the manager's release; elsewhere it is dropped
     * (sdsm_barrier_payload then says the barrier brought none). */
    if (manager == (int)me && payload.out_len) {
        memcpy(payload.rel, payload.out, payload.out_len);
        payload.rel_len = payload.out_len;
    }
    payload.out_len = 0;
    pthread_mutex_unlock(&pend_mtx);
    *lenp = len;
    return msg;
}

/* A rank of this host's arrival, read from the stage: its BAR_UP. */
static void post_staged(int rank, const void *body, size_t len)
{
    sdsm_net_post_local(SDSM_MSG_BAR_UP, BAR_STAGE, (uint32_t)rank, body, len, NULL, 0);
}

/* Through the host's stage (hoststage.c): write the arrival into this
 * rank's slot, wait for the release there and hand it to on_release. */
static void staged_round(int parent, const uint8_t *msg, size_t len)
{
    const sdsm_coll_t *call = sdsm_coll_current();
    uint32_t g = sdsm_stage_gen();
    if (!sdsm_stage_arrive(sdsm_net_rank(), msg, len))
        sdsm_net_send(parent, SDSM_MSG_BAR_UP, 0, 0, msg, len, NULL, 0);
    size_t rlen;
    const void *rel = sdsm_stage_wait_release(g, call, &rlen);
    if (rel) /* (else it comes by message) */
        sdsm_net_post_local(SDSM_MSG_BAR_RELEASE, BAR_STAGE, 0, rel, rlen, NULL, 0);
}

static int barrier_round(int manager)
{
    int tree = sdsm_barrier_is_tree(), me = sdsm_net_rank();
    int parent = tree ? tree_parent(me, manager) : -1;
    int staged = parent >= 0 && sdsm_stage_local(parent);
    size_t len;
    uint8_t *msg = arrival(tree, manager, staged, &len);
    cur_manager = manager;
    cur_tree = tree;
    uint32_t before = atomic_load(&done_count);
    sdsm_stat_add(SDSM_ST_BARRIER_ROUNDS, 1);
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_COLL, manager);
    /* Our own part goes to our own handler at once, without a wake-up of
     * the service thread (no lock is held here); a leaf of the tree has
     * nothing to wait for and sends it straight to its parent. */
    const int *kids;
    /* A leaf's release comes from the rank it sends its arrival to: that
     * socket is pinned to this thread until its wait ends (net/pin.c). */
    if (staged) {
        staged_round(parent, msg, len);
    } else if (tree && parent >= 0 && !sdsm_topo_kids(me, manager, &kids)) {
        sdsm_net_pin(parent);
        sdsm_net_send(parent, SDSM_MSG_BAR_UP, 0, 0, msg, len, NULL, 0);
    } else if (tree) {
        /* This host's node: its ranks arrive in the stage, and our own
         * arrival only after theirs are read, so the round cannot end
         * before (its ranks' arrivals that came by message would end it,
         * and the next round's would find the stage's count not reset). */
        if (sdsm_stage_ranks() > 1) {
            atomic_store(&collecting, 1);
            sdsm_stage_collect(me, sdsm_coll_current(), post_staged);
        }
        sdsm_net_post_local(SDSM_MSG_BAR_UP, 0, 0, msg, len, NULL, 0);
        atomic_store(&collecting, 0);
    } else if (manager == me) {
        sdsm_net_post_local(SDSM_MSG_BAR_ARRIVE, 0, 0, msg, len, NULL, 0);
    } else {
        sdsm_net_pin(manager);
        sdsm_net_send(manager, SDSM_MSG_BAR_ARRIVE, 0, 0, msg, len, NULL, 0);
    }
    free(msg);
    while (atomic_load(&done_count) == before)
        sdsm_wait_change(&done_count, before);
    sdsm_net_unpin();
    sdsm_wait_leave(&sv);
    return 0;
}

static int on_coll(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    sdsm_coll_t call;
    memcpy(&call, p, sizeof call);
    if (sdsm_net_rank() != 0 || h->len != sizeof call)
        return SDSM_EPROTO;
    return sdsm_coll_check(src, &call) ? SDSM_EPROTO : 0;
}

/* A job on one host: one meeting in shared memory, with no notices. */
static int host_barrier(int manager, uint64_t t0)
{
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_COLL, manager);
    /* One copy (the host protocol, whose release and acquire are fences):
     * the arrival's read-modify-write and the departure's acquire of the
     * generation in sdsm_hostbar_run order every rank's writes before the
     * barrier before every read after it, so no fence of its own. */
    pthread_mutex_lock(&pend_mtx);
    uint32_t out_len = manager == sdsm_net_rank() ? payload.out_len : 0;
    memcpy(payload.rel, payload.out, out_len);
    payload.out_len = 0;
    pthread_mutex_unlock(&pend_mtx);
    payload.in_len =
        (uint32_t)sdsm_hostbar_run(manager, sdsm_coll_current(), payload.rel, out_len, payload.in);
    sdsm_wait_leave(&sv);
    sdsm_stat_add(SDSM_ST_BARRIER_ROUNDS, 1);
    sdsm_stat_add(SDSM_ST_BARRIERS, 1);
    sdsm_stat_add(SDSM_ST_BARRIER_WAIT_NS, sdsm_now_ns() - t0);
    SDSM_TRACE(SDSM_TR_BARRIER, t0, atomic_load(&sdsm_stats.v[SDSM_ST_BARRIERS]), manager, 0);
    return 0;
}

/* One barrier: one round, a second when a protocol has something to send
 * after the first (its flags), one more after home moves.  The protocol's
 * acquire runs once, at the end. */
int sdsm_barrier_run_at(int manager)
{
    uint64_t t0 = sdsm_now_ns();
    if (sdsm_hostbar_on())
        return host_barrier(manager, t0);
    payload.in_len = 0; /* (this barrier's release, on any thread, comes after) */
    if (manager != 0)   /* rank 0 sees every collective call, whoever manages this one */
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

int sdsm_barrier_run(void) { return sdsm_barrier_run_at(sdsm_barrier_manager()); }

/* A child counts as arrived once its arrival is here or in the host's stage. */
static int kid_in(int c) { return mgr.seen[c] || sdsm_stage_arrived(c); }

/* col: this rank is reading its host's arrivals in the stage (its own
 * arrival follows them), maybe before any arrival reached the handlers. */
static int describe_tree(char *buf, size_t len, int col)
{
    int me = sdsm_net_rank(), shown = 0, in = mgr.seen[me] || col;
    int root = mgr.arrived ? mgr.root : cur_manager;
    const int *kids;
    int nc = sdsm_topo_kids(me, root, &kids);
    for (int i = 0; i < nc; i++)
        in += kid_in(kids[i]);
    size_t off = (size_t)snprintf(buf, len,
                                  "in the barrier tree of manager %d, %d of %d ranks of "
                                  "its subtree (itself and %d children) arrived; waiting for rank%s",
                                  root, in, 1 + nc, nc, 1 + nc - in > 1 ? "s" : "");
    if (!in && off < len)
        off += (size_t)snprintf(buf + off, len - off, " %d (itself)", me), shown++;
    for (int i = 0; i < nc && off < len; i++) {
        int c = kids[i];
        if (!kid_in(c))
            off += (size_t)snprintf(buf + off, len - off, shown++ ? ", %d" : " %d", c);
    }
    return 1;
}

int sdsm_barrier_describe(char *buf, size_t len)
{
    int n = sdsm_net_nprocs(), shown = 0;
    if (sdsm_hostbar_on())
        return sdsm_hostbar_describe(buf, len);
    if (!len)
        return 0;
    if (atomic_load(&collecting))
        return describe_tree(buf, len, 1);
    if (!mgr.arrived)
        return 0;
    if (mgr.expect) /* a tree round is being collected here */
        return describe_tree(buf, len, 0);
    size_t off =
        (size_t)snprintf(buf, len, "manages a barrier that %d of %d ranks reached; waiting for rank%s",
                         mgr.arrived, n, n - mgr.arrived > 1 ? "s" : "");
    for (int r = 0; r < n && off < len; r++)
        if (!mgr.seen[r] && shown++ < 16)
            off += (size_t)snprintf(buf + off, len - off, shown > 1 ? ", %d" : " %d", r);
    if (shown > 16 && off < len)
        snprintf(buf + off, len - off, " and %d more", shown - 16);
    return 1;
}

int sdsm_barrier_set_payload(const void *p, size_t len)
{
    if (len > SDSM_BARRIER_PAYLOAD_MAX)
        return SDSM_EINVAL;
    pthread_mutex_lock(&pend_mtx);
    memcpy(payload.out, p, len);
    payload.out_len = (uint32_t)len;
    pthread_mutex_unlock(&pend_mtx);
    return 0;
}

size_t sdsm_barrier_payload(void *out, size_t cap)
{
    size_t n = payload.in_len < cap ? payload.in_len : cap;
    memcpy(out, payload.in, n);
    return payload.in_len;
}

int sdsm_barrier_manager(void) { return (int)(sdsm_cfg.barrier_manager % sdsm_net_nprocs()); }

int sdsm_barrier_add_move(uint32_t first, uint32_t count, int rank)
{
    pthread_mutex_lock(&pend_mtx);
    if (npend == cappend) {
        uint32_t cap = cappend ? 2 * cappend : 16;
        move_t *m = realloc(pend, cap * sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&pend_mtx);
            return SDSM_ENOMEM;
        }
        pend = m;
        cappend = cap;
    }
    pend[npend++] = (move_t){first, count, rank};
    pthread_mutex_unlock(&pend_mtx);
    return 0;
}

int sdsm_barrier_init(const int *host_of)
{
    int n = sdsm_region.nprocs, rc = sdsm_stage_init(host_of, n, sdsm_region.rank);
    if (rc)
        return rc;
    /* With the host's stage, a host's ranks are all children of its node:
     * they meet it in shared memory, one level. */
    mgr.seen = calloc((size_t)n, 1);
    if (!mgr.seen || sdsm_topo_init(n, host_of, sdsm_stage_on() ? n : FANOUT, HOST_FANOUT))
        return SDSM_ENOMEM;
    sdsm_msg_set_handler(SDSM_MSG_BAR_ARRIVE, on_arrive);
    sdsm_msg_set_handler(SDSM_MSG_BAR_RELEASE, on_release);
    sdsm_msg_set_handler(SDSM_MSG_BAR_UP, on_up);
    sdsm_msg_set_handler(SDSM_MSG_COLL, on_coll);
    return 0;
}
