/*
 * test_msg.c - net/msg.c: the message table and header validation.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/status.h"
#include "net/msg.h"

#define PS 4096

static int check_len(unsigned type, uint32_t len, size_t ps)
{
    sdsm_hdr_t h = {.len = len, .type = (uint16_t)type, .flags = 0xFFFF, .epoch = 7, .seq = 9};
    return sdsm_msg_check(&h, ps);
}

static void expect(unsigned type, uint32_t len, size_t ps, int want)
{
    if (!CHECK_I(check_len(type, len, ps), ==, want))
        fprintf(stderr, "    type %u (%s), len %u, page size %zu\n", type,
                sdsm_msg_name(type) ? sdsm_msg_name(type) : "?", len, ps);
}

#define ANY UINT32_MAX /* max: up to SDSM_MAX_PAYLOAD */

/* The payloads as the protocol defines them (msg.h), written out again. */
static const struct {
    unsigned type;
    const char *name;
    uint32_t min, max, multiple; /* length = min + k * multiple <= max */
} spec[] = {
    {SDSM_MSG_FETCH, "FETCH", 8, 12,
     0}, /* page, count (prefetch)[, stride]: 8 or 12, checked by the handler */
    {SDSM_MSG_FETCH_REP, "FETCH_REP", 8, ANY, 0}, /* and exactly 8 + page size */
    {SDSM_MSG_HOME_REQ, "HOME_REQ", 8, 8, 0},
    {SDSM_MSG_HOME_REP, "HOME_REP", 8, ANY, 2}, /* page, home, homes of the next pages */
    {SDSM_MSG_DIFF, "DIFF", 0, ANY, 0},
    {SDSM_MSG_DIFF_ACK, "DIFF_ACK", 0, 0, 0},
    {SDSM_MSG_INVAL, "INVAL", 4, ANY, 4},
    {SDSM_MSG_INVAL_ACK, "INVAL_ACK", 0, 0, 0},
    {SDSM_MSG_BAR_ARRIVE, "BAR_ARRIVE", 40, ANY, 4},  /* flags, call, n, pages, moves */
    {SDSM_MSG_BAR_RELEASE, "BAR_RELEASE", 8, ANY, 4}, /* flags, n, pairs, moves */
    {SDSM_MSG_LOCK_REQ, "LOCK_REQ", 8, 8, 0},         /* lock, stamp */
    {SDSM_MSG_LOCK_GRANT, "LOCK_GRANT", 4, ANY, 0},   /* lock, ibec diffL chain */
    {SDSM_MSG_LOCK_REL, "LOCK_REL", 8, ANY, 0},       /* lock, stamp, ibec diffL */
    {SDSM_MSG_COND_WAIT, "COND_WAIT", 8, 8, 0},
    {SDSM_MSG_COND_ACK, "COND_ACK", 0, 0, 0},
    {SDSM_MSG_COND_SIGNAL, "COND_SIGNAL", 8, 8, 0},
    {SDSM_MSG_COND_WAKE, "COND_WAKE", 4, 4, 0},
    {SDSM_MSG_ALLOC_REQ, "ALLOC_REQ", 64, 64, 0}, /* call, request */
    {SDSM_MSG_ALLOC_REP, "ALLOC_REP", 4, 4 + 512, 0},
    {SDSM_MSG_STATS, "STATS", 0, ANY, 8},
    {SDSM_MSG_BYE, "BYE", 0, 0, 0},
    {SDSM_MSG_FWD_DIFF, "FWD_DIFF", 0, ANY, 0},
    {SDSM_MSG_PUSH, "PUSH", 8, ANY, 0}, /* and exactly 8 + page size */
    {SDSM_MSG_LEAVE, "LEAVE", 4, ANY, 4},
    {SDSM_MSG_HOME_DATA, "HOME_DATA", 8, ANY, 0}, /* and exactly 8 + page size */
    {SDSM_MSG_FETCH_REPZ, "FETCH_REPZ", 8, ANY, 0},
    {SDSM_MSG_FETCH_RUN, "FETCH_RUN", 8, ANY, 0}, /* and 8 + 2..33 pages */
    {SDSM_MSG_COLL, "COLL", 32, 32, 0},
    {SDSM_MSG_HANG_NOTE, "HANG_NOTE", 4, 4, 0},
    {SDSM_MSG_HANG_QUERY, "HANG_QUERY", 0, 0, 0},
    {SDSM_MSG_HANG_STATE, "HANG_STATE", 0, 2048, 0},
    {SDSM_MSG_HEARTBEAT, "HEARTBEAT", 0, 0, 0},
    {SDSM_MSG_FETCH_ZC, "FETCH_ZC", 8, 8, 0},         /* first, count */
    {SDSM_MSG_ZC_HELLO, "ZC_HELLO", 40, 40, 0},       /* pid, fd, 32-byte token */
    {SDSM_MSG_ATOMIC, "ATOMIC", 24, 24, 0},           /* page, offset, size, op, value, expected */
    {SDSM_MSG_ATOMIC_REP, "ATOMIC_REP", 12, 12, 0},   /* old value, status */
    {SDSM_MSG_BAR_UP, "BAR_UP", 44, ANY, 4},          /* flags, call, root, n, pairs, moves */
    {SDSM_MSG_SOFT_PROBE, "SOFT_PROBE", 8, 8, 0},     /* first, count */
    {SDSM_MSG_SOFT_REP, "SOFT_REP", 16, 16, 0},       /* first, count, kept bits */
    {SDSM_MSG_SOFT_CONFIRM, "SOFT_CONFIRM", 8, 8, 0}, /* first, count */
    {SDSM_MSG_LOCK_FWD, "LOCK_FWD", 8, 8, 0},         /* lock, rank */
    {SDSM_MSG_LOCK_PASSED, "LOCK_PASSED", 8, 8, 0},   /* lock, rank */
    {SDSM_MSG_LIFT, "LIFT", 4, 4, 0},
    {SDSM_MSG_PUBLISH_ASK, "PUBLISH_ASK", 0, ANY, 4}, /* empty, or a page to itself */
};
#define NSPEC (sizeof spec / sizeof spec[0])

