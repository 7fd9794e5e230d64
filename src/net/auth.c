/*
 * auth.c - job-key handshake (see auth.h for the exchange) and the small
 * deadline-bounded I/O helpers it needs.
 *
 * Set-up code only: nothing here runs on the data path.
 */
#include "auth.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/status.h"

static const char MAGIC_A[8] = "SDSMA1\0";
static const char MAGIC_C[8] = "SDSMC1\0";
static const char MAGIC_OK[8] = "SDSMOK\0";

int64_t sdsm_io_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Returns code, with errno set to e for the caller's %m. */
static int fail_with(int code, int e)
{
    errno = e;
    return code;
}

/* A read or send that failed, errno saying why: a connection the other end
 * broke is SDSM_EPEER, any other failure SDSM_ESYS. */
static int io_failed(void) { return errno == ECONNRESET || errno == EPIPE ? SDSM_EPEER : SDSM_ESYS; }

static int wait_fd(int fd, short ev, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - sdsm_io_now_ms();
        if (left <= 0)
            return fail_with(SDSM_ETIMEDOUT, ETIMEDOUT);
        struct pollfd p = {.fd = fd, .events = ev};
        int r = poll(&p, 1, (int)left);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return SDSM_ESYS;
    }
}

int sdsm_io_read_full(int fd, void *buf, size_t len, int64_t deadline_ms)
{
    size_t got = 0;
    while (got < len) {
        /* Poll first: the socket may be blocking, and the deadline must hold anyway. */
        int e = wait_fd(fd, POLLIN, deadline_ms);
        if (e)
            return e;
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r > 0) {
            got += (size_t)r;
        } else if (r == 0) {
            return fail_with(SDSM_EPEER, ECONNRESET);
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            return io_failed();
        }
    }
    return 0;
}

int sdsm_io_write_full(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
    size_t put = 0;
    while (put < len) {
        int e = wait_fd(fd, POLLOUT, deadline_ms);
        if (e)
            return e;
        ssize_t r = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (r >= 0) {
            put += (size_t)r;
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            return io_failed();
        }
    }
    return 0;
}

int sdsm_auth_key_generate(char hex[2 * SDSM_KEY_BYTES + 1])
{
    uint8_t key[SDSM_KEY_BYTES];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t r = getrandom(key + got, sizeof key - got, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return SDSM_ESYS;
        }
        got += (size_t)r;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof key; i++) {
        hex[2 * i] = digits[key[i] >> 4];
        hex[2 * i + 1] = digits[key[i] & 15];
    }
    hex[2 * SDSM_KEY_BYTES] = '\0';
    return 0;
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

