/*
 * test_diff.c - mem/diff.c: encoding, application, granularity, checks.
 *
 * Every encoding is decoded independently here (varint gap, varint length,
 * data; see diff.h) and compared with what it must contain: exactly the
 * changed bytes (gran 1) or exactly the elements holding a changed byte,
 * clipped to the page (gran > 1), as maximal runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/status.h"
#include "mem/diff.h"

#define GUARD  256
#define CANARY 0xCC

typedef struct run {
    size_t start, len, data; /* data: offset of the run's bytes in the encoding */
} run_t;

/* --------------------------------------------------------------- helpers */

/* Our own varint reader (LEB128, at most 10 bytes).  0 when malformed. */
static size_t rd_varint(const uint8_t *p, size_t len, size_t *v)
{
    size_t r = 0;
    for (size_t i = 0; i < len && i < 10; i++) {
        r |= (size_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static size_t varint_size(size_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Decode an encoding into runs (absolute positions).  -1 if malformed. */
static int decode(const uint8_t *buf, size_t len, size_t ps, run_t *runs, size_t max, size_t *n)
{
    size_t off = 0, pos = 0, k, gap, l;
    *n = 0;
    while (off < len) {
        if (!(k = rd_varint(buf + off, len - off, &gap)))
            return -1;
        off += k;
        if (!(k = rd_varint(buf + off, len - off, &l)))
            return -1;
        off += k;
        if (l > len - off || gap > ps - pos || l > ps - pos - gap || *n == max)
            return -1;
        runs[*n] = (run_t){pos + gap, l, off};
        (*n)++;
        pos += gap + l;
        off += l;
    }
    return 0;
}

/* Encode into a canary-filled buffer; checks the length against the bound
 * and that nothing was written past it.  Caller frees *out. */
static size_t encode(const uint8_t *twin, const uint8_t *cur, size_t ps, size_t gran, size_t phase,
                     uint8_t **out, size_t *nruns, size_t *ndata)
{
    size_t cap = 2 * ps + GUARD; /* room to see an encoder exceed its bound */
    uint8_t *b = malloc(cap);
    memset(b, CANARY, cap);
    *nruns = *ndata = (size_t)-1;
    size_t len = sdsm_diff_encode(twin, cur, ps, gran, phase, b, nruns, ndata);
    CHECK_U(len, <=, sdsm_diff_bound(ps));
    size_t bad = 0;
    for (size_t i = len; i < cap; i++)
        bad += b[i] != CANARY;
    CHECK_U(bad, ==, 0); /* bytes written beyond the reported length */
    *out = b;
    return len;
}

static void fill_random(ck_rng_t *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(ck_rand(r) >> 56);
}

static void change(ck_rng_t *r, const uint8_t *twin, uint8_t *cur, size_t i)
{
    cur[i] = (uint8_t)(twin[i] ^ (1 + ck_rand(r) % 255));
}

/* Bytes a correct diff must carry: changed bytes, widened to whole elements. */
static void expected_mask(const uint8_t *twin, const uint8_t *cur, size_t ps, size_t gran, size_t phase,
                          uint8_t *mask)
{
    memset(mask, 0, ps);
    size_t ph = gran > 1 ? phase % gran : 0;
    for (size_t i = 0; i < ps; i++) {
        if (twin[i] == cur[i])
            continue;
        if (gran <= 1) {
            mask[i] = 1;
            continue;
        }
        size_t e = (i + ph) / gran;
        size_t lo = e * gran < ph ? 0 : e * gran - ph, hi = (e + 1) * gran - ph;
        if (hi > ps)
            hi = ps;
        memset(mask + lo, 1, hi - lo);
    }
}

/*
 * The full contract for one (twin, cur) pair: bound, check, exact runs,
 * element alignment, counts, data, round trip, and no stray writes on two
 * different home pages.  Returns the number of runs.
 */
static size_t verify(const uint8_t *twin, const uint8_t *cur, size_t ps, size_t gran, size_t phase)
{
    uint8_t *out, *mask = malloc(ps), *got = calloc(ps, 1);
    size_t nruns, ndata, n = 0;
    size_t len = encode(twin, cur, ps, gran, phase, &out, &nruns, &ndata);
    size_t maxruns = ps + 1;
    run_t *runs = malloc(maxruns * sizeof *runs);

    CHECK_I(sdsm_diff_check(out, len, ps), ==, 0);
    if (!CHECK_I(decode(out, len, ps, runs, maxruns, &n), ==, 0))
        goto done;
    CHECK_U(n, ==, nruns);

    /* sizes: the encoding is exactly the sum of its parts */
    size_t sum = 0, data = 0, prev_end = 0;
    for (size_t k = 0; k < n; k++) {
        sum += varint_size(runs[k].start - prev_end) + varint_size(runs[k].len) + runs[k].len;
        data += runs[k].len;
        prev_end = runs[k].start + runs[k].len;
    }
    CHECK_U(sum, ==, len);
    CHECK_U(data, ==, ndata);

    /* runs are non-empty and maximal (a zero gap means two runs should be one) */
    size_t empty = 0, unmerged = 0, misaligned = 0, wrongdata = 0;
    size_t ph = gran > 1 ? phase % gran : 0;
    for (size_t k = 0; k < n; k++) {
        size_t s = runs[k].start, e = s + runs[k].len;
        empty += runs[k].len == 0;
        if (k > 0 && s == runs[k - 1].start + runs[k - 1].len)
            unmerged++;
        if (gran > 1) {
            if (!(s == 0 || (s + ph) % gran == 0))
                misaligned++;
            if (!(e == ps || (e + ph) % gran == 0))
                misaligned++;
        }
        if (memcmp(out + runs[k].data, cur + s, runs[k].len))
            wrongdata++;
        memset(got + s, 1, runs[k].len);
    }
    CHECK_U(empty, ==, 0);
    CHECK_U(unmerged, ==, 0);
    CHECK_U(misaligned, ==, 0);
    CHECK_U(wrongdata, ==, 0);

    /* exactly the expected bytes are covered */
    expected_mask(twin, cur, ps, gran, phase, mask);
    CHECK_MEM(got, mask, ps);

    /* round trip onto a copy of the twin */
    uint8_t *page = malloc(ps);
    memcpy(page, twin, ps);
    CHECK_U(sdsm_diff_apply(page, out, len), ==, ndata);
    CHECK_MEM(page, cur, ps);

    /* two homes whose unchanged bytes differ from the twin (and each other):
     * only covered bytes may change, and they become cur's */
    uint8_t *home = malloc(ps), *want = malloc(ps);
    for (int h = 0; h < 2; h++) {
        for (size_t i = 0; i < ps; i++)
            home[i] = (uint8_t)(twin[i] ^ (h == 0 ? 0xA5 : (uint8_t)(i * 7 + 1) | 1));
        for (size_t i = 0; i < ps; i++)
            want[i] = mask[i] ? cur[i] : home[i];
        CHECK_U(sdsm_diff_apply(home, out, len), ==, ndata);
        CHECK_MEM(home, want, ps);
    }
    free(home);
    free(want);
    free(page);
done:
    free(runs);
    free(out);
    free(mask);
    free(got);
    return n;
}

enum { M_NONE, M_ONE, M_SPARSE, M_BURSTS, M_DENSE, M_ALL, M_WORDS, M_NMODES };

static void make_pattern(ck_rng_t *r, const uint8_t *twin, uint8_t *cur, size_t ps, int mode)
{
    memcpy(cur, twin, ps);
    switch (mode) {
    case M_NONE: break;
    case M_ONE: change(r, twin, cur, ck_rand(r) % ps); break;
    case M_SPARSE:
        for (int k = 0; k < 40; k++)
            change(r, twin, cur, ck_rand(r) % ps);
        break;
    case M_BURSTS:
        for (int k = 0; k < 30; k++) {
            size_t at = ck_rand(r) % ps, l = 1 + ck_rand(r) % 40;
            for (size_t i = at; i < at + l && i < ps; i++)
                change(r, twin, cur, i);
        }
        break;
    case M_DENSE:
        for (size_t i = 0; i < ps; i++)
            if (ck_rand(r) & 1)
                change(r, twin, cur, i);
        break;
    case M_ALL:
        for (size_t i = 0; i < ps; i++)
            change(r, twin, cur, i);
        break;
    case M_WORDS: /* whole and partial 8-byte words */
        for (int k = 0; k < 50; k++) {
            size_t w = (ck_rand(r) % (ps / 8)) * 8, l = 1 + ck_rand(r) % 8;
            for (size_t i = w; i < w + l; i++)
                change(r, twin, cur, i);
        }
        break;
    }
}

static const size_t page_sizes[] = {4096, 16384};

/* ---------------------------------------------------------------- cases */

static void test_roundtrip_random(void)
{
    for (size_t p = 0; p < 2; p++) {
        size_t ps = page_sizes[p];
        uint8_t *twin = malloc(ps), *cur = malloc(ps);
        for (unsigned long long seed = 1; seed <= 8; seed++) {
            ck_rng_t r = {seed * 0x1234567ull};
            fill_random(&r, twin, ps);
            for (int mode = 0; mode < M_NMODES; mode++) {
                make_pattern(&r, twin, cur, ps, mode);
                verify(twin, cur, ps, 1, 0);
            }
        }
        free(twin);
        free(cur);
    }
}

static void test_unchanged_page(void)
{
    static const size_t grans[] = {0, 1, 2, 4, 8, 12, 16, 24, 4096, 8192};
    for (size_t p = 0; p < 2; p++) {
        size_t ps = page_sizes[p];
        uint8_t *twin = malloc(ps), *cur = malloc(ps), out[64];
        ck_rng_t r = {42};
        fill_random(&r, twin, ps);
        memcpy(cur, twin, ps);
        for (size_t g = 0; g < sizeof grans / sizeof grans[0]; g++) {
            size_t nruns = 99, ndata = 99;
            CHECK_U(sdsm_diff_encode(twin, cur, ps, grans[g], 3, out, &nruns, &ndata), ==, 0);
            CHECK_U(nruns, ==, 0);
            CHECK_U(ndata, ==, 0);
        }
        CHECK_I(sdsm_diff_check(out, 0, ps), ==, 0);
        CHECK_U(sdsm_diff_apply(cur, out, 0), ==, 0);
        CHECK_MEM(cur, twin, ps);
        free(twin);
        free(cur);
    }
}

/* Encode and compare with the exact expected bytes of the encoding. */
static void expect_encoding(const uint8_t *twin, const uint8_t *cur, size_t ps, size_t gran, size_t phase,
                            const uint8_t *hdr, size_t hdrlen, size_t from, size_t runlen, size_t want_runs)
{
    uint8_t *out;
    size_t nruns, ndata;
    size_t len = encode(twin, cur, ps, gran, phase, &out, &nruns, &ndata);
    CHECK_U(nruns, ==, want_runs);
    if (want_runs == 1) {
        CHECK_U(len, ==, hdrlen + runlen);
        CHECK_U(ndata, ==, runlen);
        if (len == hdrlen + runlen) {
            CHECK_MEM(out, hdr, hdrlen);
            CHECK_MEM(out + hdrlen, cur + from, runlen);
        }
    }
    free(out);
    verify(twin, cur, ps, gran, phase);
}

static void test_page_edges(void)
{
    for (size_t p = 0; p < 2; p++) {
        size_t ps = page_sizes[p];
        uint8_t *twin = malloc(ps), *cur = malloc(ps);
        ck_rng_t r = {7 + p};
        fill_random(&r, twin, ps);
        uint8_t g_last[2] = {(uint8_t)(((ps - 1) & 0x7f) | 0x80), (uint8_t)((ps - 1) >> 7)};
        uint8_t g_word[2] = {(uint8_t)(((ps - 8) & 0x7f) | 0x80), (uint8_t)((ps - 8) >> 7)};

        /* byte 0 */
        memcpy(cur, twin, ps);
        change(&r, twin, cur, 0);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){0, 1}, 2, 0, 1, 1);

        /* last byte: gap ps-1 is a two-byte varint */
        memcpy(cur, twin, ps);
        change(&r, twin, cur, ps - 1);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){g_last[0], g_last[1], 1}, 3, ps - 1, 1, 1);

        /* first 8-byte word */
        memcpy(cur, twin, ps);
        for (size_t i = 0; i < 8; i++)
            change(&r, twin, cur, i);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){0, 8}, 2, 0, 8, 1);

        /* last 8-byte word */
        memcpy(cur, twin, ps);
        for (size_t i = ps - 8; i < ps; i++)
            change(&r, twin, cur, i);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){g_word[0], g_word[1], 8}, 3, ps - 8, 8, 1);

        /* a run crossing a word boundary: bytes 5..12 */
        memcpy(cur, twin, ps);
        for (size_t i = 5; i < 13; i++)
            change(&r, twin, cur, i);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){5, 8}, 2, 5, 8, 1);

        /* two bytes on either side of a word boundary are one run */
        memcpy(cur, twin, ps);
        change(&r, twin, cur, 2047);
        change(&r, twin, cur, 2048);
        expect_encoding(twin, cur, ps, 1, 0, (const uint8_t[]){0xFF, 0x0F, 2}, 3, 2047, 2, 1);

        /* a run crossing many words, ending on the last byte */
        memcpy(cur, twin, ps);
        for (size_t i = ps - 21; i < ps; i++)
            change(&r, twin, cur, i);
        CHECK_U(verify(twin, cur, ps, 1, 0), ==, 1);

        /* both ends of the page: two runs */
        memcpy(cur, twin, ps);
        change(&r, twin, cur, 0);
        change(&r, twin, cur, ps - 1);
        CHECK_U(verify(twin, cur, ps, 1, 0), ==, 2);

        /* alternate bytes, the worst case: 3 encoded bytes per changed byte */
        for (size_t first = 0; first < 2; first++) {
            memcpy(cur, twin, ps);
            for (size_t i = first; i < ps; i += 2)
                change(&r, twin, cur, i);
            uint8_t *out;
            size_t nruns, ndata;
            size_t len = encode(twin, cur, ps, 1, 0, &out, &nruns, &ndata);
            CHECK_U(nruns, ==, ps / 2);
            CHECK_U(ndata, ==, ps / 2);
            CHECK_U(len, ==, 3 * (ps / 2));
            CHECK_U(len, <=, sdsm_diff_bound(ps));
            free(out);
            CHECK_U(verify(twin, cur, ps, 1, 0), ==, ps / 2);
        }
        free(twin);
        free(cur);
    }
}