static void test_table(void)
{
    CHECK_U(NSPEC, ==, SDSM_MSG_NTYPES - 1);
    for (size_t i = 0; i < NSPEC; i++) {
        unsigned t = spec[i].type;
        CHECK_U(t, ==, i + 1); /* the enum order */
        CHECK_STR(sdsm_msg_table[t].name, spec[i].name);
        CHECK_U(sdsm_msg_table[t].min_len, ==, spec[i].min);
        CHECK_U(sdsm_msg_table[t].multiple, ==, spec[i].multiple);
    }
}

static void test_names(void)
{
    for (size_t i = 0; i < NSPEC; i++)
        CHECK_STR(sdsm_msg_name(spec[i].type), spec[i].name);
    CHECK_STR(sdsm_msg_name(SDSM_MSG_NONE), NULL);
    CHECK_STR(sdsm_msg_name(SDSM_MSG_NTYPES), NULL);
    CHECK_STR(sdsm_msg_name(SDSM_MSG_NTYPES + 1), NULL);
    CHECK_STR(sdsm_msg_name(0xFFFF), NULL);
    CHECK_STR(sdsm_msg_name(~0u), NULL);
}

static void test_accepts_every_type(void)
{
    for (size_t i = 0; i < NSPEC; i++) {
        unsigned t = spec[i].type;
        uint32_t min = spec[i].min, max = spec[i].max, mul = spec[i].multiple;
        if (t == SDSM_MSG_FETCH_RUN) {
            expect(t, 8 + 2 * PS, PS, 0);
            expect(t, 8 + SDSM_FETCH_RUN_MAX * PS, PS, 0);
            expect(t, 8 + 3 * 16384, 16384, 0);
            continue;
        }
        if (t == SDSM_MSG_FETCH_REP || t == SDSM_MSG_PUSH || t == SDSM_MSG_HOME_DATA) {
            expect(t, 8 + PS, PS, 0);
            expect(t, 8 + 16384, 16384, 0);
            expect(t, 8 + (16u << 20), 16u << 20, 0);
            continue;
        }
        expect(t, min, PS, 0);
        if (max != ANY)
            expect(t, max, PS, 0);
        if (mul) {
            expect(t, min + mul, PS, 0);
            expect(t, min + 1000 * mul, PS, 0);
            /* the largest whole number of elements under the ceiling */
            expect(t, SDSM_MAX_PAYLOAD - (SDSM_MAX_PAYLOAD - min) % mul, PS, 0);
        } else if (max == ANY) { /* any length from min: DIFF, LOCK_GRANT, ... */
            expect(t, min + 1, PS, 0);
            expect(t, min + 12345, PS, 0);
            expect(t, SDSM_MAX_PAYLOAD, PS, 0);
        }
    }
    /* the header's other fields are not part of the check */
    sdsm_hdr_t h = {.len = 8, .type = SDSM_MSG_FETCH};
    CHECK_I(sdsm_msg_check(&h, PS), ==, 0);
    /* ALLOC_REP carries 0 to 512 bytes of text */
    expect(SDSM_MSG_ALLOC_REP, 4 + 1, PS, 0);
    expect(SDSM_MSG_ALLOC_REP, 4 + 511, PS, 0);
}

