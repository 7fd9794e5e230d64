/*
 * send.c - sending, and the messages a rank sends itself.
 *
 * Any thread may send.  A sender writes straight into the socket when
 * nothing is queued for that peer; what the kernel does not take is
 * appended to the peer's output buffer and the service thread finishes it
 * on EPOLLOUT (sdsm_net_flush_out).  So no thread ever blocks on a full
 * socket, and two service threads can never deadlock writing to each other.
 *
 * A message to this rank never touches a socket: it is queued (send_self)
 * and run by whichever thread holds the progress lock next
 * (sdsm_net_drain_queue, recv.c).
 */
#include "net_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"

/* EPOLLEXCLUSIVE items cannot be modified, so a peer's EPOLLOUT interest is
 * an item of its own, on a duplicate of the socket, in the service thread's
 * instance only.  The duplicate is made the first time output to that peer
 * backs up: most peers never need one, and a rank already holds a socket
 * per peer against the open-file limit.  Caller holds the peer's smtx. */
static void set_events(int r, int out)
{
    peer_t *p = &sdsm_net_state.peers[r];
    /* Edge-triggered like the socket's other items: a socket that broke
     * while output waited (a peer gone after its BYE) reports EPOLLERR once,
     * not on every epoll_wait. */
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLET, .data.u64 = (uint64_t)(TAG_OUT + r)};
    if (p->closed || p->fd < 0)
        return;
    if (p->ofd < 0 && (p->ofd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0)) < 0)
        sdsm_fatal("cannot duplicate rank %d's socket to wait for it to take more output: %m", r);
    if (epoll_ctl(sdsm_net_state.ep, out ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, p->ofd, &ev))
        sdsm_fatal("epoll_ctl (rank %d's socket, output): %m", r);
}

static void obuf_append(peer_t *p, const struct iovec *iov, int n, size_t skip)
{
    size_t need = 0;
    for (int i = 0; i < n; i++)
        need += iov[i].iov_len;
    need -= skip;
    if (p->ooff && p->ooff == p->olen)
        p->ooff = p->olen = 0;
    if (p->olen + need > p->ocap) {
        size_t cap = p->ocap ? p->ocap : 65536;
        while (cap < p->olen + need)
            cap *= 2;
        p->obuf = realloc(p->obuf, cap);
        if (!p->obuf)
            sdsm_fatal("out of memory queueing %zu bytes", need);
        p->ocap = cap;
    }
    for (int i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        const uint8_t *b = iov[i].iov_base;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(p->obuf + p->olen, b + skip, l - skip);
        p->olen += l - skip;
        skip = 0;
    }
}

static void send_self(unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen, const void *b,
                      size_t blen)
{
    selfmsg_t *m = malloc(sizeof *m + alen + blen);
    if (!m)
        sdsm_fatal("out of memory");
    m->next = NULL;
    m->h = (sdsm_hdr_t){.len = (uint32_t)(alen + blen),
                        .type = (uint16_t)type,
                        .flags = (uint16_t)flags,
                        .epoch = sdsm_net_epoch(),
                        .seq = seq};
    if (alen)
        memcpy(m->payload, a, alen);
    if (blen)
        memcpy(m->payload + alen, b, blen);
    pthread_mutex_lock(&sdsm_net_state.qmtx);
    if (sdsm_net_state.qtail)
        sdsm_net_state.qtail->next = m;
    else
        sdsm_net_state.qhead = m;
    sdsm_net_state.qtail = m;
    pthread_mutex_unlock(&sdsm_net_state.qmtx);
}

static void wake_service(void)
{
    uint64_t one = 1;
    ssize_t w = write(sdsm_net_state.wake_fd, &one, sizeof one);
    (void)w;
}

void sdsm_net_post_local(unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                         const void *b, size_t blen)
{
    send_self(type, flags, seq, a, alen, b, blen); /* not counted: it never leaves the process */
    if (sdsm_net_holding)
        return;
    if (sdsm_net_state.started && !atomic_load(&sdsm_net_state.stopping) &&
        pthread_mutex_trylock(&sdsm_net_state.progress) == 0) {
        sdsm_net_holding = 1;
        sdsm_net_release_progress();
        return;
    }
    /* Whoever holds the lock may be past its last look at the queue. */
    wake_service();
}

void sdsm_net_send(int dst, unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                   const void *b, size_t blen)
{
    SDSM_ASSERT(dst >= 0 && dst < sdsm_net_state.nprocs && alen + blen <= SDSM_MAX_PAYLOAD);
    if (dst == sdsm_net_state.rank) { /* not counted: it never leaves the process */
        send_self(type, flags, seq, a, alen, b, blen);
        if (!sdsm_net_holding)
            wake_service();
        return;
    }
    sdsm_stat_msg(type, sizeof(sdsm_hdr_t) + alen + blen);
    peer_t *p = &sdsm_net_state.peers[dst];
    sdsm_hdr_t h = {.len = (uint32_t)(alen + blen),
                    .type = (uint16_t)type,
                    .flags = (uint16_t)flags,
                    .epoch = sdsm_net_epoch(),
                    .seq = seq};
    struct iovec iov[3] = {{&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
    size_t total = sizeof h + alen + blen, done = 0;
    if (!atomic_load_explicit(&p->sent, memory_order_relaxed))
        atomic_store_explicit(&p->sent, 1, memory_order_relaxed);
    sdsm_net_watch(p);
    /* MSG_NOSIGNAL: a peer that closed its end is a lost peer, not a SIGPIPE. */
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
    pthread_mutex_lock(&p->smtx);
    if (p->olen == p->ooff && !p->closed) {
        for (;;) {
            ssize_t w = sendmsg(p->fd, &mh, MSG_NOSIGNAL);
            if (w >= 0) {
                done = (size_t)w;
                break;
            }
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                pthread_mutex_unlock(&p->smtx);
                sdsm_net_peer_lost(dst, strerror(errno));
                return;
            }
            break;
        }
    }
    if (done < total) {
        obuf_append(p, iov, 3, done);
        if (!p->want_out) {
            p->want_out = 1;
            set_events(dst, 1);
        }
    }
    pthread_mutex_unlock(&p->smtx);
}

void sdsm_net_flush_out(int r)
{
    peer_t *p = &sdsm_net_state.peers[r];
    pthread_mutex_lock(&p->smtx);
    while (p->ooff < p->olen) {
        ssize_t w = send(p->fd, p->obuf + p->ooff, p->olen - p->ooff, MSG_NOSIGNAL);
        if (w > 0) {
            p->ooff += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else {
            pthread_mutex_unlock(&p->smtx);
            sdsm_net_peer_lost(r, strerror(errno));
            return;
        }
    }
    if (p->ooff == p->olen) {
        p->ooff = p->olen = 0;
        /* Two threads can each hold an EPOLLOUT event of this peer (the
         * service thread and a polling waiter, from two edges): the first
         * one here found the output done and removed the item. */
        if (p->want_out) {
            p->want_out = 0;
            set_events(r, 0);
        }
    }
    pthread_mutex_unlock(&p->smtx);
}