static void test_granularity_random(void)
{
    static const size_t grans[] = {1, 2, 4, 8, 12, 16, 24, 4096, 8192};
    for (size_t p = 0; p < 2; p++) {
        size_t ps = page_sizes[p];
        uint8_t *twin = malloc(ps), *cur = malloc(ps);
        for (size_t g = 0; g < sizeof grans / sizeof grans[0]; g++) {
            size_t gran = grans[g];
            /* phases: 0, 1, middle, last, and the page's own offset in the element */
            size_t phases[] = {0, 1, gran / 2, gran - 1, ps % gran, (3 * ps) % gran};
            for (size_t f = 0; f < sizeof phases / sizeof phases[0]; f++) {
                ck_rng_t r = {1000 + 17 * g + f + p};
                fill_random(&r, twin, ps);
                for (int mode = 0; mode < M_NMODES; mode++) {
                    make_pattern(&r, twin, cur, ps, mode);
                    size_t n = verify(twin, cur, ps, gran, phases[f]);
                    if (mode == M_NONE)
                        CHECK_U(n, ==, 0);
                    if (mode == M_ALL)
                        CHECK_U(n, ==, 1);
                }
                /* every byte of the page's edges alone */
                memcpy(cur, twin, ps);
                change(&r, twin, cur, 0);
                CHECK_U(verify(twin, cur, ps, gran, phases[f]), ==, 1);
                memcpy(cur, twin, ps);
                change(&r, twin, cur, ps - 1);
                CHECK_U(verify(twin, cur, ps, gran, phases[f]), ==, 1);
            }
        }
        free(twin);
        free(cur);
    }
}

