/*
 * alloc.c - collective allocation (see alloc.h) and home placement.
 *
 * Address space comes from the free page ranges (span.c): every rank makes
 * the same takes and gives in the same order, so every rank gets the same
 * address without exchanging it, and freed ranges are handed out again.
 * Freeing returns the memory (hole punched in the heap file, twins dropped)
 * and resets the pages' metadata, so a reused page starts as new.
 *
 * Records live in slots (reused after a free); `order` lists the live slots
 * by address for the fault handler's binary search.  Only the allocating
 * thread writes them, under a sequence lock: a reader that overlapped a
 * change searches again, so lookups never take a lock (the fault handler
 * and the service thread both search).
 *
 * Local allocation (sdsm_alloc_local) needs no agreement: the upper half of
 * the region is cut into one arena per rank, which only that rank allocates
 * from, and every page of rank r's arena has home r.  Every rank knows the
 * arenas from the job size alone, so a pointer received through shared
 * memory is usable at once: the lookup answers with the arena's record.
 * Freed local ranges are reused; the owner zeroes a reused range with
 * ordinary writes, so copies other ranks still hold are invalidated or
 * updated by the protocol like any other write.
 */
#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/status.h"
#include "core/trace.h"
#include "core/blocked.h"
#include "mem/page.h"
#include "mem/span.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "sdsm.h"

#define MAX_ALLOCS (1u << 20)

enum { OP_ALLOC = 1, OP_FREE = 2, OP_ADDRS = 3, OP_IMAGE = 4 };

typedef struct req {
    uint64_t call, size, elem;
    int32_t home;
    uint32_t op;
} req_t;
_Static_assert(sizeof(req_t) == 32, "ALLOC_REQ payload");

/* ALLOC_REQ: the collective call (checked against every other rank's) and the request. */
typedef struct wire_req {
    sdsm_coll_t call;
    req_t req;
} wire_req_t;
_Static_assert(sizeof(wire_req_t) == 64, "ALLOC_REQ payload");

static sdsm_alloc_rec_t *recs;  /* MAX_ALLOCS slots */
static _Atomic uint32_t nslots; /* slots ever used: [0, nslots) */
static uint32_t *free_slots, nfree_slots;
static _Atomic uint32_t *order; /* live slots by first page */
static _Atomic uint32_t nlive;
static _Atomic uint32_t seq; /* odd while order/recs change */
static sdsm_spans_t spans;
static uint32_t coll_pages; /* the collective heap: pages [0, coll_pages) */

/* Local arenas: pages [arenas.first, arenas.first + nprocs * arenas.per), rank
 * r's at arenas.first + r * arenas.per. */
static struct {
    uint32_t first, per;
    sdsm_alloc_rec_t *recs; /* one per rank: the whole arena, home r */
    pthread_mutex_t mu;     /* the owner's threads allocate concurrently */
    sdsm_spans_t spans;     /* this rank's arena, pages relative to its start */
    uint32_t used;          /* relative pages below this were handed out before */
    uint32_t *blocks;       /* live local blocks: first page, page count (pairs) */
    uint32_t nblocks, cap;
} arenas = {.mu = PTHREAD_MUTEX_INITIALIZER};
void (*sdsm_alloc_on_free)(uint32_t first, uint32_t n);

/* Manager (rank 0, service thread): the requests of the current call. */
static struct {
    req_t *reqs;
    uint32_t *seqs;
    uint8_t *have;
    int count;
} mgr;

static int on_req(int src, const sdsm_hdr_t *h, const uint8_t *p);
static int on_rep(int src, const sdsm_hdr_t *h, const uint8_t *p);

