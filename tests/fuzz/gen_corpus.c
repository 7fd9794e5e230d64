/*
 * gen_corpus.c - writes the seed corpus of the two fuzz targets:
 *   gen_corpus DIR   ->  DIR/msg/seed-*  and  DIR/auth/seed-*
 * One well-formed input per message type and per handshake mode, so a
 * fuzzing session starts from inputs that pass the header check and reach
 * the payload checks.  tests/fuzz/corpus holds its output plus the inputs
 * that once crashed a target (named crash-*), replayed by the test suite.
 */
#include "mem/diff.h"
#include "net/auth.h"
#include "net/msg.h"
#include "net/sha256.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct buf {
    uint8_t b[1 << 16];
    size_t n;
} buf_t;

static void put(buf_t *o, const void *p, size_t n)
{
    if (o->n + n > sizeof o->b) {
        fprintf(stderr, "gen_corpus: seed too large\n");
        exit(1);
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put32(buf_t *o, uint32_t v) { put(o, &v, 4); }

static void frame(buf_t *o, uint16_t type, uint16_t flags, const void *p, uint32_t len)
{
    sdsm_hdr_t h = {.len = len, .type = type, .flags = flags};
    put(o, &h, sizeof h);
    put(o, p, len);
}

static void save(const char *dir, const char *name, const buf_t *o)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/seed-%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "gen_corpus: output path too long: %s/seed-%s\n", dir, name);
        exit(1);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(o->b, 1, o->n, f) != o->n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* A diff of a page of ps bytes where a few bytes changed. */
static size_t some_runs(uint8_t *out, size_t ps, int seed)
{
    uint8_t twin[4096] = {0}, cur[4096] = {0};
    for (size_t i = (size_t)seed; i < ps; i += 37 + (size_t)seed)
        cur[i] = (uint8_t)(i + 1);
    return sdsm_diff_encode(twin, cur, ps, 1, 0, out, NULL, NULL);
}

/* A batch {u32 page, u32 nbytes, runs}: a diff entry and a notice. */
static void some_batch(buf_t *o, size_t ps)
{
    uint8_t runs[8192];
    size_t n = some_runs(runs, ps, 3);
    put32(o, 1);
    put32(o, (uint32_t)n);
    put(o, runs, n);
    put32(o, 0);
    put32(o, 0);
}

static void msg_seeds(const char *dir)
{
    const size_t ps = 256;
    const uint8_t mode = 1 | 3 << 2; /* page size 256, 4 pages */
    uint8_t page[4096], runs[8192];
    memset(page, 0x5a, sizeof page);
    buf_t *o = calloc(1, sizeof *o), *p = calloc(1, sizeof *p);
    uint32_t u[8] = {1, 2, 3, 0, 0, 0, 0, 0};
    char name[64];

#define SEED(nm, ...)                                                                                        \
    do {                                                                                                     \
        o->n = 0;                                                                                            \
        put(o, &mode, 1);                                                                                    \
        __VA_ARGS__;                                                                                         \
        save(dir, nm, o);                                                                                    \
    } while (0)

    for (unsigned t = 1; t < SDSM_MSG_NTYPES; t++) {
        const sdsm_msg_info_t *m = &sdsm_msg_table[t];
        p->n = 0;
        switch (t) {
        case SDSM_MSG_DIFF:
        case SDSM_MSG_FWD_DIFF: some_batch(p, ps); break;
        case SDSM_MSG_LOCK_REL:
            put32(p, 5);
            put32(p, 9);
            some_batch(p, ps);
            break;
        case SDSM_MSG_LOCK_GRANT: {
            buf_t *b = calloc(1, sizeof *b);
            some_batch(b, ps);
            put32(p, 5);
            for (uint32_t stamp = 1; stamp <= 2; stamp++) {
                put32(p, stamp);
                put32(p, (uint32_t)b->n);
                put(p, b->b, b->n);
            }
            free(b);
            break;
        }
        case SDSM_MSG_FETCH_REPZ: {
            size_t n = some_runs(runs, ps, 5);
            put(p, u, 8);
            put(p, runs, n);
            break;
        }
        case SDSM_MSG_FETCH_REP:
        case SDSM_MSG_PUSH:
        case SDSM_MSG_HOME_DATA:
            put(p, u, 8);
            put(p, page, ps);
            break;
        case SDSM_MSG_FETCH_RUN:
            put32(p, 0);
            put32(p, 3);
            for (int i = 0; i < 3; i++)
                put(p, page, ps);
            break;
        case SDSM_MSG_BAR_ARRIVE: /* flags, n, pages[n], moves */
        case SDSM_MSG_BAR_RELEASE:
            put32(p, 0);
            put32(p, 1);
            put32(p, 2);
            if (t == SDSM_MSG_BAR_RELEASE)
                put32(p, 1);
            break;
        case SDSM_MSG_ALLOC_REP:
            put32(p, (uint32_t)-ENOMEM);
            put(p, "no room", 7);
            break;
        default: { /* fixed-size messages: words 1, 2, 3, then zeros */
            static uint8_t fixed[4096];
            memcpy(fixed, u, sizeof u);
            put(p, fixed, m->min_len < sizeof fixed ? m->min_len : sizeof fixed);
            break;
        }
        }
        snprintf(name, sizeof name, "%s", m->name);
        for (char *c = name; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        SEED(name, frame(o, (uint16_t)t, 0, p->b, (uint32_t)p->n));
    }
    /* Several frames in one stream, and one cut short. */
    SEED("stream", {
        p->n = 0;
        some_batch(p, ps);
        frame(o, SDSM_MSG_DIFF, SDSM_DIFF_EAGER, p->b, (uint32_t)p->n);
        frame(o, SDSM_MSG_DIFF_ACK, 0, NULL, 0);
        frame(o, SDSM_MSG_INVAL, 0, u, 12);
        frame(o, SDSM_MSG_FETCH, 0, u, 8);
        o->n -= 4;
    });
    /* Encoder round trips: byte granularity and 8-byte elements with a phase. */
    for (int g = 0; g < 2; g++) {
        o->n = 0;
        uint8_t hdr[3] = {0x80, (uint8_t)(g ? 5 : 0), 3};
        put(o, hdr, 3);
        uint8_t twin[512], cur[512];
        for (int i = 0; i < 512; i++) {
            twin[i] = (uint8_t)(i * 7);
            cur[i] = (uint8_t)(i % 29 == 0 || i % 61 < 3 ? i : i * 7);
        }
        put(o, twin, sizeof twin);
        put(o, cur, sizeof cur);
        save(dir, g ? "roundtrip-gran8" : "roundtrip-bytes", o);
    }
#undef SEED
    free(o);
    free(p);
}

static void auth_seeds(const char *dir)
{
    buf_t *o = calloc(1, sizeof *o);
    uint8_t mode, na[16], in[SDSM_AUTH_HELLO_C_LEN] = {0}, key[SDSM_KEY_BYTES];
    char hex[2 * SDSM_KEY_BYTES + 1];
    uint16_t keep = 0xffff, flip = 3;
    uint32_t rank = 2;
    for (int i = 0; i < 16; i++)
        na[i] = (uint8_t)(i * 11);
    for (int i = 0; i < SDSM_KEY_BYTES; i++)
        key[i] = (uint8_t)(i * 5 + 1);
    for (int i = 0; i < SDSM_KEY_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02X", key[i]);

    o->n = 0, mode = 0;
    put(o, &mode, 1);
    put(o, hex, 2 * SDSM_KEY_BYTES);
    save(dir, "key", o);

    memcpy(in, "SDSMC1\0\0", 8);
    memcpy(in + 8, &rank, 4);
    for (uint8_t form = 0; form < 2; form++) {
        o->n = 0, mode = 1;
        put(o, &mode, 1);
        put(o, &form, 1);
        put(o, na, 16);
        put(o, in, sizeof in);
        put(o, &keep, 2);
        save(dir, form ? "hello-valid" : "hello-raw", o);
    }
    o->n = 0, mode = 2; /* acceptor: a well-formed hello with a wrong proof */
    put(o, &mode, 1);
    put(o, in, sizeof in);
    save(dir, "acceptor", o);

    uint8_t a[SDSM_AUTH_HELLO_A_LEN], ok[SDSM_AUTH_OK_LEN];
    sdsm_auth_hello_a(a, na);
    sdsm_auth_ok(ok, key, na, na, rank);
    o->n = 0, mode = 3; /* connector: a hello and an OK with a wrong proof */
    put(o, &mode, 1);
    put(o, a, sizeof a);
    put(o, ok, sizeof ok);
    save(dir, "connector", o);

    for (int bad = 0; bad < 2; bad++) {
        o->n = 0, mode = 4;
        put(o, &mode, 1);
        put(o, key, sizeof key);
        put(o, &rank, 4);
        put(o, bad ? &flip : &keep, 2);
        save(dir, bad ? "handshake-wrong-key" : "handshake", o);
    }
    o->n = 0, mode = 5;
    put(o, &mode, 1);
    for (int i = 0; i < 300; i++)
        put(o, &(uint8_t){(uint8_t)(i * 13)}, 1);
    save(dir, "sha256", o);
    free(o);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus DIR  (writes DIR/msg and DIR/auth)\n");
        return 2;
    }
    char msg[4096], auth[4096];
    snprintf(msg, sizeof msg, "%s/msg", argv[1]);
    snprintf(auth, sizeof auth, "%s/auth", argv[1]);
    mkdir(argv[1], 0777);
    mkdir(msg, 0777);
    mkdir(auth, 0777);
    msg_seeds(msg);
    auth_seeds(auth);
    return 0;
}
