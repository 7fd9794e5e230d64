/*
 * diff.c - diff encoding, checking and application (format in diff.h).
 *
 * The encoder compares 8-byte words first (most of a page is usually
 * unchanged) and only looks at single bytes inside words that differ.
 * Decoding never trusts its input: sdsm_diff_check() proves every run lies
 * inside the page before sdsm_diff_apply() writes anything.
 */
#include "diff.h"

#include <string.h>

#include "core/status.h"

static inline uint8_t *put_varint(uint8_t *p, size_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Returns bytes consumed, 0 on malformed or truncated input. */
static inline size_t get_varint(const uint8_t *p, size_t len, size_t *v)
{
    size_t r = 0;
    for (size_t i = 0; i < len && i < 5; i++) {
        r |= (size_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef struct enc {
    uint8_t *out, *p;
    size_t last_end, nruns, ndata;
    const uint8_t *cur;
} enc_t;

static inline void emit(enc_t *e, size_t start, size_t end)
{
    e->p = put_varint(e->p, start - e->last_end);
    e->p = put_varint(e->p, end - start);
    memcpy(e->p, e->cur + start, end - start);
    e->p += end - start;
    e->last_end = end;
    e->nruns++;
    e->ndata += end - start;
}

static void encode_bytes(enc_t *e, const uint8_t *twin, const uint8_t *cur, size_t ps)
{
    size_t i = 0;
    while (i < ps) {
        if ((i & 7) == 0) {
            while (i + 8 <= ps && load64(twin + i) == load64(cur + i))
                i += 8;
            if (i >= ps)
                break;
        }
        if (twin[i] == cur[i]) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < ps && twin[i] != cur[i])
            i++;
        emit(e, start, i);
    }
}

static void encode_elems(enc_t *e, const uint8_t *twin, const uint8_t *cur, size_t ps, size_t g, size_t phase)
{
    size_t run = 0;
    int in_run = 0;
    /* Element k covers [k*g - phase, (k+1)*g - phase) clipped to the page. */
    for (size_t lo = 0; lo < ps;) {
        size_t hi = (lo == 0 && phase) ? g - phase : lo + g;
        if (hi > ps)
            hi = ps;
        int changed = memcmp(twin + lo, cur + lo, hi - lo) != 0;
        if (changed && !in_run) {
            run = lo;
            in_run = 1;
        } else if (!changed && in_run) {
            emit(e, run, lo);
            in_run = 0;
        }
        lo = hi;
    }
    if (in_run)
        emit(e, run, ps);
}

size_t sdsm_diff_encode(const uint8_t *twin, const uint8_t *cur, size_t ps, size_t gran, size_t phase,
                        uint8_t *out, size_t *nruns, size_t *ndata)
{
    enc_t e = {.out = out, .p = out, .cur = cur};
    if (gran <= 1)
        encode_bytes(&e, twin, cur, ps);
    else
        encode_elems(&e, twin, cur, ps, gran, phase % gran);
    if (nruns)
        *nruns = e.nruns;
    if (ndata)
        *ndata = e.ndata;
    return (size_t)(e.p - out);
}

int sdsm_diff_check(const uint8_t *runs, size_t len, size_t ps)
{
    size_t off = 0, pos = 0;
    while (off < len) {
        size_t gap = 0, n = 0, k;
        if (!(k = get_varint(runs + off, len - off, &gap)))
            return SDSM_EPROTO;
        off += k;
        if (!(k = get_varint(runs + off, len - off, &n)))
            return SDSM_EPROTO;
        off += k;
        if (gap > ps - pos || n > ps - pos - gap || n > len - off)
            return SDSM_EPROTO;
        pos += gap + n;
        off += n;
    }
    return 0;
}

size_t sdsm_diff_apply(uint8_t *page, const uint8_t *runs, size_t len)
{
    size_t off = 0, pos = 0, total = 0;
    while (off < len) {
        size_t gap = 0, n = 0;
        off += get_varint(runs + off, len - off, &gap);
        off += get_varint(runs + off, len - off, &n);
        pos += gap;
        memcpy(page + pos, runs + off, n);
        pos += n;
        off += n;
        total += n;
    }
    return total;
}

const uint8_t *sdsm_diff_next(const uint8_t *runs, size_t len, size_t *off, size_t *pos, size_t *at,
                              size_t *n)
{
    size_t gap = 0;
    if (*off >= len)
        return NULL;
    *off += get_varint(runs + *off, len - *off, &gap);
    *off += get_varint(runs + *off, len - *off, n);
    *at = *pos + gap;
    const uint8_t *d = runs + *off;
    *off += *n;
    *pos = *at + *n;
    return d;
}

int sdsm_diff_batch_check(const uint8_t *buf, size_t len, uint32_t npages, size_t ps)
{
    size_t off = 0;
    while (off < len) {
        uint32_t pg, nb;
        if (len - off < 8)
            return SDSM_EPROTO;
        memcpy(&pg, buf + off, 4);
        memcpy(&nb, buf + off + 4, 4);
        off += 8;
        if (pg >= npages || nb > len - off || sdsm_diff_check(buf + off, nb, ps))
            return SDSM_EPROTO;
        off += nb;
    }
    return 0;
}

int sdsm_diff_chain_check(const uint8_t *chain, size_t len, uint32_t npages, size_t ps)
{
    size_t off = 0;
    while (off < len) {
        uint32_t bl;
        if (len - off < 8)
            return SDSM_EPROTO;
        memcpy(&bl, chain + off + 4, 4);
        off += 8;
        if (bl > len - off || sdsm_diff_batch_check(chain + off, bl, npages, ps))
            return SDSM_EPROTO;
        off += bl;
    }
    return 0;
}
