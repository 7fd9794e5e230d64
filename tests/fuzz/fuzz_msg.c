/*
 * fuzz_msg.c - libFuzzer target for what a peer's bytes reach first: the
 * frame header check (net/msg.c against net/wire.h's bounds) and the pure
 * payload checks the handlers run before they touch memory (mem/diff.c's
 * run, batch and lock-chain checks).
 *
 * Input, first byte:
 *   bit 7 clear: a stream of frames, parsed as the transport parses a
 *     peer's receive buffer; bits 0-1 pick the page size, bits 2-4 the
 *     number of pages.  Every accepted frame's payload is copied to a buffer
 *     of exactly its length, and whatever a check accepts is then applied to
 *     pages of exactly the page size, so the sanitizers see any byte a check
 *     lets through that the receiver would read or write out of bounds.
 *   bit 7 set: an encoder round trip: the rest is a twin and a current page
 *     (halves of the input), the next byte a granularity and phase; the
 *     encoding must fit sdsm_diff_bound, pass sdsm_diff_check, and rebuild
 *     the current page from the twin.
 *
 * Built with clang -fsanitize=fuzzer (tests/fuzz/CMakeLists.txt) or with any
 * compiler and replay.c, which runs it on the checked-in corpus.
 */
#include "core/status.h"
#include "mem/diff.h"
#include "net/msg.h"
#include "net/wire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAGES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_msg: %s\n", what);
    abort();
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Apply checked runs to a page of exactly ps bytes; the total must fit it. */
static void apply_runs(uint8_t *page, const uint8_t *runs, size_t len, size_t ps)
{
    if (sdsm_diff_apply(page, runs, len) > ps)
        fail("a checked diff wrote more bytes than a page holds");
}

/* Apply a checked batch {u32 page, u32 nbytes, runs}[] to pages[]. */
static void apply_batch(uint8_t **pages, uint32_t npages, const uint8_t *b, size_t len, size_t ps)
{
    for (size_t off = 0; off < len;) {
        uint32_t pg = rd32(b + off), nb = rd32(b + off + 4);
        if (pg >= npages || nb > len - off - 8)
            fail("a checked batch has an entry out of bounds");
        apply_runs(pages[pg], b + off + 8, nb, ps);
        off += 8 + (size_t)nb;
    }
}

static void check_batch(uint8_t **pages, uint32_t npages, const uint8_t *b, size_t len, size_t ps)
{
    if (sdsm_diff_batch_check(b, len, npages, ps) == 0)
        apply_batch(pages, npages, b, len, ps);
}

/* What the receiving handler checks before it uses the payload. */
static void check_payload(const sdsm_hdr_t *h, const uint8_t *p, uint8_t **pages, uint32_t npages, size_t ps)
{
    switch (h->type) {
    case SDSM_MSG_DIFF:
    case SDSM_MSG_FWD_DIFF: check_batch(pages, npages, p, h->len, ps); break;
    case SDSM_MSG_LOCK_REL: /* kept by the manager, checked in the grantee's chain */
        check_batch(pages, npages, p + 8, h->len - 8, ps);
        break;
    case SDSM_MSG_LOCK_GRANT:
        if (sdsm_diff_chain_check(p + 4, h->len - 4, npages, ps) == 0)
            for (size_t off = 4; off < h->len;) {
                uint32_t bl = rd32(p + off + 4);
                apply_batch(pages, npages, p + off + 8, bl, ps);
                off += 8 + (size_t)bl;
            }
        break;
    case SDSM_MSG_FETCH_REPZ:
        if (sdsm_diff_check(p + 8, h->len - 8, ps) == 0)
            apply_runs(pages[0], p + 8, h->len - 8, ps);
        break;
    case SDSM_MSG_FETCH_REP:
    case SDSM_MSG_PUSH:
    case SDSM_MSG_HOME_DATA:
        memcpy(pages[0], p + 8, ps); /* the header check pinned len to 8 + ps */
        break;
    case SDSM_MSG_FETCH_RUN: {
        size_t n = (h->len - 8) / ps;
        if (n < 2 || n > SDSM_FETCH_RUN_MAX || 8 + n * ps != h->len)
            fail("FETCH_RUN passed the header check without a whole run of pages");
        for (size_t i = 0; i < n; i++)
            memcpy(pages[i % npages], p + 8 + i * ps, ps);
        break;
    }
    default: break;
    }
}

static void frames(const uint8_t *data, size_t size, size_t ps, uint32_t npages)
{
    uint8_t *pages[MAX_PAGES];
    for (uint32_t i = 0; i < npages; i++)
        if (!(pages[i] = calloc(1, ps)))
            fail("out of memory");
    while (size >= sizeof(sdsm_hdr_t)) {
        sdsm_hdr_t h;
        memcpy(&h, data, sizeof h);
        int rc = sdsm_msg_check(&h, ps);
        if (rc == SDSM_EPEER) {
            if (h.len <= SDSM_MAX_PAYLOAD)
                fail("SDSM_EPEER for a length under the limit");
            break; /* the transport ends the job here */
        }
        if (size - sizeof h < h.len)
            break; /* the rest of the frame has not arrived */
        if (rc == 0) {
            const sdsm_msg_info_t *m = &sdsm_msg_table[h.type];
            if (h.type == 0 || h.type >= SDSM_MSG_NTYPES || h.len < m->min_len || h.len > m->max_len)
                fail("a header outside its type's bounds was accepted");
            uint8_t *p = malloc(h.len ? h.len : 1); /* exact size: overreads are caught */
            if (!p)
                fail("out of memory");
            memcpy(p, data + sizeof h, h.len);
            check_payload(&h, p, pages, npages, ps);
            free(p);
        } else if (rc != SDSM_EPROTO) {
            fail("sdsm_msg_check returned an undocumented code");
        }
        data += sizeof h + h.len;
        size -= sizeof h + h.len;
    }
    for (uint32_t i = 0; i < npages; i++)
        free(pages[i]);
}

static void roundtrip(const uint8_t *data, size_t size)
{
    static const size_t grans[8] = {1, 1, 2, 3, 4, 8, 16, 24};
    if (size < 2)
        return;
    size_t gran = grans[data[0] & 7], phase = data[1];
    data += 2;
    size -= 2;
    size_t ps = size / 2;
    if (ps > 8192)
        ps = 8192;
    size_t bound = sdsm_diff_bound(ps);
    uint8_t *twin = malloc(ps ? ps : 1), *cur = malloc(ps ? ps : 1), *out = malloc(bound);
    if (!twin || !cur || !out)
        fail("out of memory");
    memcpy(twin, data, ps);
    memcpy(cur, data + ps, ps);
    size_t nruns = 0, ndata = 0;
    size_t len = sdsm_diff_encode(twin, cur, ps, gran, phase, out, &nruns, &ndata);
    if (len > bound)
        fail("encoding longer than sdsm_diff_bound");
    if (sdsm_diff_check(out, len, ps) != 0)
        fail("the encoder's output fails sdsm_diff_check");
    if (sdsm_diff_apply(twin, out, len) != ndata)
        fail("applied byte count differs from the encoder's");
    if (memcmp(twin, cur, ps) != 0)
        fail("twin + diff differs from the current page");
    if (ndata == 0 && len != 0)
        fail("an unchanged page has a non-empty diff");
    free(twin);
    free(cur);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t page_sizes[4] = {64, 256, 1024, 4096};
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    if (mode & 0x80)
        roundtrip(data + 1, size - 1);
    else
        frames(data + 1, size - 1, page_sizes[mode & 3], 1 + ((mode >> 2) & 7));
    return 0;
}