/* Exact runs for chosen writes at each granularity. */
static void test_granularity_exact(void)
{
    const size_t ps = 4096;
    uint8_t *twin = malloc(ps), *cur = malloc(ps), *out;
    size_t nruns, ndata, len;
    ck_rng_t r = {99};
    fill_random(&r, twin, ps);

    /* 100 ints, each changed in one byte */
    memcpy(cur, twin, ps);
    for (size_t k = 0; k < 100; k++)
        change(&r, twin, cur, 4 * k + k % 3); /* never two adjacent bytes */
    len = encode(twin, cur, ps, 4, 0, &out, &nruns, &ndata);
    CHECK_U(nruns, ==, 1);
    CHECK_U(ndata, ==, 400);
    CHECK_U(len, ==, 1 + 2 + 400);
    CHECK_MEM(out, ((const uint8_t[]){0x00, 0x90, 0x03}), 3); /* gap 0, len 400 */
    free(out);
    verify(twin, cur, ps, 4, 0);
    len = encode(twin, cur, ps, 1, 0, &out, &nruns, &ndata);
    CHECK_U(nruns, ==, 100);
    CHECK_U(ndata, ==, 100);
    CHECK_U(len, ==, 300);
    free(out);
    verify(twin, cur, ps, 1, 0);

    /* the same 100 ints at byte 1000: one two-byte gap */
    memcpy(cur, twin, ps);
    for (size_t k = 0; k < 100; k++)
        change(&r, twin, cur, 1000 + 4 * k + 3);
    len = encode(twin, cur, ps, 4, 0, &out, &nruns, &ndata);
    CHECK_U(nruns, ==, 1);
    CHECK_U(ndata, ==, 400);
    CHECK_U(len, ==, 2 + 2 + 400);
    free(out);

    /* every other double changed: 256 runs of 8 */
    memcpy(cur, twin, ps);
    for (size_t k = 0; k < ps / 8; k += 2)
        change(&r, twin, cur, 8 * k + 5);
    len = encode(twin, cur, ps, 8, 0, &out, &nruns, &ndata);
    CHECK_U(nruns, ==, 256);
    CHECK_U(ndata, ==, 2048);
    CHECK_U(len, ==, 256 * (1 + 1 + 8));
    free(out);
    CHECK_U(verify(twin, cur, ps, 8, 0), ==, 256);

    struct {
        size_t gran, phase, at, start, len;
    } one[] = {
        {12, 0, 0, 0, 12},      /* first element */
        {12, 0, 4095, 4092, 4}, /* element 341 = [4092, 4104) clipped */
        {12, 5, 0, 0, 7},       /* element [-5, 7) clipped */
        {12, 5, 7, 7, 12},      /* next element [7, 19) */
        {12, 5, 4095, 4087, 9}, /* element 341 = [4087, 4099) clipped */
        {12, 17, 0, 0, 7},      /* phase taken modulo gran: as phase 5 */
        {24, 23, 0, 0, 1},      /* first element is one byte */
        {24, 23, 1, 1, 24},
        {16, 8, 8, 8, 16},
        {2, 1, 0, 0, 1},
        {2, 1, 2, 1, 2},
        {4096, 0, 1234, 0, 4096}, /* the whole page is one element */
        {4096, 1000, 3095, 0, 3096},
        {4096, 1000, 3096, 3096, 1000},
        {8192, 0, 17, 0, 4096}, /* element larger than the page */
        {8192, 4096, 4095, 0, 4096},
        {8192, 6000, 2191, 0, 2192},
        {8192, 6000, 2192, 2192, 1904},
    };
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        memcpy(cur, twin, ps);
        change(&r, twin, cur, one[i].at);
        len = encode(twin, cur, ps, one[i].gran, one[i].phase, &out, &nruns, &ndata);
        run_t run[2];
        size_t n = 0;
        CHECK_I(decode(out, len, ps, run, 2, &n), ==, 0);
        if (!CHECK_U(n, ==, 1) || !CHECK_U(nruns, ==, 1))
            fprintf(stderr, "    case %zu: gran %zu phase %zu byte %zu\n", i, one[i].gran, one[i].phase,
                    one[i].at);
        if (n == 1 && !(CHECK_U(run[0].start, ==, one[i].start) & CHECK_U(run[0].len, ==, one[i].len)))
            fprintf(stderr, "    case %zu: gran %zu phase %zu byte %zu\n", i, one[i].gran, one[i].phase,
                    one[i].at);
        CHECK_U(ndata, ==, one[i].len);
        free(out);
        verify(twin, cur, ps, one[i].gran, one[i].phase);
    }

    /* phase is taken modulo the granularity: identical encodings */
    make_pattern(&r, twin, cur, ps, M_SPARSE);
    uint8_t *a, *b;
    size_t la = encode(twin, cur, ps, 12, 5, &a, &nruns, &ndata);
    size_t lb = encode(twin, cur, ps, 12, 5 + 12 * 7, &b, &nruns, &ndata);
    CHECK_U(la, ==, lb);
    if (la == lb)
        CHECK_MEM(a, b, la);
    free(a);
    free(b);
    free(twin);
    free(cur);
}

