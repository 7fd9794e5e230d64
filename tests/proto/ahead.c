/*
 * ahead.c - the automatic prefetch and write-ahead follow a thread's
 * pattern of faults: forward, backward and strided.  Each rank owns a block
 * of ROWS x COLS pages (homed at it; page (row, col) at row * COLS + col),
 * writes it, and after a barrier reads the next rank's block backward and
 * forward (windows longer than one request's 33 pages), then
 * (rewritten) column by column (stride COLS pages); every word is checked.
 * The owners then write their blocks again column by column and backward,
 * now that others hold copies: without write-ahead each page is a write
 * fault.  The statistics must show pages taken ahead of the reads (and,
 * except under ibec, which opens no page ahead, of the writes) and far fewer
 * faults than pages, so the test fails with the detector off
 * (SDSM_PREFETCH=0 or SDSM_WRITE_AHEAD=0).
 *
 *   ahead            the sweeps above
 *   ahead realloc    a prefetched reply held back until a block was freed,
 *                    the same range allocated again and fetched anew: the
 *                    old reply must be dropped, the new contents read
 */
#define PT_NAME "ahead"
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "core/config.h"
#include "pt.h"

#define ROWS  24
#define COLS  12
#define NPG   (ROWS * COLS)
#define WORDS 512 /* longs per 4 KiB page */

static int me, np;
static const char *proto;

static long value(int round, int owner, long pg, long w)
{
    return round * 100000000L + owner * 1000000L + pg * WORDS + w;
}

static void check_page(long *b, int round, int owner, long pg, const char *what)
{
    for (long w = 0; w < WORDS; w++)
        if (b[pg * WORDS + w] != value(round, owner, pg, w))
            sdsm_abort(1, "ahead: rank %d: %s: block %d page %ld word %ld: expected %ld, got %ld", me, what,
                       owner, pg, w, value(round, owner, pg, w), b[pg * WORDS + w]);
}

static void write_page(long *b, int round, long pg)
{
    for (long w = 0; w < WORDS; w++)
        b[pg * WORDS + w] = value(round, me, pg, w);
}

/* Fewer requests (or write faults) than a third of the pages, and pages
 * taken ahead.  (Read faults are no measure: a thread may reach a page
 * taken ahead before it arrives, and waits for it in a fault.) */
static void expect_ahead(const char *what, uint64_t reqs, uint64_t ahead)
{
    if (ahead == 0 || reqs * 3 > NPG)
        sdsm_abort(1,
                   "ahead: rank %d (%s): %s: %llu requests or faults for %d pages, %llu pages "
                   "taken ahead (the pattern was not followed)",
                   me, proto, what, (unsigned long long)reqs, NPG, (unsigned long long)ahead);
}

/* Drop our copies of the block, so that every protocol faults on them
 * (update and ibec keep copies across barriers).  A copy still waiting for
 * update's push of the last barrier's writes is not dropped: wait for them
 * first by reading each page. */
static void drop_copies(long *b)
{
    volatile long sum = 0;
    for (long pg = 0; pg < NPG; pg++)
        sum += b[pg * WORDS];
    PT_CHECK("sdsm_refresh", 0, sdsm_refresh(b, NPG * 4096));
}

static void sweeps(void)
{
    long *blk[64];
    for (int r = 0; r < np; r++)
        blk[r] = sdsm_alloc(NPG * 4096, r);
    int next = (me + 1) % np;
    long *mine = blk[me], *other = blk[next];
    for (long pg = 0; pg < NPG; pg++)
        write_page(mine, 1, pg);
    sdsm_barrier();

    /* Backward. */
    drop_copies(other);
    uint64_t f = pt_msgs(SDSM_MSG_FETCH), a = pt_stat(SDSM_ST_AHEAD_PAGES);
    for (long pg = NPG - 1; pg >= 0; pg--)
        check_page(other, 1, next, pg, "backward read");
    expect_ahead("backward read", pt_msgs(SDSM_MSG_FETCH) - f, pt_stat(SDSM_ST_AHEAD_PAGES) - a);
    sdsm_barrier();

    /* Forward: windows past one request's pages go as several requests. */
    drop_copies(other);
    f = pt_msgs(SDSM_MSG_FETCH);
    a = pt_stat(SDSM_ST_AHEAD_PAGES);
    for (long pg = 0; pg < NPG; pg++)
        check_page(other, 1, next, pg, "forward read");
    expect_ahead("forward read", pt_msgs(SDSM_MSG_FETCH) - f, pt_stat(SDSM_ST_AHEAD_PAGES) - a);
    sdsm_barrier();

    /* Strided: column by column. */
    drop_copies(other); /* before the writes: update would push them */
    for (long pg = 0; pg < NPG; pg++)
        write_page(mine, 2, pg);
    sdsm_barrier();
    f = pt_msgs(SDSM_MSG_FETCH);
    a = pt_stat(SDSM_ST_AHEAD_PAGES);
    for (long c = 0; c < COLS; c++)
        for (long r = 0; r < ROWS; r++)
            check_page(other, 2, next, r * COLS + c, "strided read");
    expect_ahead("strided read", pt_msgs(SDSM_MSG_FETCH) - f, pt_stat(SDSM_ST_AHEAD_PAGES) - a);
    if (pt_stat(SDSM_ST_AHEAD_USED) == 0)
        sdsm_abort(1, "ahead: rank %d: no prefetched page counted as used", me);
    sdsm_barrier();

    /* Writes at the home, column by column, then backward, while the
     * neighbour holds every page: each write-protected at the release. */
    int ibec = strcmp(proto, "ibec") == 0;
    for (int round = 3; round <= 4; round++) {
        uint64_t wf = pt_stat(SDSM_ST_WRITE_FAULTS), wa = pt_stat(SDSM_ST_WRITE_AHEAD);
        if (round == 3) {
            for (long c = 0; c < COLS; c++)
                for (long r = 0; r < ROWS; r++)
                    write_page(mine, round, r * COLS + c);
        } else {
            for (long pg = NPG - 1; pg >= 0; pg--)
                write_page(mine, round, pg);
        }
        uint64_t faults = pt_stat(SDSM_ST_WRITE_FAULTS) - wf, opened = pt_stat(SDSM_ST_WRITE_AHEAD) - wa;
        if (ibec && np > 1)
            PT_CHECK("write faults under ibec (no write-ahead)", NPG, faults);
        else if (np > 1)
            expect_ahead(round == 3 ? "strided writes at the home" : "backward writes at the home", faults,
                         opened);
        sdsm_barrier();
        for (long pg = NPG - 1; pg >= 0; pg--)
            check_page(other, round, next, pg, "read after the writes");
        sdsm_barrier();
    }
}

