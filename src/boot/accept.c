/*
 * accept.c - accepting the higher ranks during set-up, all handshakes at once.
 *
 * Anyone who can reach a rank's port can connect to it while the job sets
 * up.  Every accepted connection gets its handshake run concurrently (one
 * poll over all of them) with a short deadline of its own, so a stranger
 * that connects and says nothing, or dribbles bytes, holds one slot until
 * that deadline and delays no one.  (Handshakes one after the other gave each
 * stranger its full wait in turn: a handful of idle connections used up the
 * whole set-up time.)  A hello that does not start with the connector's magic
 * is dropped at its first wrong byte.
 *
 * Strangers are logged with a rate limit (sdsm_net_stranger).  A connection
 * that proves the key but claims a rank that should not connect here is a
 * broken peer, not a stranger: it gets a line of its own.
 *
 * Invariant: a slot's fd is open exactly while the slot is in use; every
 * exit path closes what is still pending.
 */
#include "accept.h"
#include "boot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "net/net.h"
#include "net/tcpopt.h"
#include "sdsm.h"

#define HANDSHAKE_MS   2000 /* a peer of the job answers within microseconds */
#define PENDING_MAX    256  /* handshakes in flight; beyond, the oldest stranger goes */
#define EVICT_AFTER_MS 200  /* ...but only one that has had this long to answer */
#define RETRY_MS       50   /* out of descriptors: accept again after this */

typedef struct pending {
    int fd;
    int64_t deadline;
    struct sockaddr_in from;
    uint8_t nonce_a[16];
    size_t have;
    uint8_t in[SDSM_AUTH_HELLO_C_LEN];
} pending_t;

typedef struct acceptor {
    const uint8_t *key;
    int rank, nprocs, missing;
    int *peer_fds;
    pending_t *p;
    int np;
    int64_t accept_retry; /* 0 unless accept() ran out of descriptors */
} acceptor_t;

static void drop(acceptor_t *a, int i, const char *why)
{
    close(a->p[i].fd);
    if (why)
        sdsm_net_stranger(&a->p[i].from, why);
    a->p[i] = a->p[--a->np];
}

/* The oldest handshake, if it has had time enough to be a stranger's
 * (its index; -1: none). */
static int oldest_stale(const acceptor_t *a, int64_t now)
{
    int old = -1;
    for (int i = 0; i < a->np; i++)
        if (old < 0 || a->p[i].deadline < a->p[old].deadline)
            old = i;
    if (old >= 0 && now - (a->p[old].deadline - HANDSHAKE_MS) < EVICT_AFTER_MS)
        return -1;
    return old;
}

/* Accept one connection and send our hello: 1, or 0 when nothing (more)
 * is to be accepted now (no failure: the next round tries again). */
static int accept_one(acceptor_t *a, int lfd, int64_t now)
{
    if (a->np == PENDING_MAX) {
        int old = oldest_stale(a, now);
        if (old < 0)
            return 0;
        drop(a, old, "too many connections waiting to authenticate");
    }
    pending_t *p = &a->p[a->np];
    socklen_t l = sizeof p->from;
    int fd = accept4(lfd, (struct sockaddr *)&p->from, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            int old = oldest_stale(a, now);
            if (old >= 0)
                drop(a, old, "too many connections waiting to authenticate");
            else
                a->accept_retry = now + RETRY_MS;
        }
        return 0; /* EAGAIN, or a connection that died in the backlog */
    }
    sdsm_tcp_tune(fd, sdsm_cfg.rto_min_ms);
    p->fd = fd;
    p->deadline = now + HANDSHAKE_MS;
    p->have = 0;
    a->np++;
    uint8_t hello[SDSM_AUTH_HELLO_A_LEN];
    sdsm_auth_nonce(p->nonce_a);
    sdsm_auth_hello_a(hello, p->nonce_a);
    /* 24 bytes into a fresh socket's empty buffer: all or the peer is gone. */
    if (send(fd, hello, sizeof hello, MSG_NOSIGNAL) != (ssize_t)sizeof hello)
        drop(a, a->np - 1, "connection failed before authenticating");
    return 1;
}