/* ---------------------------------------------------------------- checks */

static void test_check_rejects(void)
{
    const size_t ps = 4096;
    uint8_t buf[4200];
    memset(buf, 0xAB, sizeof buf);
#define RUNS(...) ((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})
    /* accepted: the boundaries */
    CHECK_I(sdsm_diff_check(buf, 0, ps), ==, 0);                                   /* empty */
    CHECK_I(sdsm_diff_check(RUNS(0, 1, 9), ps), ==, 0);                            /* byte 0 */
    CHECK_I(sdsm_diff_check(RUNS(0xFF, 0x1F, 1, 9), ps), ==, 0);                   /* byte 4095 */
    CHECK_I(sdsm_diff_check(RUNS(0x80, 0x20, 0), ps), ==, 0);                      /* gap = 4096, len 0 */
    CHECK_I(sdsm_diff_check(RUNS(0x80, 0x80, 0x80, 0x80, 0x00, 1, 9), ps), ==, 0); /* 5 bytes */
    CHECK_I(sdsm_diff_check(RUNS(0, 1, 9, 1, 2, 8, 8), ps), ==, 0);                /* two runs */

    /* truncated varints */
    CHECK_I(sdsm_diff_check(RUNS(0x80), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0x85, 0x80), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0x00), ps), ==, SDSM_EPROTO);       /* gap without length */
    CHECK_I(sdsm_diff_check(RUNS(0x00, 0x81), ps), ==, SDSM_EPROTO); /* length cut short */
    CHECK_I(sdsm_diff_check(RUNS(0, 1, 9, 0x83), ps), ==, SDSM_EPROTO);
    /* a six-byte varint, as gap and as length */
    CHECK_I(sdsm_diff_check(RUNS(0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1, 9), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 9), ps), ==, SDSM_EPROTO);
    /* a run past the page end: gap 4095, len 2 */
    CHECK_I(sdsm_diff_check(RUNS(0xFF, 0x1F, 2, 9, 9), ps), ==, SDSM_EPROTO);
    /* len alone past the page: 4097 bytes, all present */
    buf[0] = 0;
    buf[1] = 0x81;
    buf[2] = 0x20;
    CHECK_I(sdsm_diff_check(buf, 3 + 4097, ps), ==, SDSM_EPROTO);
    buf[1] = 0x80; /* exactly 4096: accepted */
    CHECK_I(sdsm_diff_check(buf, 3 + 4096, ps), ==, 0);
    /* second run ends past the page although each fits alone */
    CHECK_I(sdsm_diff_check(RUNS(0xFE, 0x1F, 1, 9, 0, 2, 9, 9), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0xFE, 0x1F, 1, 9, 0, 1, 9), ps), ==, 0);
    /* gap past the end */
    CHECK_I(sdsm_diff_check(RUNS(0x81, 0x20, 0), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0, 1, 9, 0x80, 0x20, 0), ps), ==, SDSM_EPROTO); /* 1 + 4096 */
    CHECK_I(sdsm_diff_check(RUNS(0, 1, 9, 0xFF, 0x1F, 0), ps), ==, 0);           /* 1 + 4095 */
    /* a huge gap that would wrap a naive pos + gap */
    CHECK_I(sdsm_diff_check(RUNS(0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1, 9), ps), ==, SDSM_EPROTO);
    /* len past the buffer */
    CHECK_I(sdsm_diff_check(RUNS(0, 10, 1, 2, 3, 4, 5), ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_check(RUNS(0, 1), ps), ==, SDSM_EPROTO);
#undef RUNS
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void test_batch_check(void)
{
    const size_t ps = 4096;
    const uint32_t np = 10;
    uint8_t b[64] = {0};
    size_t n;

    CHECK_I(sdsm_diff_batch_check(b, 0, np, ps), ==, 0); /* empty batch */

    /* a notice-only entry */
    put32(b, 3);
    put32(b + 4, 0);
    CHECK_I(sdsm_diff_batch_check(b, 8, np, ps), ==, 0);

    /* notice + data entry for the last page */
    put32(b + 8, np - 1);
    put32(b + 12, 3);
    b[16] = 0;
    b[17] = 1;
    b[18] = 0x77;
    n = 19;
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, 0);

    /* page >= npages */
    put32(b + 8, np);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, SDSM_EPROTO);
    put32(b + 8, UINT32_MAX);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, SDSM_EPROTO);
    put32(b, np); /* first entry, notice only */
    put32(b + 8, 0);
    CHECK_I(sdsm_diff_batch_check(b, 8, np, ps), ==, SDSM_EPROTO);
    put32(b, 3);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, 0);

    /* nbytes past the buffer */
    put32(b + 12, 4);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, SDSM_EPROTO);
    put32(b + 12, UINT32_MAX);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, SDSM_EPROTO);
    put32(b + 12, 3);

    /* a trailing partial entry header, 1 to 7 bytes */
    memset(b + n, 0, 8);
    for (size_t extra = 1; extra < 8; extra++)
        CHECK_I(sdsm_diff_batch_check(b, n + extra, np, ps), ==, SDSM_EPROTO);
    CHECK_I(sdsm_diff_batch_check(b, n + 8, np, ps), ==, 0); /* a whole notice for page 0 */

    /* runs that fail sdsm_diff_check */
    b[17] = 2; /* len 2 with one data byte */
    put32(b + 12, 3);
    CHECK_I(sdsm_diff_batch_check(b, n, np, ps), ==, SDSM_EPROTO);
    b[16] = 0xFF; /* gap 4095 + len 1 + data: 4 bytes, fits */
    b[17] = 0x1F;
    b[18] = 1;
    b[19] = 0x55;
    put32(b + 12, 4);
    CHECK_I(sdsm_diff_batch_check(b, 20, np, ps), ==, 0);
    b[18] = 2; /* gap 4095 + len 2 (both bytes present): past the page */
    b[20] = 0x66;
    put32(b + 12, 5);
    CHECK_I(sdsm_diff_batch_check(b, 21, np, ps), ==, SDSM_EPROTO);
    put32(b + 12, 4);
    /* the same batch with a smaller page size */
    b[18] = 1;
    CHECK_I(sdsm_diff_batch_check(b, 20, np, 4095), ==, SDSM_EPROTO);
}