static void *reserve(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int local_init(int n)
{
    arenas.first = sdsm_region.npages / 2;
    arenas.per = (sdsm_region.npages - arenas.first) / (uint32_t)n;
    arenas.used = 0;
    arenas.nblocks = 0;
    if (!(arenas.recs = calloc((size_t)n, sizeof *arenas.recs)))
        return SDSM_ENOMEM;
    for (int r = 0; r < n; r++)
        arenas.recs[r] = (sdsm_alloc_rec_t){.first = arenas.first + (uint32_t)r * arenas.per,
                                            .npages = arenas.per,
                                            .size = (size_t)arenas.per << sdsm_region.shift,
                                            .elem = 1,
                                            .home = r,
                                            .live = 1};
    return arenas.per ? sdsm_spans_init(&arenas.spans, arenas.per, MAX_ALLOCS + 1) : 0;
}

static void local_fini(void)
{
    /* The protocol's per-page state (copysets at this home) of the range
     * this rank ever handed out, and of the pages a reader's prefetch may
     * have taken past its end (at most SDSM_PREFETCH): the rest of the
     * arena was never served. */
    uint64_t end = arenas.used ? (uint64_t)arenas.used + (uint64_t)sdsm_cfg.prefetch : 0;
    if (end > arenas.per)
        end = arenas.per;
    if (end && sdsm_alloc_on_free)
        sdsm_alloc_on_free(arenas.first + (uint32_t)sdsm_region.rank * arenas.per, (uint32_t)end);
    free(arenas.recs);
    free(arenas.blocks);
    if (arenas.spans.v)
        sdsm_spans_fini(&arenas.spans);
    memset(&arenas.spans, 0, sizeof arenas.spans);
    arenas.recs = NULL;
    arenas.blocks = NULL;
    arenas.nblocks = arenas.cap = arenas.per = arenas.first = 0;
}

static sdsm_alloc_rec_t *publish(uint32_t first, uint32_t np, size_t size, size_t elem, int home);

/*
 * An OpenMP program's data (page.h, sdsm_region_adopt) is the collective
 * heap's first block, homed at rank 0, whose image every rank fetches; the
 * hole after it is taken but never published, so it is no block (a fault
 * there is no shared access) and never handed out.  Every rank does the
 * same before any allocation, so all agree.
 */
static int adopt_pages(void)
{
    const sdsm_region_adopt_t *A = &sdsm_region_adopt;
    uint32_t np = (uint32_t)((A->len + sdsm_region.page_size - 1) >> sdsm_region.shift);
    uint32_t nhole = (uint32_t)(A->gap >> sdsm_region.shift), first, hole;
    if (sdsm_spans_take(&spans, np, &first) || first != 0 ||
        (nhole && (sdsm_spans_take(&spans, nhole, &hole) || hole != np))) {
        sdsm_error_log("the shared region is too small for the program's data (%zu bytes) and the "
                       "brk hole: raise SDSM_HEAP_SIZE",
                       A->len);
        return SDSM_ENOMEM;
    }
    publish(0, np, A->len, 1, 0);
    return 0;
}

int sdsm_alloc_init(void)
{
    int n = sdsm_region.nprocs; /* the transport is not started yet */
    coll_pages = sdsm_region.npages - sdsm_region.npages / 2;
    if (local_init(n))
        return SDSM_ENOMEM;
    recs = reserve(MAX_ALLOCS * sizeof *recs);
    free_slots = reserve(MAX_ALLOCS * sizeof *free_slots);
    order = reserve(MAX_ALLOCS * sizeof *order);
    mgr.reqs = calloc((size_t)n, sizeof *mgr.reqs);
    mgr.seqs = calloc((size_t)n, sizeof *mgr.seqs);
    mgr.have = calloc((size_t)n, 1);
    /* Free ranges never outnumber live blocks + 1, so a give cannot run out of room. */
    if (!recs || !free_slots || !order || !mgr.reqs || !mgr.seqs || !mgr.have ||
        sdsm_spans_init(&spans, coll_pages, MAX_ALLOCS + 1))
        return SDSM_ENOMEM;
    atomic_store(&nslots, 0);
    atomic_store(&nlive, 0);
    nfree_slots = 0;
    mgr.count = 0;
    if (sdsm_region_adopt.len && adopt_pages())
        return SDSM_ENOMEM;
    sdsm_msg_set_handler(SDSM_MSG_ALLOC_REQ, on_req);
    sdsm_msg_set_handler(SDSM_MSG_ALLOC_REP, on_rep);
    return 0;
}

void sdsm_alloc_fini(void)
{
    uint32_t n = atomic_load(&nslots);
    for (uint32_t i = 0; recs && i < n; i++)
        if (recs[i].live && sdsm_alloc_on_free)
            sdsm_alloc_on_free(recs[i].first, recs[i].npages);
    atomic_store(&nslots, 0);
    atomic_store(&nlive, 0);
    if (recs)
        munmap(recs, MAX_ALLOCS * sizeof *recs);
    if (free_slots)
        munmap(free_slots, MAX_ALLOCS * sizeof *free_slots);
    if (order)
        munmap((void *)order, MAX_ALLOCS * sizeof *order);
    recs = NULL;
    free_slots = NULL;
    order = NULL;
    sdsm_spans_fini(&spans);
    free(mgr.reqs);
    free(mgr.seqs);
    free(mgr.have);
    memset(&mgr, 0, sizeof mgr);
    local_fini();
}

uint32_t sdsm_alloc_count(void) { return atomic_load_explicit(&nslots, memory_order_acquire); }
const sdsm_alloc_rec_t *sdsm_alloc_get(uint32_t i) { return &recs[i]; }

/*
 * Binary search of the live blocks.  It may run while the writer moves
 * entries (the caller then retries), so every load is atomic and every
 * index stays below MAX_ALLOCS whatever it reads.
 */
static const sdsm_alloc_rec_t *search(uint32_t pg)
{
    uint32_t lo = 0, hi = atomic_load_explicit(&nlive, memory_order_relaxed);
    if (hi > MAX_ALLOCS)
        hi = MAX_ALLOCS;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        /* Acquire loads: the sequence re-check after the search cannot move
         * before them (a fence would do, but ThreadSanitizer does not
         * model fences). */
        uint32_t slot = atomic_load_explicit(&order[mid], memory_order_acquire) % MAX_ALLOCS;
        const sdsm_alloc_rec_t *r = &recs[slot];
        uint32_t first = __atomic_load_n(&r->first, __ATOMIC_ACQUIRE);
        uint32_t np = __atomic_load_n(&r->npages, __ATOMIC_ACQUIRE);
        if (pg < first)
            hi = mid;
        else if (pg - first >= np)
            lo = mid + 1;
        else
            return r;
    }
    return NULL;
}