int sdsm_auth_key_parse(const char *hex, uint8_t key[SDSM_KEY_BYTES])
{
    if (!hex || strlen(hex) != 2 * SDSM_KEY_BYTES)
        return SDSM_EINVAL;
    for (int i = 0; i < SDSM_KEY_BYTES; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return SDSM_EINVAL;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

void sdsm_auth_nonce(uint8_t nonce[16])
{
    size_t got = 0;
    while (got < 16) {
        ssize_t r = getrandom(nonce + got, 16 - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (r < 0 && errno != EINTR)
            break;
    }
    if (got < 16) { /* no entropy source: still unique per process and call */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t v[2] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32), (uint64_t)ts.tv_sec};
        memcpy(nonce, v, 16);
    }
}

static void proof(const uint8_t key[SDSM_KEY_BYTES], const char *tag, const uint8_t na[16],
                  const uint8_t nc[16], uint32_t rank, uint8_t out[32])
{
    uint8_t msg[6 + 16 + 16 + 4];
    memcpy(msg, tag, 6);
    memcpy(msg + 6, na, 16);
    memcpy(msg + 22, nc, 16);
    memcpy(msg + 38, &rank, 4);
    sdsm_hmac_sha256(key, SDSM_KEY_BYTES, msg, sizeof msg, out);
}

/* Constant time, so a stranger learns nothing from how fast we say no. */
static int equal32(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < 32; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

void sdsm_auth_hello_a(uint8_t out[SDSM_AUTH_HELLO_A_LEN], const uint8_t nonce_a[16])
{
    memcpy(out, MAGIC_A, 8);
    memcpy(out + 8, nonce_a, 16);
}

int sdsm_auth_check_hello_c(const uint8_t key[SDSM_KEY_BYTES], const uint8_t nonce_a[16],
                            const uint8_t in[SDSM_AUTH_HELLO_C_LEN], uint32_t *rank, uint8_t nonce_c[16])
{
    static const uint8_t zero[4];
    uint8_t want[32];
    uint32_t r;
    /* The word after the rank is outside the proof: only zero keeps the hello unforgeable bit for bit. */
    if (memcmp(in, MAGIC_C, 8) != 0 || memcmp(in + 12, zero, 4) != 0)
        return SDSM_EAUTH;
    memcpy(&r, in + 8, 4);
    memcpy(nonce_c, in + 16, 16);
    proof(key, "sdsm-c", nonce_a, nonce_c, r, want);
    if (!equal32(want, in + 32))
        return SDSM_EAUTH;
    *rank = r;
    return 0;
}

int sdsm_auth_hello_c_plausible(const uint8_t *in, size_t len)
{
    return memcmp(in, MAGIC_C, len < 8 ? len : 8) == 0;
}

void sdsm_auth_ok(uint8_t out[SDSM_AUTH_OK_LEN], const uint8_t key[SDSM_KEY_BYTES], const uint8_t nonce_a[16],
                  const uint8_t nonce_c[16], uint32_t rank)
{
    memcpy(out, MAGIC_OK, 8);
    proof(key, "sdsm-s", nonce_a, nonce_c, rank, out + 8);
}

int sdsm_auth_connector(int fd, const uint8_t key[SDSM_KEY_BYTES], uint32_t rank, int timeout_ms)
{
    int64_t deadline = sdsm_io_now_ms() + timeout_ms;
    uint8_t a[SDSM_AUTH_HELLO_A_LEN], c[SDSM_AUTH_HELLO_C_LEN] = {0}, ok[SDSM_AUTH_OK_LEN], want[32];
    memcpy(c, MAGIC_C, 8);
    int e = sdsm_io_write_full(fd, c, 8, deadline); /* at once: see auth.h */
    if (e)
        return e;
    if ((e = sdsm_io_read_full(fd, a, sizeof a, deadline)))
        return e;
    if (memcmp(a, MAGIC_A, 8) != 0)
        return fail_with(SDSM_EAUTH, EACCES);
    memcpy(c + 8, &rank, 4);
    sdsm_auth_nonce(c + 16);
    proof(key, "sdsm-c", a + 8, c + 16, rank, c + 32);
    if ((e = sdsm_io_write_full(fd, c + 8, sizeof c - 8, deadline)))
        return e;
    if ((e = sdsm_io_read_full(fd, ok, sizeof ok, deadline)))
        return e;
    proof(key, "sdsm-s", a + 8, c + 16, rank, want);
    if (memcmp(ok, MAGIC_OK, 8) != 0 || !equal32(ok + 8, want))
        return fail_with(SDSM_EAUTH, EACCES);
    return 0;
}

int sdsm_auth_acceptor(int fd, const uint8_t key[SDSM_KEY_BYTES], uint32_t *rank, int timeout_ms)
{
    int64_t deadline = sdsm_io_now_ms() + timeout_ms;
    uint8_t na[16], nc[16], a[SDSM_AUTH_HELLO_A_LEN], c[SDSM_AUTH_HELLO_C_LEN], ok[SDSM_AUTH_OK_LEN];
    uint32_t r;
    sdsm_auth_nonce(na);
    sdsm_auth_hello_a(a, na);
    int e = sdsm_io_write_full(fd, a, sizeof a, deadline);
    if (e)
        return e;
    if ((e = sdsm_io_read_full(fd, c, sizeof c, deadline)))
        return e;
    if ((e = sdsm_auth_check_hello_c(key, na, c, &r, nc)))
        return fail_with(e, EACCES);
    sdsm_auth_ok(ok, key, na, nc, r);
    if ((e = sdsm_io_write_full(fd, ok, sizeof ok, deadline)))
        return e;
    *rank = r;
    return 0;
}