/* A lock chain: {u32 stamp, u32 nbytes, batch}[], each batch checked whole. */
static void test_chain_check(void)
{
    const size_t ps = 4096;
    const uint32_t np = 4;
    uint8_t c[64] = {0};

    CHECK_I(sdsm_diff_chain_check(c, 0, np, ps), ==, 0);
    put32(c, 7);     /* stamp */
    put32(c + 4, 0); /* empty batch */
    CHECK_I(sdsm_diff_chain_check(c, 8, np, ps), ==, 0);
    /* a batch of one entry: page 2, runs "gap 0, len 1, 0x42" */
    put32(c + 12, 11);
    put32(c + 16, 2);
    put32(c + 20, 3);
    c[24] = 0;
    c[25] = 1;
    c[26] = 0x42;
    CHECK_I(sdsm_diff_chain_check(c, 27, np, ps), ==, 0);
    for (size_t cut = 9; cut < 27; cut++) /* any cut inside the second element */
        CHECK_I(sdsm_diff_chain_check(c, cut, np, ps), ==, SDSM_EPROTO);
    put32(c + 12, 12); /* batch length past the chain */
    CHECK_I(sdsm_diff_chain_check(c, 27, np, ps), ==, SDSM_EPROTO);
    put32(c + 12, UINT32_MAX);
    CHECK_I(sdsm_diff_chain_check(c, 27, np, ps), ==, SDSM_EPROTO);
    put32(c + 12, 11);
    put32(c + 16, np); /* page out of range inside the batch */
    CHECK_I(sdsm_diff_chain_check(c, 27, np, ps), ==, SDSM_EPROTO);
    put32(c + 16, 2);
    c[25] = 2; /* runs longer than their bytes */
    CHECK_I(sdsm_diff_chain_check(c, 27, np, ps), ==, SDSM_EPROTO);
}

