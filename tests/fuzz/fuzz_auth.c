/*
 * fuzz_auth.c - libFuzzer target for the job-key handshake (net/auth.c) and
 * the hashing under it (net/sha256.c): everything a stranger's bytes reach
 * before a connection is trusted.
 *
 * The first input byte picks a mode, the rest is its data:
 *   0  sdsm_auth_key_parse on a string: accepted iff 64 hex digits, and the
 *      key is what those digits say.
 *   1  sdsm_auth_check_hello_c on a 64-byte hello: accepted iff the magic and
 *      the zero word are right and the proof is the HMAC auth.h specifies
 *      (computed here from that spec); a second form builds a valid hello
 *      (keeping the input's zero word) and flips one chosen bit: accepted
 *      only when the word is zero and no bit was flipped.  Either way
 *      sdsm_auth_hello_c_plausible must keep every prefix of a valid hello
 *      and drop a wrong magic.
 *   2  sdsm_auth_acceptor reading the input as the connector's bytes from a
 *      socket (then EOF): it must refuse, quickly.
 *   3  sdsm_auth_connector reading the input as the acceptor's bytes: it
 *      must refuse, quickly.
 *   4  a whole handshake between the two over a socket pair, the connector's
 *      key possibly differing in one chosen bit: both succeed with the right
 *      rank iff the keys are equal, else both fail.
 *   5  SHA-256 fed in input-chosen pieces equals SHA-256 in one piece, and
 *      HMAC with a key longer than a block equals HMAC with its digest.
 */
#include "core/status.h"
#include "net/auth.h"
#include "net/sha256.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT_MS 5000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_auth: %s\n", what);
    abort();
}

static const uint8_t KEY[SDSM_KEY_BYTES] = {0x6b, 0x65, 0x79, 0x20, 0x66, 0x6f, 0x72, 0x20, 0x74, 0x68, 0x65,
                                            0x20, 0x66, 0x75, 0x7a, 0x7a, 0x65, 0x72, 0x27, 0x73, 0x20, 0x6a,
                                            0x6f, 0x62, 0x2c, 0x20, 0x33, 0x32, 0x20, 0x62, 0x79, 0x74};

/* Take n bytes of input, zero-padded when it runs out. */
static void take(const uint8_t **d, size_t *n, void *out, size_t len)
{
    size_t k = *n < len ? *n : len;
    memcpy(out, *d, k);
    memset((uint8_t *)out + k, 0, len - k);
    *d += k;
    *n -= k;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void key_parse(const uint8_t *d, size_t n)
{
    char s[160];
    if (n >= sizeof s)
        n = sizeof s - 1;
    memcpy(s, d, n);
    s[n] = '\0';
    uint8_t key[SDSM_KEY_BYTES];
    int rc = sdsm_auth_key_parse(s, key);
    int valid = strlen(s) == 2 * SDSM_KEY_BYTES;
    for (size_t i = 0; valid && i < 2 * SDSM_KEY_BYTES; i++)
        valid = hexval(s[i]) >= 0;
    if (valid != (rc == 0))
        fail("key_parse disagrees with the definition of a key");
    if (rc == 0)
        for (size_t i = 0; i < SDSM_KEY_BYTES; i++)
            if (key[i] != (hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1])))
                fail("key_parse decoded the wrong byte");
    if (rc && rc != SDSM_EINVAL)
        fail("key_parse returned an undocumented code");
}

/* proof_c per auth.h: HMAC(key, "sdsm-c" nonce_a nonce_c rank). */
static void spec_proof(const uint8_t na[16], const uint8_t nc[16], uint32_t rank, uint8_t out[32])
{
    uint8_t m[6 + 16 + 16 + 4];
    memcpy(m, "sdsm-c", 6);
    memcpy(m + 6, na, 16);
    memcpy(m + 22, nc, 16);
    memcpy(m + 38, &rank, 4);
    sdsm_hmac_sha256(KEY, sizeof KEY, m, sizeof m, out);
}

static void hello_c(const uint8_t *d, size_t n)
{
    uint8_t form = 0, na[16], in[SDSM_AUTH_HELLO_C_LEN], want[32], nc[16];
    uint16_t flip = 0;
    take(&d, &n, &form, 1);
    take(&d, &n, na, sizeof na);
    take(&d, &n, in, sizeof in);
    take(&d, &n, &flip, sizeof flip);
    uint32_t rank, got_rank = 0xdeadbeef;
    memcpy(&rank, in + 8, 4);
    static const uint8_t zero[4];
    int expect = 0; /* form 1: valid unless the zero word is not or a bit was flipped */
    if (form & 1) {
        memcpy(in, "SDSMC1\0\0", 8);
        spec_proof(na, in + 16, rank, in + 32);
        expect = memcmp(in + 12, zero, 4) == 0 && flip >= 8 * sizeof in;
        if (flip < 8 * sizeof in)
            in[flip / 8] ^= (uint8_t)(1u << flip % 8);
    }
    int rc = sdsm_auth_check_hello_c(KEY, na, in, &got_rank, nc);
    memcpy(&rank, in + 8, 4);
    spec_proof(na, in + 16, rank, want);
    int ok =
        memcmp(in, "SDSMC1\0\0", 8) == 0 && memcmp(in + 12, zero, 4) == 0 && memcmp(in + 32, want, 32) == 0;
    if (ok != (rc == 0))
        fail(ok ? "a valid hello was refused" : "an invalid hello was accepted");
    if (rc == 0 && (got_rank != rank || memcmp(nc, in + 16, 16) != 0))
        fail("an accepted hello reported the wrong rank or nonce");
    if (rc && rc != SDSM_EAUTH)
        fail("check_hello_c returned an undocumented code");
    if ((form & 1) && expect != ok)
        fail("a hello with one bit flipped or a non-zero word was accepted");
    /* The event-driven acceptor drops a connection at its first implausible byte. */
    int magic = memcmp(in, "SDSMC1\0\0", 8) == 0;
    for (size_t k = 0; k <= sizeof in; k++) {
        int plausible = sdsm_auth_hello_c_plausible(in, k);
        if (rc == 0 && !plausible)
            fail("a prefix of a valid hello was judged implausible");
        if (k >= 8 && plausible != magic)
            fail("a whole magic was judged wrongly");
    }
}

