/*
 * share.c - rank 0's heap file handed to the other ranks of a job that runs
 * on one host (SDSM_HOST_SHARE; mem/page.h, sdsm_region_host_fd).
 *
 * A descriptor crosses processes only over a Unix socket (SCM_RIGHTS).
 * Rank 0 listens on an abstract one: it needs no file to clean up after a
 * crash, and its namespace is the network namespace, so ranks that do not
 * share rank 0's network (the emulated cluster's hosts) never find it.
 * Anyone in the namespace may connect, or bind the name first, so the name
 * is derived from the job key and every link runs the job-key handshake
 * (net/auth.h) before the descriptor moves: a stranger neither gets our
 * memory nor gives us its own.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "core/config.h"
#include "core/log.h"
#include "core/status.h"
#include "net/auth.h"
#include "net/sha256.h"

/* An abstract address: a NUL, then a name no one without the key can guess. */
static socklen_t share_addr(struct sockaddr_un *a)
{
    static const char what[] = "sdsm host share";
    uint8_t h[32];
    sdsm_hmac_sha256(sdsm_boot_key(), SDSM_KEY_BYTES, what, sizeof what - 1, h);
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "sdsm-");
    for (int i = 0; i < 16; i++)
        n += snprintf(a->sun_path + 1 + n, sizeof a->sun_path - 1 - (size_t)n, "%02x", h[i]);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int send_fd(int s, int fd)
{
    char one = 'h';
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } c;
    memset(&c, 0, sizeof c);
    struct iovec iov = {.iov_base = &one, .iov_len = 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    return sendmsg(s, &m, MSG_NOSIGNAL) == 1 ? 0 : SDSM_ESYS;
}

/* The one descriptor the byte carries, or -1. */
static int recv_fd(int s, int64_t deadline)
{
    struct pollfd p = {.fd = s, .events = POLLIN};
    int64_t left = deadline - sdsm_io_now_ms();
    if (left <= 0 || poll(&p, 1, (int)left) != 1)
        return -1;
    char one;
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } c;
    struct iovec iov = {.iov_base = &one, .iov_len = 1};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
    if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != 1 || (m.msg_flags & MSG_CTRUNC))
        return -1;
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    if (!h || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
        h->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(h), sizeof fd);
    return fd;
}

static int serve(const sdsm_boot_t *b, int fd, int64_t deadline)
{
    struct sockaddr_un a;
    socklen_t len = share_addr(&a);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, b->nprocs)) {
        sdsm_error_log("cannot listen for the ranks of this host (SDSM_HOST_SHARE): %m");
        if (l >= 0)
            close(l);
        return SDSM_ESYS;
    }
    uint8_t seen[b->nprocs];
    memset(seen, 0, sizeof seen);
    int left = b->nprocs - 1, rc = 0;
    while (left > 0 && !rc) {
        struct pollfd p = {.fd = l, .events = POLLIN};
        int64_t wait = deadline - sdsm_io_now_ms();
        if (wait <= 0 || poll(&p, 1, (int)wait) != 1) {
            rc = SDSM_ETIMEDOUT;
            break;
        }
        int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        uint32_t r;
        if (s < 0)
            continue;
        /* A failed handshake is a stranger's: not counted, the wait goes on. */
        if (!sdsm_auth_acceptor(s, sdsm_boot_key(), &r, (int)(deadline - sdsm_io_now_ms())) && r > 0 &&
            r < (uint32_t)b->nprocs && !seen[r]) {
            if ((rc = send_fd(s, fd)))
                sdsm_error_log("cannot hand the shared heap to rank %u: %m", r);
            seen[r] = 1;
            left--;
        }
        close(s);
    }
    close(l);
    if (rc == SDSM_ETIMEDOUT) {
        char who[128] = "";
        for (int r = 1, n = 0; r < b->nprocs; r++)
            if (!seen[r])
                n += snprintf(who + n, sizeof who - (size_t)n, n ? ", %d" : "%d", r);
        sdsm_error_log("rank(s) %s of this host did not come for the shared heap within SDSM_TIMEOUT=%lds "
                       "(SDSM_HOST_SHARE=0 runs without it)",
                       who, sdsm_cfg.timeout);
    }
    return rc;
}

static int fetch(const sdsm_boot_t *b, int *fd, int64_t deadline)
{
    struct sockaddr_un a;
    socklen_t len = share_addr(&a);
    const char *why = "no answer";
    int e = 0;
    while (sdsm_io_now_ms() < deadline) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            break;
        if (connect(s, (struct sockaddr *)&a, len) == 0) {
            int rc = sdsm_auth_connector(s, sdsm_boot_key(), (uint32_t)b->rank,
                                         (int)(deadline - sdsm_io_now_ms()));
            *fd = rc ? -1 : recv_fd(s, deadline);
            close(s);
            if (*fd >= 0)
                return 0;
            why = rc ? "the handshake failed" : "no descriptor came";
            break;
        }
        e = errno;
        close(s);
        /* Rank 0 listens once its own heap exists: a few milliseconds. */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (e)
        why = strerror(e);
    sdsm_error_log("cannot get rank 0's shared heap (SDSM_HOST_SHARE: all ranks run on this host): %s; "
                   "SDSM_HOST_SHARE=0 runs without it",
                   why);
    return SDSM_ESYS;
}

int sdsm_boot_share_fd(const sdsm_boot_t *b, int *fd)
{
    int64_t deadline = sdsm_io_now_ms() + sdsm_cfg.timeout * 1000;
    if (b->nprocs < 2) /* a job of one: nobody to hand it to */
        return 0;
    return b->rank == 0 ? serve(b, *fd, deadline) : fetch(b, fd, deadline);
}
