/*
 * test_span.c - mem/span.c: the free page ranges behind collective
 * allocation.  First fit from the lowest address, exact reuse of freed
 * ranges, coalescing with both neighbours, double frees refused, and a long
 * random run checked against a page-by-page model.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/status.h"
#include "mem/span.h"

static void test_first_fit(void)
{
    sdsm_spans_t s;
    uint32_t a, b, c, d;
    CHECK_I(sdsm_spans_init(&s, 100, 16), ==, 0);
    CHECK_I(sdsm_spans_take(&s, 10, &a), ==, 0);
    CHECK_I(sdsm_spans_take(&s, 20, &b), ==, 0);
    CHECK_I(sdsm_spans_take(&s, 30, &c), ==, 0);
    CHECK_U(a, ==, 0);
    CHECK_U(b, ==, 10);
    CHECK_U(c, ==, 30);
    CHECK_U(s.free_pages, ==, 40);
    CHECK_I(sdsm_spans_take(&s, 41, &d), ==, SDSM_ENOMEM);
    CHECK_I(sdsm_spans_take(&s, 0, &d), ==, SDSM_EINVAL);
    /* A freed range is handed out again, lowest first. */
    CHECK_I(sdsm_spans_give(&s, b, 20), ==, 0);
    CHECK_I(sdsm_spans_take(&s, 5, &d), ==, 0);
    CHECK_U(d, ==, 10);
    CHECK_I(sdsm_spans_take(&s, 20, &d), ==, 0); /* 15 left at 15: does not fit; goes to 60 */
    CHECK_U(d, ==, 60);
    CHECK_I(sdsm_spans_take(&s, 15, &d), ==, 0);
    CHECK_U(d, ==, 15);
    CHECK_U(sdsm_spans_largest(&s), ==, 20);
    sdsm_spans_fini(&s);
}

static void test_coalesce(void)
{
    sdsm_spans_t s;
    uint32_t p[5];
    CHECK_I(sdsm_spans_init(&s, 50, 16), ==, 0);
    for (int i = 0; i < 5; i++)
        CHECK_I(sdsm_spans_take(&s, 10, &p[i]), ==, 0);
    CHECK_U(s.count, ==, 0);
    CHECK_I(sdsm_spans_give(&s, p[1], 10), ==, 0);
    CHECK_I(sdsm_spans_give(&s, p[3], 10), ==, 0);
    CHECK_U(s.count, ==, 2);
    CHECK_I(sdsm_spans_give(&s, p[2], 10), ==, 0); /* joins both neighbours */
    CHECK_U(s.count, ==, 1);
    CHECK_U(s.v[0].first, ==, 10);
    CHECK_U(s.v[0].n, ==, 30);
    CHECK_I(sdsm_spans_give(&s, p[0], 10), ==, 0); /* joins the next */
    CHECK_I(sdsm_spans_give(&s, p[4], 10), ==, 0); /* joins the previous */
    CHECK_U(s.count, ==, 1);
    CHECK_U(s.v[0].first, ==, 0);
    CHECK_U(s.v[0].n, ==, 50);
    CHECK_U(s.free_pages, ==, 50);
    /* Double and overlapping frees are refused and change nothing. */
    CHECK_I(sdsm_spans_give(&s, 0, 1), ==, SDSM_EINVAL);
    CHECK_I(sdsm_spans_give(&s, 49, 1), ==, SDSM_EINVAL);
    CHECK_I(sdsm_spans_give(&s, 0, 0), ==, SDSM_EINVAL);
    CHECK_U(s.count, ==, 1);
    CHECK_U(s.free_pages, ==, 50);
    sdsm_spans_fini(&s);
}

static void test_full_table(void)
{
    sdsm_spans_t s;
    uint32_t p[6];
    CHECK_I(sdsm_spans_init(&s, 6, 2), ==, 0);
    for (int i = 0; i < 6; i++)
        CHECK_I(sdsm_spans_take(&s, 1, &p[i]), ==, 0);
    CHECK_I(sdsm_spans_give(&s, p[0], 1), ==, 0);
    CHECK_I(sdsm_spans_give(&s, p[2], 1), ==, 0);
    CHECK_I(sdsm_spans_give(&s, p[4], 1), ==, SDSM_ENOMEM); /* a third separate range */
    CHECK_U(s.free_pages, ==, 2);
    CHECK_I(sdsm_spans_give(&s, p[1], 1), ==, 0); /* merges: room again */
    CHECK_I(sdsm_spans_give(&s, p[4], 1), ==, 0);
    sdsm_spans_fini(&s);
}

/* Random takes and gives against a byte-per-page model of the heap. */
static void test_random_model(void)
{
    enum { PAGES = 4096, LIVE = 64 };
    static uint8_t used[PAGES];
    struct {
        uint32_t first, n;
    } live[LIVE] = {{0, 0}};
    sdsm_spans_t s;
    ck_rng_t rng = {42};
    memset(used, 0, sizeof used);
    CHECK_I(sdsm_spans_init(&s, PAGES, LIVE + 1), ==, 0);
    int bad = 0;
    for (int step = 0; step < 20000 && !bad; step++) {
        int i = (int)(ck_rand(&rng) % LIVE);
        if (live[i].n) {
            bad |= !CHECK_I(sdsm_spans_give(&s, live[i].first, live[i].n), ==, 0);
            memset(used + live[i].first, 0, live[i].n);
            live[i].n = 0;
            continue;
        }
        uint32_t n = 1 + (uint32_t)(ck_rand(&rng) % 200), first;
        /* The model's first fit: the lowest run of n free pages. */
        uint32_t run = 0, want = UINT32_MAX;
        for (uint32_t pg = 0; pg < PAGES && want == UINT32_MAX; pg++) {
            run = used[pg] ? 0 : run + 1;
            if (run == n)
                want = pg + 1 - n;
        }
        int rc = sdsm_spans_take(&s, n, &first);
        if (want == UINT32_MAX) {
            bad |= !CHECK_I(rc, ==, SDSM_ENOMEM);
            continue;
        }
        bad |= !CHECK_I(rc, ==, 0) || !CHECK_U(first, ==, want);
        memset(used + first, 1, n);
        live[i].first = first;
        live[i].n = n;
        uint64_t nfree = 0;
        for (uint32_t pg = 0; pg < PAGES; pg++)
            nfree += !used[pg];
        bad |= !CHECK_U(s.free_pages, ==, nfree);
        for (uint32_t k = 0; k + 1 < s.count; k++) /* sorted, never adjacent */
            bad |= !CHECK_U((uint64_t)s.v[k].first + s.v[k].n, <, s.v[k + 1].first);
    }
    sdsm_spans_fini(&s);
}

int main(void)
{
    RUN(test_first_fit);
    RUN(test_coalesce);
    RUN(test_full_table);
    RUN(test_random_model);
    return ck_done("span");
}
