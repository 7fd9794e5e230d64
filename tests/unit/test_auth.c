/*
 * test_auth.c - net/sha256.c and net/auth.c: hash and HMAC test vectors,
 * the job key, the handshake message builders, and the handshake itself
 * over socketpair(AF_UNIX) with the two sides on two threads.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/status.h"
#include "net/auth.h"
#include "net/sha256.h"

/* ---------------------------------------------------------------- helpers */

static void unhex(const char *h, uint8_t *out)
{
    for (size_t i = 0; h[2 * i]; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void tohex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void sha(const void *p, size_t n, uint8_t out[32])
{
    sdsm_sha256_t s;
    sdsm_sha256_init(&s);
    sdsm_sha256_update(&s, p, n);
    sdsm_sha256_final(&s, out);
}

#define CHECK_DIGEST(d, hex)                                                                                 \
    do {                                                                                                     \
        char h_[65];                                                                                         \
        tohex((d), 32, h_);                                                                                  \
        CHECK_STR(h_, hex);                                                                                  \
    } while (0)

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Our own bounded I/O for the fake peers (not the code under test). */
static int xread(int fd, void *buf, size_t n, int ms)
{
    size_t got = 0;
    int64_t end = now_ms() + ms;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int xwrite(int fd, const void *buf, size_t n)
{
    return send(fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* ------------------------------------------------------------ SHA-256 */

static void test_sha256_vectors(void)
{
    uint8_t d[32];
    sha("", 0, d);
    CHECK_DIGEST(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha("abc", 3, d);
    CHECK_DIGEST(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha(m448, strlen(m448), d);
    CHECK_DIGEST(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    sha(m896, strlen(m896), d);
    CHECK_DIGEST(d, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

    /* one million 'a', fed in uneven pieces */
    static uint8_t a[1000000];
    memset(a, 'a', sizeof a);
    sdsm_sha256_t s;
    sdsm_sha256_init(&s);
    for (size_t off = 0, step = 1; off < sizeof a; off += step, step = step * 3 % 1000 + 1)
        sdsm_sha256_update(&s, a + off, off + step > sizeof a ? sizeof a - off : step);
    sdsm_sha256_final(&s, d);
    CHECK_DIGEST(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Byte-at-a-time updates agree with one update around every padding edge. */
static void test_sha256_streaming(void)
{
    uint8_t msg[200], one[32], many[32];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 31 + 7);
    for (size_t n = 0; n <= sizeof msg; n++) {
        sha(msg, n, one);
        sdsm_sha256_t s;
        sdsm_sha256_init(&s);
        for (size_t i = 0; i < n; i++)
            sdsm_sha256_update(&s, msg + i, 1);
        sdsm_sha256_update(&s, msg, 0);
        sdsm_sha256_final(&s, many);
        if (!CHECK_MEM(many, one, 32))
            fprintf(stderr, "    length %zu\n", n);
    }
    /* init resets a used context */
    sdsm_sha256_t s;
    sdsm_sha256_init(&s);
    sdsm_sha256_update(&s, msg, 100);
    sdsm_sha256_init(&s);
    sdsm_sha256_update(&s, "abc", 3);
    sdsm_sha256_final(&s, one);
    CHECK_DIGEST(one, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* RFC 4231 test cases (5, a truncated output, is not applicable). */
static void test_hmac_rfc4231(void)
{
    uint8_t key[131], data[160], d[32];

    memset(key, 0x0b, 20); /* 1 */
    sdsm_hmac_sha256(key, 20, "Hi There", 8, d);
    CHECK_DIGEST(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

    const char *m2 = "what do ya want for nothing?"; /* 2 */
    sdsm_hmac_sha256((const uint8_t *)"Jefe", 4, m2, strlen(m2), d);
    CHECK_DIGEST(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    memset(key, 0xaa, 20); /* 3 */
    memset(data, 0xdd, 50);
    sdsm_hmac_sha256(key, 20, data, 50, d);
    CHECK_DIGEST(d, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");

    for (int i = 0; i < 25; i++) /* 4 */
        key[i] = (uint8_t)(i + 1);
    memset(data, 0xcd, 50);
    sdsm_hmac_sha256(key, 25, data, 50, d);
    CHECK_DIGEST(d, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");

    memset(key, 0xaa, 131); /* 6: key longer than the block */
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    sdsm_hmac_sha256(key, 131, m6, strlen(m6), d);
    CHECK_DIGEST(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the HMAC "
                     "algorithm."; /* 7 */
    sdsm_hmac_sha256(key, 131, m7, strlen(m7), d);
    CHECK_DIGEST(d, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");

    /* keys of exactly one block and one byte more (hashed) */
    memset(key, 0x01, 65);
    sdsm_hmac_sha256(key, 64, "x", 1, d);
    CHECK_DIGEST(d, "c668fc54e1a2a267c502413f4580c5bb5d9229fef5fb9b4ff5f4ce5e76299783");
    sdsm_hmac_sha256(key, 65, "x", 1, d);
    CHECK_DIGEST(d, "fa34864aa49f680b10d9dd4d77db4bf268cdc0fe6e204c10fb63c62738e69497");
}

/* ---------------------------------------------------------------- keys */

static void test_key_generate_parse(void)
{
    char hex[2 * SDSM_KEY_BYTES + 1], hex2[2 * SDSM_KEY_BYTES + 1], back[2 * SDSM_KEY_BYTES + 1];
    uint8_t key[SDSM_KEY_BYTES], up[SDSM_KEY_BYTES];
    memset(hex, 'Z', sizeof hex);
    CHECK_I(sdsm_auth_key_generate(hex), ==, 0);
    CHECK_U(strnlen(hex, sizeof hex), ==, 64);
    size_t nonhex = 0;
    for (int i = 0; i < 64; i++)
        nonhex += !((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
    CHECK_U(nonhex, ==, 0);
    CHECK_I(sdsm_auth_key_parse(hex, key), ==, 0);
    tohex(key, SDSM_KEY_BYTES, back);
    CHECK_STR(back, hex);
    CHECK_I(sdsm_auth_key_generate(hex2), ==, 0);
    CHECK(strcmp(hex, hex2) != 0); /* two keys differ */

    /* upper case parses to the same bytes */
    const char *lo = "00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210";
    const char *hi = "00112233445566778899AABBCCDDEEFF0123456789ABCDEFFEDCBA9876543210";
    uint8_t want[SDSM_KEY_BYTES];
    unhex(lo, want);
    CHECK_I(sdsm_auth_key_parse(lo, key), ==, 0);
    CHECK_MEM(key, want, SDSM_KEY_BYTES);
    CHECK_I(sdsm_auth_key_parse(hi, up), ==, 0);
    CHECK_MEM(up, want, SDSM_KEY_BYTES);

    /* rejected: wrong length, non-hex anywhere */
    char buf[160];
    CHECK_I(sdsm_auth_key_parse(NULL, key), ==, SDSM_EINVAL);
    CHECK_I(sdsm_auth_key_parse("", key), ==, SDSM_EINVAL);
    snprintf(buf, sizeof buf, "%.63s", lo);
    CHECK_I(sdsm_auth_key_parse(buf, key), ==, SDSM_EINVAL);
    snprintf(buf, sizeof buf, "%s0", lo);
    CHECK_I(sdsm_auth_key_parse(buf, key), ==, SDSM_EINVAL);
    snprintf(buf, sizeof buf, "%s%s", lo, lo);
    CHECK_I(sdsm_auth_key_parse(buf, key), ==, SDSM_EINVAL);
    snprintf(buf, sizeof buf, "0x%.62s", lo);
    CHECK_I(sdsm_auth_key_parse(buf, key), ==, SDSM_EINVAL);
    static const char bad[] = {'g', 'G', ' ', '-', ':', 'x', '/', '@', '`', '\xff'};
    static const int where[] = {0, 1, 31, 62, 63};
    for (size_t b = 0; b < sizeof bad; b++)
        for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
            snprintf(buf, sizeof buf, "%s", lo);
            buf[where[w]] = bad[b];
            if (!CHECK_I(sdsm_auth_key_parse(buf, key), ==, SDSM_EINVAL))
                fprintf(stderr, "    '%c' at %d\n", bad[b], where[w]);
        }
}

/* ------------------------------------------------------- message builders */

/* Two keys that differ in the last bit only. */
static const uint8_t KEY_A[SDSM_KEY_BYTES] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                              17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t KEY_B[SDSM_KEY_BYTES] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                              17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 33};

/* proof = HMAC(key, tag na nc rank), as auth.h describes it */
static void proof(const uint8_t *key, const char *tag, const uint8_t na[16], const uint8_t nc[16],
                  uint32_t rank, uint8_t out[32])
{
    uint8_t m[42];
    memcpy(m, tag, 6);
    memcpy(m + 6, na, 16);
    memcpy(m + 22, nc, 16);
    memcpy(m + 38, &rank, 4);
    sdsm_hmac_sha256(key, SDSM_KEY_BYTES, m, sizeof m, out);
}

static void make_hello_c(const uint8_t *key, const uint8_t na[16], const uint8_t nc[16], uint32_t rank,
                         uint8_t out[SDSM_AUTH_HELLO_C_LEN])
{
    memset(out, 0, SDSM_AUTH_HELLO_C_LEN);
    memcpy(out, "SDSMC1\0\0", 8);
    memcpy(out + 8, &rank, 4);
    memcpy(out + 16, nc, 16);
    proof(key, "sdsm-c", na, nc, rank, out + 32);
}

static void test_builders(void)
{
    uint8_t na[16], nc[16], got_nc[16], want[32];
    uint8_t a[SDSM_AUTH_HELLO_A_LEN], c[SDSM_AUTH_HELLO_C_LEN], ok[SDSM_AUTH_OK_LEN];
    for (int i = 0; i < 16; i++) {
        na[i] = (uint8_t)(0xA0 + i);
        nc[i] = (uint8_t)(0xC0 + i);
    }
    CHECK_I(SDSM_AUTH_HELLO_A_LEN, ==, 24);
    CHECK_I(SDSM_AUTH_HELLO_C_LEN, ==, 64);
    CHECK_I(SDSM_AUTH_OK_LEN, ==, 40);

    sdsm_auth_hello_a(a, na);
    CHECK_MEM(a, "SDSMA1\0\0", 8);
    CHECK_MEM(a + 8, na, 16);

    sdsm_auth_ok(ok, KEY_A, na, nc, 7);
    CHECK_MEM(ok, "SDSMOK\0\0", 8);
    proof(KEY_A, "sdsm-s", na, nc, 7, want);
    CHECK_MEM(ok + 8, want, 32);

    /* a correct hello is accepted and yields rank and nonce */
    uint32_t rank = 12345;
    make_hello_c(KEY_A, na, nc, 7, c);
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, 0);
    CHECK_U(rank, ==, 7);
    CHECK_MEM(got_nc, nc, 16);
    make_hello_c(KEY_A, na, nc, 0xFFFFFFFFu, c);
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, 0);
    CHECK_U(rank, ==, 0xFFFFFFFFu);

    /* rejected: other key, other nonce_a, forged rank, wrong magic, any bit of the proof */
    rank = 12345;
    make_hello_c(KEY_A, na, nc, 7, c);
    CHECK_I(sdsm_auth_check_hello_c(KEY_B, na, c, &rank, got_nc), ==, SDSM_EAUTH);
    uint8_t na2[16];
    memcpy(na2, na, 16);
    na2[15] ^= 1;
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na2, c, &rank, got_nc), ==, SDSM_EAUTH);
    c[8] = 8; /* rank 8 with rank 7's proof */
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, SDSM_EAUTH);
    c[8] = 7;
    c[20] ^= 0x40; /* nonce_c changed after the proof */
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, SDSM_EAUTH);
    c[20] ^= 0x40;
    for (int i = 0; i < 8; i++) {
        c[i] ^= 0x20;
        CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, SDSM_EAUTH);
        c[i] ^= 0x20;
    }
    for (int i = 12; i < 16; i++) { /* the zero word is part of the format (found by fuzz_auth) */
        c[i] ^= 0x01;
        CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, SDSM_EAUTH);
        c[i] ^= 0x01;
    }
    size_t accepted = 0;
    for (int i = 32; i < 64; i++)
        for (int bit = 0; bit < 8; bit++) {
            c[i] ^= (uint8_t)(1 << bit);
            accepted += sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc) != SDSM_EAUTH;
            c[i] ^= (uint8_t)(1 << bit);
        }
    CHECK_U(accepted, ==, 0);
    CHECK_U(rank, ==, 12345); /* never stored on failure */
    /* a server proof is not a client proof (no reflection) */
    sdsm_auth_ok(ok, KEY_A, na, nc, 7);
    memcpy(c + 32, ok + 8, 32);
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, SDSM_EAUTH);
    make_hello_c(KEY_A, na, nc, 7, c);
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &rank, got_nc), ==, 0);

    /* nonces are fresh */
    uint8_t n1[16], n2[16];
    sdsm_auth_nonce(n1);
    sdsm_auth_nonce(n2);
    CHECK(memcmp(n1, n2, 16) != 0);
}

/* ----------------------------------------------------------- handshake */

typedef struct side {
    int fd;
    const uint8_t *key;
    uint32_t rank; /* connector: sent; acceptor: learned */
    int timeout_ms;
    int close_on_fail;
    int rc;
    int64_t elapsed_ms;
    pthread_t th;
} side_t;

static void *acceptor_main(void *arg)
{
    side_t *s = arg;
    int64_t t0 = now_ms();
    s->rc = sdsm_auth_acceptor(s->fd, s->key, &s->rank, s->timeout_ms);
    s->elapsed_ms = now_ms() - t0;
    if (s->rc && s->close_on_fail) /* as auth.h says: a bad proof closes the socket */
        shutdown(s->fd, SHUT_RDWR);
    return NULL;
}

static void *connector_main(void *arg)
{
    side_t *s = arg;
    int64_t t0 = now_ms();
    s->rc = sdsm_auth_connector(s->fd, s->key, s->rank, s->timeout_ms);
    s->elapsed_ms = now_ms() - t0;
    if (s->rc && s->close_on_fail)
        shutdown(s->fd, SHUT_RDWR);
    return NULL;
}

static void start(side_t *s, void *(*fn)(void *))
{
    s->rc = 1;
    if (pthread_create(&s->th, NULL, fn, s)) {
        perror("pthread_create");
        exit(2);
    }
}

/* Join within ms; on a hang, record a failure and unblock the thread. */
static int finish(side_t *s, int ms, const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    if (pthread_timedjoin_np(s->th, NULL, &ts) == 0)
        return 1;
    char msg[160];
    snprintf(msg, sizeof msg, "%s still blocked after %d ms (timeout was %d ms)", what, ms, s->timeout_ms);
    ck_fail(__FILE__, __LINE__, "handshake side returns in time", msg);
    shutdown(s->fd, SHUT_RDWR); /* its read now sees EOF */
    pthread_join(s->th, NULL);
    return 0;
}

static void pair(int fds[2], int nonblock)
{
    if (socketpair(AF_UNIX, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), 0, fds)) {
        perror("socketpair");
        exit(2);
    }
}

static void handshake_same_key(int nonblock, uint32_t rank)
{
    int fds[2];
    pair(fds, nonblock);
    side_t acc = {.fd = fds[0], .key = KEY_A, .rank = 0xdead, .timeout_ms = 5000};
    side_t con = {.fd = fds[1], .key = KEY_A, .rank = rank, .timeout_ms = 5000};
    start(&acc, acceptor_main);
    start(&con, connector_main);
    finish(&con, 8000, "connector");
    finish(&acc, 8000, "acceptor");
    CHECK_I(acc.rc, ==, 0);
    CHECK_I(con.rc, ==, 0);
    CHECK_U(acc.rank, ==, rank);
    /* nothing is left unread on either side */
    char x;
    CHECK_I(recv(fds[0], &x, 1, MSG_DONTWAIT), ==, -1);
    CHECK_I(recv(fds[1], &x, 1, MSG_DONTWAIT), ==, -1);
    close(fds[0]);
    close(fds[1]);
}

static void test_handshake_ok(void)
{
    handshake_same_key(0, 5);
    handshake_same_key(0, 0);
    handshake_same_key(1, 1048575);
    handshake_same_key(1, 0xFFFFFFFFu);
}

static void handshake_other_key(int nonblock)
{
    int fds[2];
    pair(fds, nonblock);
    side_t acc = {.fd = fds[0], .key = KEY_A, .rank = 0xdead, .timeout_ms = 5000, .close_on_fail = 1};
    side_t con = {.fd = fds[1], .key = KEY_B, .rank = 3, .timeout_ms = 5000};
    start(&acc, acceptor_main);
    start(&con, connector_main);
    finish(&acc, 8000, "acceptor");
    finish(&con, 8000, "connector");
    CHECK_I(acc.rc, ==, SDSM_EAUTH);
    CHECK_U(acc.rank, ==, 0xdead);
    if (!CHECK(con.rc == SDSM_EAUTH || con.rc == SDSM_EPEER))
        fprintf(stderr, "    connector said %d (%s)\n", con.rc, sdsm_strerror(con.rc));
    close(fds[0]);
    close(fds[1]);
}

static void test_handshake_other_key(void)
{
    handshake_other_key(0);
    handshake_other_key(1);
}

/* A peer speaking something else: the real side must refuse it. */
static void test_handshake_garbage(void)
{
    uint8_t buf[64], a[SDSM_AUTH_HELLO_A_LEN], c[SDSM_AUTH_HELLO_C_LEN], ok[SDSM_AUTH_OK_LEN];
    int fds[2];

    /* acceptor <- garbage hello (wrong magic, otherwise well formed) */
    pair(fds, 0);
    side_t acc = {.fd = fds[0], .key = KEY_A, .rank = 0xdead, .timeout_ms = 3000};
    start(&acc, acceptor_main);
    CHECK_I(xread(fds[1], a, sizeof a, 3000), ==, 0);
    CHECK_MEM(a, "SDSMA1\0\0", 8);
    make_hello_c(KEY_A, a + 8, (const uint8_t[16]){1, 2, 3}, 2, c);
    memcpy(c, "GET / HT", 8);
    CHECK_I(xwrite(fds[1], c, sizeof c), ==, 0);
    finish(&acc, 6000, "acceptor");
    CHECK_I(acc.rc, ==, SDSM_EAUTH);
    CHECK_U(acc.rank, ==, 0xdead);
    CHECK_I(recv(fds[1], buf, 1, MSG_DONTWAIT), ==, -1); /* no OK was sent */
    close(fds[0]);
    close(fds[1]);

    /* acceptor <- 64 random bytes */
    pair(fds, 1);
    acc = (side_t){.fd = fds[0], .key = KEY_A, .rank = 0xdead, .timeout_ms = 3000};
    start(&acc, acceptor_main);
    CHECK_I(xread(fds[1], a, sizeof a, 3000), ==, 0);
    for (int i = 0; i < 64; i++)
        buf[i] = (uint8_t)(i * 37 + 11);
    CHECK_I(xwrite(fds[1], buf, 64), ==, 0);
    finish(&acc, 6000, "acceptor");
    CHECK_I(acc.rc, ==, SDSM_EAUTH);
    close(fds[0]);
    close(fds[1]);

    /* connector <- garbage hello (wrong magic).  The connector's magic came
     * first, before it read anything (auth.h): a lost last ACK of the TCP
     * handshake is sent again with it. */
    pair(fds, 0);
    side_t con = {.fd = fds[1], .key = KEY_A, .rank = 4, .timeout_ms = 3000};
    start(&con, connector_main);
    CHECK_I(xread(fds[0], buf, 8, 3000), ==, 0);
    CHECK_MEM(buf, "SDSMC1\0\0", 8);
    sdsm_auth_hello_a(a, (const uint8_t[16]){9, 9, 9});
    memcpy(a, "SSH-2.0-", 8);
    CHECK_I(xwrite(fds[0], a, sizeof a), ==, 0);
    finish(&con, 6000, "connector");
    CHECK_I(con.rc, ==, SDSM_EAUTH);
    CHECK_I(recv(fds[0], buf, 1, MSG_DONTWAIT), ==, -1); /* it sent no proof */
    close(fds[0]);
    close(fds[1]);

    /* connector <- a good hello, then an OK proving the wrong rank, a
     * reflected client proof, or a bad magic */
    for (int variant = 0; variant < 4; variant++) {
        pair(fds, variant & 1);
        con = (side_t){.fd = fds[1], .key = KEY_A, .rank = 4, .timeout_ms = 3000};
        start(&con, connector_main);
        uint8_t na[16] = {5, 4, 3, 2, 1}, nc[16];
        sdsm_auth_hello_a(a, na);
        CHECK_I(xwrite(fds[0], a, sizeof a), ==, 0);
        CHECK_I(xread(fds[0], c, sizeof c, 3000), ==, 0);
        uint32_t r = 0;
        CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &r, nc), ==, 0);
        CHECK_U(r, ==, 4);
        if (variant == 0) {
            sdsm_auth_ok(ok, KEY_A, na, nc, 5);
        } else if (variant == 1) {
            memcpy(ok, "SDSMOK\0\0", 8);
            memcpy(ok + 8, c + 32, 32);
        } else if (variant == 2) {
            sdsm_auth_ok(ok, KEY_A, na, nc, 4);
            ok[2] = 'X';
        } else {
            sdsm_auth_ok(ok, KEY_B, na, nc, 4);
        }
        CHECK_I(xwrite(fds[0], ok, sizeof ok), ==, 0);
        finish(&con, 6000, "connector");
        if (!CHECK_I(con.rc, ==, SDSM_EAUTH))
            fprintf(stderr, "    variant %d\n", variant);
        close(fds[0]);
        close(fds[1]);
    }

    /* the builders interoperate with the real connector, even when the
     * hello arrives in pieces */
    pair(fds, 0);
    con = (side_t){.fd = fds[1], .key = KEY_A, .rank = 6, .timeout_ms = 3000};
    start(&con, connector_main);
    uint8_t na[16] = {7}, nc[16];
    sdsm_auth_hello_a(a, na);
    CHECK_I(xwrite(fds[0], a, 5), ==, 0);
    usleep(20000);
    CHECK_I(xwrite(fds[0], a + 5, 13), ==, 0);
    usleep(20000);
    CHECK_I(xwrite(fds[0], a + 18, 6), ==, 0);
    CHECK_I(xread(fds[0], c, sizeof c, 3000), ==, 0);
    uint32_t r = 0;
    CHECK_I(sdsm_auth_check_hello_c(KEY_A, na, c, &r, nc), ==, 0);
    CHECK_U(r, ==, 6);
    sdsm_auth_ok(ok, KEY_A, na, nc, r);
    CHECK_I(xwrite(fds[0], ok, sizeof ok), ==, 0);
    finish(&con, 6000, "connector");
    CHECK_I(con.rc, ==, 0);
    close(fds[0]);
    close(fds[1]);
}

/* A peer that closes: SDSM_EPEER, never a hang. */
static void test_handshake_peer_closes(void)
{
    int fds[2];
    pair(fds, 0);
    side_t con = {.fd = fds[1], .key = KEY_A, .rank = 1, .timeout_ms = 3000};
    start(&con, connector_main);
    close(fds[0]);
    finish(&con, 6000, "connector");
    CHECK_I(con.rc, ==, SDSM_EPEER);
    close(fds[1]);

    pair(fds, 0);
    side_t acc = {.fd = fds[0], .key = KEY_A, .rank = 0xdead, .timeout_ms = 3000};
    uint8_t a[SDSM_AUTH_HELLO_A_LEN];
    start(&acc, acceptor_main);
    CHECK_I(xread(fds[1], a, sizeof a, 3000), ==, 0);
    CHECK_I(xwrite(fds[1], "SDSMC1\0\0", 8), ==, 0); /* a truncated hello */
    close(fds[1]);
    finish(&acc, 6000, "acceptor");
    CHECK_I(acc.rc, ==, SDSM_EPEER);
    close(fds[0]);
}

/* A silent peer: SDSM_ETIMEDOUT once the timeout has passed, not much later. */
static void silent_peer(int nonblock)
{
    const int timeout = 300;
    for (int role = 0; role < 2; role++) {
        int fds[2];
        pair(fds, nonblock);
        side_t s = {.fd = fds[0], .key = KEY_A, .rank = 2, .timeout_ms = timeout};
        start(&s, role ? acceptor_main : connector_main);
        if (!finish(&s, timeout + 2000, role ? "acceptor" : "connector"))
            fprintf(stderr, "    %s socket\n", nonblock ? "non-blocking" : "blocking");
        else if (!CHECK_I(s.rc, ==, SDSM_ETIMEDOUT) | !CHECK_I(s.elapsed_ms, >=, timeout - 20) |
                 !CHECK_I(s.elapsed_ms, <=, timeout + 1000))
            fprintf(stderr, "    %s, %s socket\n", role ? "acceptor" : "connector",
                    nonblock ? "non-blocking" : "blocking");
        close(fds[0]);
        close(fds[1]);
    }
}

static void test_silent_peer_nonblocking(void) { silent_peer(1); }
static void test_silent_peer_blocking(void) { silent_peer(0); }

int main(void)
{
    RUN(test_sha256_vectors);
    RUN(test_sha256_streaming);
    RUN(test_hmac_rfc4231);
    RUN(test_key_generate_parse);
    RUN(test_builders);
    RUN(test_handshake_ok);
    RUN(test_handshake_other_key);
    RUN(test_handshake_garbage);
    RUN(test_handshake_peer_closes);
    RUN(test_silent_peer_nonblocking);
    RUN(test_silent_peer_blocking);
    return ck_done("test_auth");
}
