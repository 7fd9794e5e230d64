/*
 * share.c - a memory file handed from one rank to the others of its host:
 * rank 0's heap in a job that runs on one host (SDSM_HOST_SHARE; mem/page.h,
 * sdsm_region_host_fd), and the host's barrier block in a job that does not
 * (SDSM_BARRIER_SHM; sync/hoststage.c), which the host's lowest rank makes.
 *
 * A descriptor crosses processes only over a Unix socket (SCM_RIGHTS).
 * The giver listens on an abstract one: it needs no file to clean up after a
 * crash, and its namespace is the network namespace, so ranks that do not
 * share its network (the emulated cluster's hosts) never find it.
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
#include <sys/mman.h>
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

/* What is handed over, by whom, and what to say when it fails. */
typedef struct share {
    const char *tag;   /* named in the socket's address */
    int giver;         /* the rank that makes the file and hands it over */
    const char *thing; /* "the shared heap" */
    const char *knob;  /* the setting that runs without it */
} share_t;

/* An abstract address: a NUL, then a name no one without the key can guess. */
static socklen_t share_addr(const share_t *w, struct sockaddr_un *a)
{
    char what[64];
    int wl = snprintf(what, sizeof what, "sdsm %s %d", w->tag, w->giver);
    uint8_t h[32];
    sdsm_hmac_sha256(sdsm_boot_key(), SDSM_KEY_BYTES, what, (size_t)wl, h);
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

/* The ranks of this host but the giver: the ones it waits for. */
static int takes(const sdsm_boot_t *b, const share_t *w, int r)
{
    return r != w->giver && (!b->same_host || b->same_host[r]);
}

static int serve(const sdsm_boot_t *b, const share_t *w, int fd, int64_t deadline)
{
    struct sockaddr_un a;
    socklen_t len = share_addr(w, &a);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, len) || listen(l, b->nprocs)) {
        sdsm_error_log("cannot listen for the ranks of this host (%s): %m", w->knob);
        if (l >= 0)
            close(l);
        return SDSM_ESYS;
    }
    uint8_t seen[b->nprocs];
    memset(seen, 0, sizeof seen);
    int left = 0, rc = 0;
    for (int r = 0; r < b->nprocs; r++)
        left += takes(b, w, r);
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
        if (!sdsm_auth_acceptor(s, sdsm_boot_key(), &r, (int)(deadline - sdsm_io_now_ms())) &&
            r < (uint32_t)b->nprocs && takes(b, w, (int)r) && !seen[r]) {
            if ((rc = send_fd(s, fd)))
                sdsm_error_log("cannot hand %s to rank %u: %m", w->thing, r);
            seen[r] = 1;
            left--;
        }
        close(s);
    }
    close(l);
    if (rc == SDSM_ETIMEDOUT) {
        char who[128] = "";
        for (int r = 0, n = 0; r < b->nprocs && n < (int)sizeof who - 8; r++)
            if (takes(b, w, r) && !seen[r])
                n += snprintf(who + n, sizeof who - (size_t)n, n ? ", %d" : "%d", r);
        sdsm_error_log("rank(s) %s of this host did not come for %s within SDSM_TIMEOUT=%lds "
                       "(%s=0 runs without it)",
                       who, w->thing, sdsm_cfg.timeout, w->knob);
    }
    return rc;
}

static int fetch(const sdsm_boot_t *b, const share_t *w, int *fd, int64_t deadline)
{
    struct sockaddr_un a;
    socklen_t len = share_addr(w, &a);
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
        /* The giver listens once its file exists: a few milliseconds. */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (e)
        why = strerror(e);
    sdsm_error_log("cannot get %s from rank %d: %s; %s=0 runs without it", w->thing, w->giver, why, w->knob);
    return SDSM_ESYS;
}

int sdsm_boot_share_fd(const sdsm_boot_t *b, int *fd)
{
    static const share_t w = {"host share", 0, "the shared heap", "SDSM_HOST_SHARE"};
    int64_t deadline = sdsm_io_now_ms() + sdsm_cfg.timeout * 1000;
    if (b->nprocs < 2) /* a job of one: nobody to hand it to */
        return 0;
    return b->rank == 0 ? serve(b, &w, *fd, deadline) : fetch(b, &w, fd, deadline);
}

int sdsm_boot_stage_fd(const sdsm_boot_t *b, size_t len, int *fd)
{
    *fd = -1;
    if (b->nprocs < 2 || b->local_nprocs < 2)
        return 0;
    share_t w = {"host stage", b->host_of[b->rank], "the host's barrier block", "SDSM_BARRIER_SHM"};
    int64_t deadline = sdsm_io_now_ms() + sdsm_cfg.timeout * 1000;
    if (b->rank != w.giver)
        return fetch(b, &w, fd, deadline);
    if ((*fd = memfd_create("sdsm-host-stage", MFD_CLOEXEC)) < 0 || ftruncate(*fd, (off_t)len)) {
        sdsm_error_log("cannot make the host's barrier block of %zu bytes: %m (SDSM_BARRIER_SHM=0 "
                       "runs without it)",
                       len);
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return SDSM_ESYS;
    }
    int rc = serve(b, &w, *fd, deadline);
    if (rc) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}