/* Feed `d` to one end of a socket pair, then EOF; run one side on the other. */
static void one_side(const uint8_t *d, size_t n, int acceptor)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        fail("socketpair");
    if (n > 4096)
        n = 4096;
    if (write(sv[1], d, n) != (ssize_t)n)
        fail("short write into the socket pair");
    shutdown(sv[1], SHUT_WR);
    uint32_t rank = 0;
    int64_t t0 = sdsm_io_now_ms();
    int rc = acceptor ? sdsm_auth_acceptor(sv[0], KEY, &rank, TIMEOUT_MS)
                      : sdsm_auth_connector(sv[0], KEY, 3, TIMEOUT_MS);
    /* The peer's nonce is fresh: no input can carry a proof for it. */
    if (rc == 0)
        fail("a handshake succeeded against canned bytes");
    if (rc != SDSM_EAUTH && rc != SDSM_EPEER)
        fail("a refused handshake returned an unexpected code");
    if (sdsm_io_now_ms() - t0 >= TIMEOUT_MS - 500) /* reached its deadline, not EOF */
        fail("a handshake against a closed peer waited for its deadline");
    close(sv[0]);
    close(sv[1]);
}

typedef struct side {
    int fd, rc;
    uint32_t rank;
    uint8_t key[SDSM_KEY_BYTES];
} side_t;

static void *accept_side(void *arg)
{
    side_t *s = arg;
    s->rc = sdsm_auth_acceptor(s->fd, s->key, &s->rank, TIMEOUT_MS);
    shutdown(s->fd, SHUT_RDWR); /* as the real acceptor closes a refused socket */
    return NULL;
}

static void handshake(const uint8_t *d, size_t n)
{
    side_t a = {0}, c = {0};
    uint16_t flip = 0;
    take(&d, &n, a.key, sizeof a.key);
    take(&d, &n, &c.rank, sizeof c.rank);
    take(&d, &n, &flip, sizeof flip);
    memcpy(c.key, a.key, sizeof c.key);
    int differ = flip < 8 * SDSM_KEY_BYTES;
    if (differ)
        c.key[flip / 8] ^= (uint8_t)(1u << flip % 8);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        fail("socketpair");
    a.fd = sv[0];
    pthread_t t;
    if (pthread_create(&t, NULL, accept_side, &a))
        fail("pthread_create");
    c.rc = sdsm_auth_connector(sv[1], c.key, c.rank, TIMEOUT_MS);
    pthread_join(t, NULL);
    close(sv[0]);
    close(sv[1]);
    if (!differ && (a.rc || c.rc || a.rank != c.rank))
        fail("a handshake with equal keys failed");
    if (differ && (a.rc != SDSM_EAUTH || c.rc == 0))
        fail("a handshake with different keys was not refused by both sides");
}

static void hashing(const uint8_t *d, size_t n)
{
    uint8_t one[32], pieces[32];
    sdsm_sha256_t s;
    sdsm_sha256_init(&s);
    sdsm_sha256_update(&s, d, n);
    sdsm_sha256_final(&s, one);
    sdsm_sha256_init(&s);
    size_t off = 0;
    for (size_t i = 0; off < n; i++) { /* piece lengths from the data itself */
        size_t k = 1 + (size_t)d[i % n] * (i + 1) % 131;
        if (k > n - off)
            k = n - off;
        sdsm_sha256_update(&s, d + off, k);
        off += k;
    }
    sdsm_sha256_final(&s, pieces);
    if (memcmp(one, pieces, 32) != 0)
        fail("SHA-256 depends on how its input is split");
    if (n > 64) { /* RFC 2104: a key longer than a block is replaced by its digest */
        uint8_t m1[32], m2[32];
        sdsm_hmac_sha256(d, n, "msg", 3, m1);
        sdsm_hmac_sha256(one, 32, "msg", 3, m2);
        if (memcmp(m1, m2, 32) != 0)
            fail("HMAC with a long key differs from HMAC with its digest");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    switch (data[0] % 6) {
    case 0: key_parse(d, n); break;
    case 1: hello_c(d, n); break;
    case 2: one_side(d, n, 1); break;
    case 3: one_side(d, n, 0); break;
    case 4: handshake(d, n); break;
    case 5: hashing(d, n); break;
    }
    return 0;
}