const sdsm_alloc_rec_t *sdsm_alloc_find(uint32_t pg)
{
    if (pg >= arenas.first && arenas.per &&
        pg - arenas.first < (uint64_t)arenas.per * (uint32_t)sdsm_region.nprocs)
        return &arenas.recs[(pg - arenas.first) / arenas.per];
    for (;;) {
        uint32_t s0 = atomic_load_explicit(&seq, memory_order_acquire);
        if (s0 & 1) { /* a change is being published: a few instructions */
            sched_yield();
            continue;
        }
        const sdsm_alloc_rec_t *r = search(pg);
        if (atomic_load_explicit(&seq, memory_order_relaxed) == s0)
            return r;
    }
}

/* Writer side of the sequence lock (the allocating thread only). */
static void change_begin(void)
{
    /* acq_rel: the stores of the change cannot move before the odd count. */
    atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
}

static void change_end(void) { atomic_fetch_add_explicit(&seq, 1, memory_order_release); }

/* Position in `order` of the first live block at or after page pg. */
static uint32_t order_pos(uint32_t pg)
{
    uint32_t lo = 0, hi = atomic_load_explicit(&nlive, memory_order_relaxed);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (recs[atomic_load_explicit(&order[mid], memory_order_relaxed)].first < pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Move order[from, from + count) by delta (+1 or -1), one atomic word at a time. */
static void order_shift(uint32_t from, uint32_t count, int delta)
{
    if (delta > 0)
        for (uint32_t i = from + count; i-- > from;)
            atomic_store_explicit(&order[i + 1], atomic_load_explicit(&order[i], memory_order_relaxed),
                                  memory_order_relaxed);
    else
        for (uint32_t i = from; i < from + count; i++)
            atomic_store_explicit(&order[i - 1], atomic_load_explicit(&order[i], memory_order_relaxed),
                                  memory_order_relaxed);
}

/* Record a new live block [first, first + np) in a free slot and publish it. */
static sdsm_alloc_rec_t *publish(uint32_t first, uint32_t np, size_t size, size_t elem, int home)
{
    uint32_t slot = nfree_slots ? free_slots[--nfree_slots] : atomic_load(&nslots);
    uint32_t pos = order_pos(first), live = atomic_load_explicit(&nlive, memory_order_relaxed);
    sdsm_alloc_rec_t *r = &recs[slot];
    change_begin();
    __atomic_store_n(&r->first, first, __ATOMIC_RELAXED);
    __atomic_store_n(&r->npages, np, __ATOMIC_RELAXED);
    r->size = size;
    r->elem = elem;
    r->home = home;
    r->live = 1;
    r->announce = 0;
    order_shift(pos, live - pos, +1);
    atomic_store_explicit(&order[pos], slot, memory_order_relaxed);
    atomic_store_explicit(&nlive, live + 1, memory_order_relaxed);
    change_end();
    if (slot == atomic_load(&nslots))
        atomic_store_explicit(&nslots, slot + 1, memory_order_release);
    return r;
}

/* Take r out of the live blocks; its slot is free for the next block. */
static void unpublish(sdsm_alloc_rec_t *r)
{
    uint32_t slot = (uint32_t)(r - recs);
    uint32_t pos = order_pos(r->first), live = atomic_load_explicit(&nlive, memory_order_relaxed);
    if (r->announce)
        sdsm_page_set_announce(r->first, r->npages, 0);
    change_begin();
    order_shift(pos + 1, live - pos - 1, -1);
    atomic_store_explicit(&nlive, live - 1, memory_order_relaxed);
    r->live = 0;
    change_end();
    free_slots[nfree_slots++] = slot;
}

int sdsm_alloc_set_announce(uint32_t pg)
{
    sdsm_alloc_rec_t *a = (sdsm_alloc_rec_t *)sdsm_alloc_find(pg);
    if (!a || sdsm_alloc_is_arena(a))
        return SDSM_EINVAL;
    a->announce = 1;
    sdsm_page_set_announce(a->first, a->npages, 1);
    return 0;
}

int sdsm_page_home(uint32_t pg)
{
    sdsm_page_t *p = sdsm_page(pg);
    if (p->home1)
        return p->home1 - 1;
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (!a)
        return -1;
    uint32_t idx = pg - a->first, n = (uint32_t)sdsm_region.nprocs;
    int home;
    switch (a->home) {
    case SDSM_HOME_BLOCK: home = (int)(idx / (((uint64_t)a->npages + n - 1) / n)); break;
    case SDSM_HOME_CYCLIC: home = (int)(idx % n); break;
    case SDSM_HOME_FIRST_TOUCH: return -1;
    default: home = a->home; break;
    }
    p->home1 = home + 1;
    return home;
}

static void describe(const req_t *r, char *buf, size_t len)
{
    if (r->op == OP_FREE)
        snprintf(buf, len, "sdsm_free(block at offset %llu)", (unsigned long long)r->size);
    else if (r->op == OP_ADDRS)
        snprintf(buf, len, "sdsm_init(program at %#llx, stdout at %#llx, libsdsm/region %#x)",
                 (unsigned long long)r->size, (unsigned long long)r->elem, (unsigned)r->home);
    else if (r->op == OP_IMAGE)
        snprintf(buf, len, "%llu bytes with digest %#llx", (unsigned long long)r->elem,
                 (unsigned long long)r->size);
    else
        snprintf(buf, len, "alloc(size %llu, element %llu, home %d)", (unsigned long long)r->size,
                 (unsigned long long)r->elem, r->home);
}

/* Rank 0: all requests of this call are in; decide and answer everyone. */
static void decide(void)
{
    int n = sdsm_net_nprocs();
    char text[768] = "";
    int32_t status = 0;
    for (int r = 1; r < n && !status; r++) {
        if (memcmp(&mgr.reqs[r], &mgr.reqs[0], sizeof(req_t)) != 0) {
            char a[160], b[160];
            describe(&mgr.reqs[0], a, sizeof a);
            describe(&mgr.reqs[r], b, sizeof b);
            if (mgr.reqs[0].op == OP_IMAGE)
                snprintf(text, sizeof text,
                         "the ranks start with different images of the program's data (a "
                         "constructor stored a rank-specific value?): rank 0 has %s, rank %d %s",
                         a, r, b);
            else if (mgr.reqs[0].op == OP_ADDRS)
                snprintf(text, sizeof text,
                         "ranks have the program or its libraries at different "
                         "addresses: rank 0 is in %s, rank %d in %s: address randomization is on "
                         "(sdsmrun, and a program started by mpirun or srun itself, turn it off "
                         "unless SDSM_ASLR=1; where the system refuses, start the program under "
                         "setarch -R), or the hosts have different builds of them",
                         a, r, b);
            else
                snprintf(text, sizeof text,
                         "ranks disagree on collective call %llu: rank 0 called %s, "
                         "rank %d called %s",
                         (unsigned long long)mgr.reqs[0].call, a, r, b);
            status = SDSM_EMISMATCH;
        }
    }
    uint8_t out[4 + sizeof text];
    memcpy(out, &status, 4);
    size_t tl = strlen(text);
    memcpy(out + 4, text, tl);
    for (int r = 0; r < n; r++)
        sdsm_net_send(r, SDSM_MSG_ALLOC_REP, 0, mgr.seqs[r], out, 4 + tl, NULL, 0);
    memset(mgr.have, 0, (size_t)n);
    mgr.count = 0;
}

static int on_req(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    wire_req_t w;
    memcpy(&w, p, sizeof w);
    if (sdsm_net_rank() != 0 || mgr.have[src] || sdsm_coll_check(src, &w.call))
        return SDSM_EPROTO;
    mgr.reqs[src] = w.req;
    mgr.seqs[src] = h->seq;
    mgr.have[src] = 1;
    if (++mgr.count == sdsm_net_nprocs())
        decide();
    return 0;
}

static int on_rep(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    int32_t status;
    memcpy(&status, p, 4);
    if (src != 0 || status > 0)
        return SDSM_EPROTO;
    return sdsm_rpc_reply(h->seq, status, p + 4, h->len - 4) ? SDSM_EPROTO : 0; /* nobody waits for it */
}

static int agree(const req_t *q, char *why, size_t whylen)
{
    char text[769];
    sdsm_rpc_t r = {.buf = text, .cap = sizeof text - 1};
    uint32_t id = sdsm_rpc_open(&r, 1);
    wire_req_t w = {.call = *sdsm_coll_current(), .req = *q};
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_COLL, 0);
    sdsm_net_send(0, SDSM_MSG_ALLOC_REQ, 0, id, &w, sizeof w, NULL, 0);
    sdsm_rpc_wait(&r);
    sdsm_wait_leave(&sv);
    sdsm_rpc_close(id);
    text[r.len] = '\0';
    if (r.status)
        snprintf(why, whylen, "%s", text);
    return r.status;
}

/*
 * Arguments every rank checks after agreeing on them.  Sizes are compared
 * before any rounding: rounding SIZE_MAX up to pages wraps to zero pages.
 */
static int check_args(size_t size, int home, char *why, size_t whylen)
{
    size_t heap = (size_t)coll_pages << sdsm_region.shift;
    if (home < SDSM_HOME_FIRST_TOUCH || home >= sdsm_region.nprocs) {
        snprintf(why, whylen,
                 "home %d is neither a rank below %d nor SDSM_HOME_BLOCK/CYCLIC/"
                 "FIRST_TOUCH",
                 home, sdsm_region.nprocs);
        return SDSM_EINVAL;
    }
    if (size == 0) {
        snprintf(why, whylen, "size 0: a block must hold at least one byte");
        return SDSM_EINVAL;
    }
    if (size > (size_t)PTRDIFF_MAX) {
        snprintf(why, whylen,
                 "size %zu is not a valid size (a negative number, %td, converted "
                 "to size_t?)",
                 size, (ptrdiff_t)size);
        return SDSM_EINVAL;
    }
    if (size > heap) {
        snprintf(why, whylen,
                 "size %zu is larger than the whole shared address space (%zu bytes; "
                 "raise SDSM_HEAP_SIZE)",
                 size, heap);
        return SDSM_ENOMEM;
    }
    return 0;
}

void *sdsm_alloc_collective(size_t size, size_t elem, int home, int *err, char *why, size_t whylen)
{
    uint64_t t0 = sdsm_trace_t0();
    req_t q = {.call = sdsm_coll_current()->seq, .size = size, .elem = elem, .home = home, .op = OP_ALLOC};
    int rc = agree(&q, why, whylen);
    if (rc) {
        *err = rc;
        return NULL;
    }
    /* Same arguments everywhere, so every check below fails on every rank alike. */
    if ((*err = check_args(size, home, why, whylen)))
        return NULL;
    /* check_args bounds size by the heap, whose page count fits 32 bits. */
    uint32_t np = (uint32_t)((size >> sdsm_region.shift) + ((size & (sdsm_region.page_size - 1)) != 0));
    uint32_t first;
    if (atomic_load(&nlive) >= MAX_ALLOCS) {
        snprintf(why, whylen, "too many live shared blocks (%u): free some", MAX_ALLOCS);
        *err = SDSM_ENOMEM;
        return NULL;
    }
    if (sdsm_spans_take(&spans, np, &first)) {
        snprintf(why, whylen,
                 "out of shared address space: %zu bytes asked, the largest free range "
                 "holds %zu of %zu free (raise SDSM_HEAP_SIZE)",
                 size, (size_t)sdsm_spans_largest(&spans) << sdsm_region.shift,
                 (size_t)spans.free_pages << sdsm_region.shift);
        *err = SDSM_ENOMEM;
        return NULL;
    }
    SDSM_TRACE(SDSM_TR_ALLOC, t0, first, size, np);
    return sdsm_page_app(publish(first, np, size, elem, home)->first);
}

int sdsm_free_collective(void *ptr, char *why, size_t whylen)
{
    uint32_t pg;
    const sdsm_alloc_rec_t *a = NULL;
    if (sdsm_region_page_of(ptr, &pg))
        a = sdsm_alloc_find(pg);
    int bad = !a || sdsm_alloc_is_arena(a) || sdsm_page_app(a->first) != (uint8_t *)ptr;
    req_t q = {.call = sdsm_coll_current()->seq, .size = bad ? UINT64_MAX : (uint64_t)pg, .op = OP_FREE};
    int rc = agree(&q, why, whylen);
    if (rc)
        return rc;
    if (bad && a && sdsm_alloc_is_arena(a)) {
        snprintf(why, whylen,
                 "%p is in rank %d's local arena: free blocks of sdsm_alloc_local "
                 "with sdsm_free_local on that rank",
                 ptr, a->home);
        return SDSM_EINVAL;
    }
    if (bad) {
        snprintf(why, whylen, "%p is not the start of a live shared block", ptr);
        return SDSM_EINVAL;
    }
    sdsm_alloc_rec_t *w = (sdsm_alloc_rec_t *)a;
    uint32_t first = w->first, np = w->npages;
    /* Out of the table first: from here a stray access faults as "not shared". */
    unpublish(w);
    if (sdsm_alloc_on_free)
        sdsm_alloc_on_free(first, np);
    /* The pages read as zero when the range is handed out again. */
    size_t off = (size_t)first << sdsm_region.shift, len = (size_t)np << sdsm_region.shift;
    fallocate(sdsm_region.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
    madvise(sdsm_region.twin + off, len, MADV_DONTNEED);
    if (sdsm_spans_give(&spans, first, np))
        sdsm_fatal("internal error: sdsm_free: pages [%u, +%u) were already free", first, np);
    return 0;
}

int sdsm_alloc_is_arena(const sdsm_alloc_rec_t *a)
{
    return arenas.recs && a >= arenas.recs && a < arenas.recs + sdsm_region.nprocs;
}

static int local_remember(uint32_t first, uint32_t np)
{
    if (arenas.nblocks == arenas.cap) {
        uint32_t cap = arenas.cap ? 2 * arenas.cap : 64;
        uint32_t *v = realloc(arenas.blocks, (size_t)cap * 2 * sizeof *v);
        if (!v)
            return SDSM_ENOMEM;
        arenas.blocks = v;
        arenas.cap = cap;
    }
    arenas.blocks[2 * arenas.nblocks] = first;
    arenas.blocks[2 * arenas.nblocks + 1] = np;
    arenas.nblocks++;
    return 0;
}

/*
 * Take np pages of this rank's arena; returns the relative first page, or
 * fills why.  Pages handed out before are zeroed by the caller after the
 * mutex is released (the writes may fault and wait for the network).
 */
static int local_take(size_t size, uint32_t np, uint32_t *rel, uint32_t *dirty, char *why, size_t whylen)
{
    int rc = 0;
    pthread_mutex_lock(&arenas.mu);
    if (sdsm_spans_take(&arenas.spans, np, rel)) {
        snprintf(why, whylen,
                 "out of local arena: %zu bytes asked, the largest free range of this "
                 "rank's arena holds %zu of %zu (each rank's arena is half of SDSM_HEAP_SIZE divided "
                 "by the ranks: raise SDSM_HEAP_SIZE)",
                 size, (size_t)sdsm_spans_largest(&arenas.spans) << sdsm_region.shift,
                 (size_t)arenas.per << sdsm_region.shift);
        rc = SDSM_ENOMEM;
    } else if (local_remember(*rel, np)) {
        sdsm_spans_give(&arenas.spans, *rel, np);
        snprintf(why, whylen, "out of memory for the block table");
        rc = SDSM_ENOMEM;
    } else {
        *dirty = arenas.used > *rel ? (arenas.used - *rel < np ? arenas.used - *rel : np) : 0;
        if (*rel + np > arenas.used)
            arenas.used = *rel + np;
    }
    pthread_mutex_unlock(&arenas.mu);
    return rc;
}

void *sdsm_alloc_local_block(size_t size, int *err, char *why, size_t whylen)
{
    if ((*err = check_args(size, 0, why, whylen)))
        return NULL;
    size_t arena = (size_t)arenas.per << sdsm_region.shift;
    if (size > arena) {
        snprintf(why, whylen,
                 "size %zu is larger than this rank's whole local arena (%zu bytes: half "
                 "of SDSM_HEAP_SIZE divided by the ranks; raise SDSM_HEAP_SIZE)",
                 size, arena);
        *err = SDSM_ENOMEM;
        return NULL;
    }
    uint32_t np = (uint32_t)((size >> sdsm_region.shift) + ((size & (sdsm_region.page_size - 1)) != 0));
    uint32_t rel, dirty;
    if ((*err = local_take(size, np, &rel, &dirty, why, whylen)))
        return NULL;
    uint8_t *p = sdsm_page_app(arenas.first + (uint32_t)sdsm_region.rank * arenas.per + rel);
    /* Reused pages: zero them as the application would, through the protocol. */
    if (dirty)
        memset(p, 0, (size_t)dirty << sdsm_region.shift);
    return p;
}

int sdsm_free_local_block(void *ptr, char *why, size_t whylen)
{
    uint32_t pg;
    const sdsm_alloc_rec_t *a = sdsm_region_page_of(ptr, &pg) ? sdsm_alloc_find(pg) : NULL;
    if (!a || !sdsm_alloc_is_arena(a)) {
        snprintf(why, whylen, "%p is not in a local arena (not a block of sdsm_alloc_local)", ptr);
        return SDSM_EINVAL;
    }
    if (a->home != sdsm_region.rank) {
        snprintf(why, whylen, "%p was allocated by rank %d: only the allocating rank may free it", ptr,
                 a->home);
        return SDSM_EINVAL;
    }
    uint32_t rel = pg - a->first;
    int rc = SDSM_EINVAL;
    pthread_mutex_lock(&arenas.mu);
    for (uint32_t i = 0; i < arenas.nblocks; i++) {
        if (arenas.blocks[2 * i] != rel || sdsm_page_app(pg) != (uint8_t *)ptr)
            continue;
        uint32_t np = arenas.blocks[2 * i + 1];
        if (sdsm_spans_give(&arenas.spans, rel, np))
            break;
        arenas.blocks[2 * i] = arenas.blocks[2 * (arenas.nblocks - 1)];
        arenas.blocks[2 * i + 1] = arenas.blocks[2 * (arenas.nblocks - 1) + 1];
        arenas.nblocks--;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&arenas.mu);
    if (rc)
        snprintf(why, whylen, "%p is not the start of a live block of sdsm_alloc_local", ptr);
    return rc;
}

/* A digest of the adopted data as this rank copied it into the heap file. */
static uint64_t image_digest(size_t len)
{
    const uint64_t *w = (const uint64_t *)(const void *)sdsm_region.rt;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < len / 8; i++)
        if (w[i]) /* .bss is mostly zero: skip the multiply */
            h = (h ^ (w[i] + i)) * 0xff51afd7ed558ccdull, h ^= h >> 29;
    return h ^ len;
}

/*
 * The adopted data's pages are homed at rank 0 (adopt_pages) until every
 * rank agrees that its own copy of them is the same as rank 0's: then any
 * rank may serve them, and they take `home` (a rank or SDSM_HOME_*, say
 * first touch, so that the globals a rank's share of a loop writes are
 * homed there, as the heap's are).  Collective, before any access.  A
 * program whose start-up left rank-specific values in its data keeps rank
 * 0's image (SDSM_EMISMATCH with why).
 */
int sdsm_alloc_adopt_home(int home, char *why, size_t whylen)
{
    sdsm_alloc_rec_t *a = (sdsm_alloc_rec_t *)sdsm_alloc_find(0);
    if (!sdsm_region_adopt.len || !a || a->home != 0 || home == 0)
        return 0;
    if (home < SDSM_HOME_FIRST_TOUCH || home >= sdsm_region.nprocs) {
        snprintf(why, whylen, "home %d is neither a rank nor SDSM_HOME_*", home);
        return SDSM_EINVAL;
    }
    req_t q = {.call = sdsm_coll_current()->seq,
               .size = image_digest(sdsm_region_adopt.len),
               .elem = sdsm_region_adopt.len,
               .home = home,
               .op = OP_IMAGE};
    int rc = agree(&q, why, whylen);
    if (rc)
        return rc;
    for (uint32_t pg = a->first; pg < a->first + a->npages; pg++)
        sdsm_page(pg)->home1 = 0;
    a->home = home;
    return 0;
}

int sdsm_alloc_agree_addrs(uint64_t prog, uint64_t libc, uint32_t digest, char *why, size_t whylen)
{
    req_t q = {.call = sdsm_coll_current()->seq,
               .size = prog,
               .elem = libc,
               .home = (int32_t)digest,
               .op = OP_ADDRS};
    return agree(&q, why, whylen);
}