static void test_rejects_bad_type(void)
{
    expect(0, 0, PS, SDSM_EPROTO);
    expect(0, 4, PS, SDSM_EPROTO);
    expect(SDSM_MSG_NTYPES, 0, PS, SDSM_EPROTO);
    expect(SDSM_MSG_NTYPES + 1, 8, PS, SDSM_EPROTO);
    expect(0x7FFF, 0, PS, SDSM_EPROTO);
    expect(0xFFFF, 4, PS, SDSM_EPROTO);
}

static void test_rejects_bad_length(void)
{
    for (size_t i = 0; i < NSPEC; i++) {
        unsigned t = spec[i].type;
        uint32_t min = spec[i].min, max = spec[i].max, mul = spec[i].multiple;
        if (t == SDSM_MSG_FETCH_REP || t == SDSM_MSG_PUSH || t == SDSM_MSG_HOME_DATA ||
            t == SDSM_MSG_FETCH_RUN || max == 0)
            continue;
        if (min > 0) { /* below min */
            expect(t, min - 1, PS, SDSM_EPROTO);
            expect(t, 0, PS, SDSM_EPROTO);
        }
        if (max != ANY) { /* above max */
            expect(t, max + 1, PS, SDSM_EPROTO);
            expect(t, max + 4, PS, SDSM_EPROTO);
            expect(t, max + 8, PS, SDSM_EPROTO);
            expect(t, SDSM_MAX_PAYLOAD, PS, SDSM_EPROTO);
        }
        if (mul) /* not a whole number of elements */
            for (uint32_t r = 1; r < mul; r++) {
                expect(t, min + r, PS, SDSM_EPROTO);
                expect(t, min + 7 * mul + r, PS, SDSM_EPROTO);
            }
    }
    /* the array types by name */
    expect(SDSM_MSG_INVAL, 0, PS, SDSM_EPROTO); /* at least one page */
    expect(SDSM_MSG_INVAL, 6, PS, SDSM_EPROTO);
    expect(SDSM_MSG_BAR_ARRIVE, 2, PS, SDSM_EPROTO);
    expect(SDSM_MSG_BAR_RELEASE, 4, PS, SDSM_EPROTO); /* flags and count at least */
    expect(SDSM_MSG_BAR_RELEASE, 13, PS, SDSM_EPROTO);
    expect(SDSM_MSG_STATS, 12, PS, SDSM_EPROTO);
    expect(SDSM_MSG_ALLOC_REQ, 63, PS, SDSM_EPROTO);
    expect(SDSM_MSG_ALLOC_REQ, 65, PS, SDSM_EPROTO);
    expect(SDSM_MSG_ALLOC_REP, 3, PS, SDSM_EPROTO);
    expect(SDSM_MSG_ALLOC_REP, 517, PS, SDSM_EPROTO);

    /* FETCH_REP is exactly 8 + page size */
    expect(SDSM_MSG_FETCH_REP, 0, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, PS, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + PS - 1, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + PS + 1, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + PS + 8, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + 2 * PS, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + PS, 2 * PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_REP, 8 + 2 * PS, 2 * PS, 0);

    /* FETCH_RUN is 8 + a whole number of pages, 2 to SDSM_FETCH_RUN_MAX */
    expect(SDSM_MSG_FETCH_RUN, 0, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + PS, PS, SDSM_EPROTO); /* one page is a FETCH_REP */
    expect(SDSM_MSG_FETCH_RUN, 8 + 2 * PS - 1, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + 2 * PS + 1, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + 2 * PS + 8, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + (SDSM_FETCH_RUN_MAX + 1) * PS, PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + 3 * PS, 2 * PS, SDSM_EPROTO);
    expect(SDSM_MSG_FETCH_RUN, 8 + 4 * PS, 2 * PS, 0);
    expect(SDSM_MSG_FETCH_RUN, 8 + 2 * PS, 0, SDSM_EPROTO); /* no page size: nothing fits */
}