/*
 * The late reply.  Rank 1's fetch replies are held back (the handler of
 * FETCH_RUN/FETCH_REP/FETCH_REPZ/FETCH_ZC is wrapped) while it prefetches rank 0's
 * block; the block is freed and allocated again (same range, same home),
 * rank 0 writes new values, and when rank 1 reads them the held replies go
 * in first, right before the new one: they must be dropped.  (Run with
 * SDSM_ZEROCOPY=0: a zero-copy reply carries no bytes, the held one would
 * read the new contents from the home's heap when it is let in.)
 */
#define HELD_MAX 64

typedef struct held {
    sdsm_hdr_t h;
    uint8_t *p;
} held_t;

static sdsm_msg_handler_t real[SDSM_MSG_NTYPES];
static held_t held[HELD_MAX];
static _Atomic int nheld, hold = 1;

static int wrapped(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (atomic_load(&hold)) {
        int i = atomic_load(&nheld);
        if (i == HELD_MAX)
            sdsm_abort(1, "ahead: too many replies to hold");
        held[i].h = *h;
        held[i].p = malloc(h->len);
        memcpy(held[i].p, p, h->len);
        atomic_store(&nheld, i + 1);
        return 0;
    }
    for (int i = 0; i < atomic_load(&nheld); i++) {
        int rc = real[held[i].h.type](src, &held[i].h, held[i].p);
        if (rc)
            return rc;
        free(held[i].p);
    }
    atomic_store(&nheld, 0);
    return real[h->type](src, h, p);
}

static void realloc_case(void)
{
    const int types[4] = {SDSM_MSG_FETCH_RUN, SDSM_MSG_FETCH_REP, SDSM_MSG_FETCH_REPZ, SDSM_MSG_FETCH_ZC};
    long *b = sdsm_alloc(8 * 4096, 0);
    if (me == 0)
        for (long pg = 0; pg < 8; pg++)
            write_page(b, 1, pg);
    sdsm_barrier();
    if (me == 1) {
        for (int i = 0; i < 4; i++) {
            real[types[i]] = sdsm_msg_table[types[i]].handler;
            sdsm_msg_table[types[i]].handler = wrapped;
        }
        PT_CHECK("sdsm_prefetch", 0, sdsm_prefetch(b, 8 * 4096));
        while (atomic_load(&nheld) == 0) /* the reply is here and held */
            sched_yield();
    }
    sdsm_free(b);
    long *c = sdsm_alloc(8 * 4096, 0);
    if (c != b)
        sdsm_abort(1, "ahead: rank %d: the range was not allocated again (%p, then %p)", me, (void *)b,
                   (void *)c);
    if (me == 0)
        for (long pg = 0; pg < 8; pg++)
            write_page(c, 2, pg);
    sdsm_barrier();
    if (me == 1) {
        atomic_store(&hold, 0);
        for (long pg = 0; pg < 8; pg++)
            check_page(c, 2, 0, pg, "read after a late reply of the freed block");
    }
    sdsm_barrier();
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    me = sdsm_rank();
    np = sdsm_nprocs();
    proto = sdsm_proto_names[sdsm_cfg.protocol];
    if (np > 64)
        sdsm_abort(2, "ahead: at most 64 ranks");
    if (argc > 1 && strcmp(argv[1], "realloc") == 0) {
        if (np < 2)
            sdsm_abort(2, "ahead realloc: needs 2 ranks");
        realloc_case();
    } else {
        sweeps();
    }
    pt_ok();
    return 0;
}