/* sdsm_diff_next walks exactly the runs the independent decoder finds. */
static void test_next_runs(void)
{
    for (size_t p = 0; p < 2; p++) {
        size_t ps = page_sizes[p];
        uint8_t *twin = malloc(ps), *cur = malloc(ps);
        run_t *runs = malloc(ps * sizeof *runs);
        for (unsigned long long seed = 1; seed <= 4; seed++) {
            ck_rng_t r = {seed * 0x9e3779b9ull};
            fill_random(&r, twin, ps);
            for (int mode = 0; mode < M_NMODES; mode++) {
                make_pattern(&r, twin, cur, ps, mode);
                uint8_t *out;
                size_t nruns, ndata, n;
                size_t len = encode(twin, cur, ps, 1, 0, &out, &nruns, &ndata);
                CHECK_I(decode(out, len, ps, runs, ps, &n), ==, 0);
                size_t off = 0, pos = 0, at, l, i = 0;
                const uint8_t *d;
                while ((d = sdsm_diff_next(out, len, &off, &pos, &at, &l))) {
                    CHECK_U(i, <, n);
                    if (i >= n)
                        break;
                    CHECK_U(at, ==, runs[i].start);
                    CHECK_U(l, ==, runs[i].len);
                    CHECK_I(d == out + runs[i].data, ==, 1);
                    i++;
                }
                CHECK_U(i, ==, n);
                CHECK_U(off, ==, len);
                free(out);
            }
        }
        free(runs);
        free(twin);
        free(cur);
    }
}

int main(void)
{
    RUN(test_roundtrip_random);
    RUN(test_unchanged_page);
    RUN(test_page_edges);
    RUN(test_granularity_random);
    RUN(test_granularity_exact);
    RUN(test_check_rejects);
    RUN(test_batch_check);
    RUN(test_chain_check);
    RUN(test_next_runs);
    return ck_done("test_diff");
}