/* DIFF_ACK, INVAL_ACK, COND_ACK and BYE are empty: any payload is wrong. */
static void test_rejects_payload_on_empty(void)
{
    for (size_t i = 0; i < NSPEC; i++) {
        if (spec[i].max != 0)
            continue;
        expect(spec[i].type, 0, PS, 0);
        expect(spec[i].type, 1, PS, SDSM_EPROTO);
        expect(spec[i].type, 8, PS, SDSM_EPROTO);
        expect(spec[i].type, SDSM_MAX_PAYLOAD, PS, SDSM_EPROTO);
    }
}

static void test_rejects_oversize(void)
{
    CHECK_U(SDSM_MAX_PAYLOAD, ==, 64u << 20);
    for (unsigned t = 0; t <= SDSM_MSG_NTYPES; t++) {
        expect(t, SDSM_MAX_PAYLOAD + 1, PS, SDSM_EPEER);
        expect(t, SDSM_MAX_PAYLOAD + 8, PS, SDSM_EPEER);
        expect(t, UINT32_MAX, PS, SDSM_EPEER);
        expect(t, 0x80000000u, PS, SDSM_EPEER);
    }
    expect(0xFFFF, UINT32_MAX, PS, SDSM_EPEER);
    /* FETCH_REP of a page that would not fit is still oversize, not exact */
    expect(SDSM_MSG_FETCH_REP, SDSM_MAX_PAYLOAD + 8, SDSM_MAX_PAYLOAD, SDSM_EPEER);
}

static int dummy_handler(int src, const sdsm_hdr_t *h, const uint8_t *p) { return src + 1; }

static void test_set_handler(void)
{
    sdsm_msg_handler_t old = sdsm_msg_table[SDSM_MSG_LOCK_REQ].handler;
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REQ, dummy_handler);
    CHECK(sdsm_msg_table[SDSM_MSG_LOCK_REQ].handler == dummy_handler);
    CHECK(sdsm_msg_table[SDSM_MSG_LOCK_GRANT].handler != dummy_handler);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REQ, old);
    CHECK(sdsm_msg_table[SDSM_MSG_LOCK_REQ].handler == old);
    /* the check depends on the table's bounds only, never on a handler */
    expect(SDSM_MSG_LOCK_REQ, 8, PS, 0);
}

int main(void)
{
    RUN(test_table);
    RUN(test_names);
    RUN(test_accepts_every_type);
    RUN(test_rejects_bad_type);
    RUN(test_rejects_bad_length);
    RUN_BUG(test_rejects_payload_on_empty,
            "src/net/msg.c: FIXED(n, 0) sets max_len 0, which means unbounded, so the empty "
            "types DIFF_ACK, INVAL_ACK, COND_ACK, BYE accept any payload up to SDSM_MAX_PAYLOAD");
    RUN(test_rejects_oversize);
    RUN(test_set_handler);
    return ck_done("test_msg");
}
