/*
 * stranger.c - connects to an sdsmrun rendezvous the way no rank would and
 * checks that the launcher shows it the door.  Each MODE is one connection,
 * run in order; the exit status is 0 only if every one was handled right.
 *
 *   stranger [--to IP:PORT] MODE...        (default address: $SDSM_RENDEZVOUS)
 *
 *   wrongkey       handshake with a random key: must be refused
 *   garbage        read the hello, answer 64 bytes of junk: must be closed
 *   rawgarbage     send junk without reading anything: must be closed
 *   late-register  real key ($SDSM_JOB_KEY), register as rank 0 again: closed
 *   badframe       real key, then a frame of an unknown type: closed
 *   silent-check   say nothing: the launcher must close us after about 5 s
 *   silent-bg      leave a silent connection open in a background process
 *                  (until the launcher closes it) and return at once
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/status.h"
#include "net/auth.h"
#include "net/wire.h"

static struct sockaddr_in target;

static int parse_target(const char *s)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    char host[64];
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    target.sin_family = AF_INET;
    target.sin_port = htons((uint16_t)atoi(colon + 1));
    return inet_pton(AF_INET, host, &target.sin_addr) == 1 ? 0 : -1;
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&target, sizeof target)) {
        fprintf(stderr, "stranger: connect: %m\n");
        exit(2);
    }
    return fd;
}

/* Milliseconds until the peer closes (EOF or reset), or -1 if it did not in time. */
static int64_t wait_closed(int fd, int timeout_ms)
{
    int64_t t0 = sdsm_io_now_ms(), deadline = t0 + timeout_ms;
    char buf[256];
    for (;;) {
        int64_t left = deadline - sdsm_io_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) == 0)
            return -1;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return sdsm_io_now_ms() - t0;
    }
}

static int real_key(uint8_t key[SDSM_KEY_BYTES])
{
    if (sdsm_auth_key_parse(getenv("SDSM_JOB_KEY"), key) == 0)
        return 0;
    fprintf(stderr, "stranger: SDSM_JOB_KEY is needed for this mode\n");
    return -1;
}

static int wrongkey(void)
{
    uint8_t key[SDSM_KEY_BYTES];
    char hex[2 * SDSM_KEY_BYTES + 1];
    sdsm_auth_key_generate(hex);
    sdsm_auth_key_parse(hex, key);
    int fd = dial();
    int e = sdsm_auth_connector(fd, key, 0, 3000);
    close(fd);
    if (e == 0 || e == SDSM_ETIMEDOUT) {
        fprintf(stderr, "stranger: wrongkey: handshake %s\n", e ? "timed out" : "succeeded!");
        return -1;
    }
    return 0;
}

static int garbage(int read_hello_first)
{
    uint8_t hello[SDSM_AUTH_HELLO_A_LEN], junk[200];
    memset(junk, 'x', sizeof junk);
    int fd = dial();
    if (read_hello_first && sdsm_io_read_full(fd, hello, sizeof hello, sdsm_io_now_ms() + 3000))
        return close(fd), -1;
    sdsm_io_write_full(fd, junk, read_hello_first ? SDSM_AUTH_HELLO_C_LEN : sizeof junk,
                       sdsm_io_now_ms() + 3000);
    int64_t ms = wait_closed(fd, 3000);
    close(fd);
    return ms < 0 ? -1 : 0;
}

/* Authenticate with the job's own key as rank 0, then send one frame. */
static int keyed_frame(uint16_t type, uint32_t len, const void *payload, size_t plen)
{
    uint8_t key[SDSM_KEY_BYTES];
    if (real_key(key))
        return -1;
    int fd = dial();
    int e = sdsm_auth_connector(fd, key, 0, 3000);
    if (e) {
        fprintf(stderr, "stranger: handshake with the real key failed: %s\n", strerror(errno));
        return close(fd), -1;
    }
    sdsm_hdr_t h = {.len = len, .type = type};
    int64_t dl = sdsm_io_now_ms() + 3000;
    sdsm_io_write_full(fd, &h, sizeof h, dl);
    if (plen)
        sdsm_io_write_full(fd, payload, plen, dl);
    int64_t ms = wait_closed(fd, 3000);
    close(fd);
    return ms < 0 ? -1 : 0;
}

static int silent_check(void)
{
    int fd = dial();
    int64_t ms = wait_closed(fd, 8000);
    close(fd);
    fprintf(stderr, "stranger: silent connection closed after %lld ms\n", (long long)ms);
    return ms >= 4000 && ms <= 7000 ? 0 : -1;
}

/* The holder keeps no stdio open, so nobody waits on it for EOF. */
static int silent_bg(void)
{
    int fd = dial();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        wait_closed(fd, 10000);
        _exit(0);
    }
    close(fd);
    return 0;
}

static int one(const char *mode)
{
    sdsm_ctrl_register_t reg = {.rank = 0, .pid = (uint32_t)getpid()};
    if (!strcmp(mode, "wrongkey"))
        return wrongkey();
    if (!strcmp(mode, "garbage"))
        return garbage(1);
    if (!strcmp(mode, "rawgarbage"))
        return garbage(0);
    if (!strcmp(mode, "late-register"))
        return keyed_frame(SDSM_CTRL_REGISTER, sizeof reg, &reg, sizeof reg);
    if (!strcmp(mode, "badframe"))
        return keyed_frame(99, 1000000, NULL, 0);
    if (!strcmp(mode, "silent-check"))
        return silent_check();
    if (!strcmp(mode, "silent-bg"))
        return silent_bg();
    fprintf(stderr, "stranger: unknown mode '%s'\n", mode);
    return -1;
}

int main(int argc, char **argv)
{
    int i = 1;
    const char *to = getenv("SDSM_RENDEZVOUS");
    if (argc > 2 && !strcmp(argv[1], "--to"))
        to = argv[2], i = 3;
    if (parse_target(to)) {
        fprintf(stderr, "stranger: no usable address (--to IP:PORT or SDSM_RENDEZVOUS)\n");
        return 2;
    }
    for (; i < argc; i++) {
        if (one(argv[i])) {
            fprintf(stderr, "stranger: mode %s: the launcher did not refuse us\n", argv[i]);
            return 1;
        }
    }
    return 0;
}