/* The whole hello is in: check it, then the rank it proved. */
static void finish(acceptor_t *a, int i)
{
    pending_t *p = &a->p[i];
    uint8_t nonce_c[16], ok[SDSM_AUTH_OK_LEN];
    uint32_t r;
    if (sdsm_auth_check_hello_c(a->key, p->nonce_a, p->in, &r, nonce_c)) {
        drop(a, i, "authentication failed");
        return;
    }
    if (r <= (uint32_t)a->rank || r >= (uint32_t)a->nprocs || a->peer_fds[r] >= 0) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &p->from.sin_addr, ip, sizeof ip);
        sdsm_warn("refused connection from %s:%d: it proved the job key as rank %u, which %s", ip,
                  ntohs(p->from.sin_port), r,
                  r < (uint32_t)a->nprocs && r > (uint32_t)a->rank ? "is already connected"
                                                                   : "should not connect here");
        drop(a, i, NULL);
        return;
    }
    sdsm_auth_ok(ok, a->key, p->nonce_a, nonce_c, r);
    if (send(p->fd, ok, sizeof ok, MSG_NOSIGNAL) != (ssize_t)sizeof ok) {
        sdsm_warn("rank %u closed its connection during the handshake: %m", r);
        drop(a, i, NULL);
        return;
    }
    a->peer_fds[r] = p->fd;
    a->missing--;
    a->p[i] = a->p[--a->np];
}

/* Bytes arrived on handshake i (or it closed). */
static void readable(acceptor_t *a, int i)
{
    pending_t *p = &a->p[i];
    ssize_t n = recv(p->fd, p->in + p->have, sizeof p->in - p->have, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        drop(a, i, "closed before authenticating");
        return;
    }
    if (n < 0)
        return;
    p->have += (size_t)n;
    if (!sdsm_auth_hello_c_plausible(p->in, p->have))
        drop(a, i, "not an sdsm handshake");
    else if (p->have == sizeof p->in)
        finish(a, i);
}

static int64_t next_wake(const acceptor_t *a, int64_t deadline)
{
    int64_t next = deadline;
    for (int i = 0; i < a->np; i++)
        if (a->p[i].deadline < next)
            next = a->p[i].deadline;
    if (a->accept_retry && a->accept_retry < next)
        next = a->accept_retry;
    return next;
}

/* One round: wait for any socket, then serve what is ready.  0, or SDSM_ETIMEDOUT. */
static int round_once(acceptor_t *a, int lfd, int64_t deadline, struct pollfd *pf)
{
    int64_t now = sdsm_io_now_ms();
    if (now >= deadline)
        return SDSM_ETIMEDOUT;
    if (a->accept_retry && now >= a->accept_retry)
        a->accept_retry = 0;
    pf[0] = (struct pollfd){.fd = a->accept_retry ? -1 : lfd, .events = POLLIN};
    int np = a->np;
    for (int i = 0; i < np; i++)
        pf[1 + i] = (struct pollfd){.fd = a->p[i].fd, .events = POLLIN};
    int64_t wait = next_wake(a, deadline) - now;
    int n = poll(pf, (nfds_t)(1 + np), wait > 0 ? (int)wait : 0);
    if (n < 0 && errno != EINTR)
        sdsm_warn("poll while accepting peers: %m");
    now = sdsm_io_now_ms();
    /* Backwards, so removing slot i (swapped with the last) skips nothing unseen. */
    for (int i = np - 1; i >= 0; i--) {
        if (n > 0 && pf[1 + i].revents)
            readable(a, i);
        else if (now >= a->p[i].deadline)
            drop(a, i, "no handshake within 2 s");
    }
    if (n > 0 && pf[0].revents)
        for (int k = 0; k < 64 && accept_one(a, lfd, now); k++) /* 64: others get a turn */
            ;
    return 0;
}

int sdsm_boot_accept(int lfd, const uint8_t key[SDSM_KEY_BYTES], int rank, int nprocs, int *peer_fds,
                     int64_t deadline)
{
    acceptor_t a = {
        .key = key, .rank = rank, .nprocs = nprocs, .peer_fds = peer_fds, .missing = nprocs - 1 - rank};
    int rc = 0;
    if (a.missing <= 0)
        return 0;
    a.p = malloc(PENDING_MAX * sizeof *a.p);
    struct pollfd *pf = malloc((1 + PENDING_MAX) * sizeof *pf);
    if (!a.p || !pf) {
        sdsm_error_log("out of memory accepting peers");
        rc = SDSM_ENOMEM;
        goto out;
    }
    while (a.missing > 0) {
        if (round_once(&a, lfd, deadline, pf)) {
            char who[128];
            sdsm_boot_missing(peer_fds, rank + 1, nprocs, who, sizeof who);
            sdsm_error_log("timed out waiting for rank(s) %s to connect (SDSM_TIMEOUT)", who);
            rc = SDSM_ETIMEDOUT;
            break;
        }
    }
    /* Every peer is in: whatever is still talking is a stranger. */
    while (a.np > 0)
        drop(&a, a.np - 1, "still unauthenticated when set-up completed");
out:
    free(pf);
    free(a.p);
    sdsm_net_strangers_flush();
    return rc;
}
