/*
 * net.c - TCP transport and the service thread.
 *
 * Sending: any thread may send.  A sender writes straight into the socket
 * when nothing is queued for that peer; what the kernel does not take is
 * appended to the peer's output buffer and the service thread finishes it on
 * EPOLLOUT.  So no thread ever blocks on a full socket, and two service
 * threads can never deadlock writing to each other.
 *
 * Receiving: whichever thread holds the progress lock reads.  Each peer has a buffer holding
 * at least one whole frame; the header is validated against the type table
 * before the payload is looked at, then the handler runs.
 *
 * Invariant: handlers run one at a time, under the progress lock, so the
 * state they own (lock queues, barrier counts, pending operations) needs no
 * other lock.  The service thread takes the progress lock when epoll wakes
 * it; a thread waiting for a reply takes it (if free) while it spins, and
 * one waiting thread at a time then sleeps in epoll_wait itself (lead_wait),
 * so the reply wakes the thread that needs it and nobody else: as in a
 * ping-pong, one wake-up per frame received, not two (service thread, then
 * waiter).
 *
 * Heartbeats: a peer that is stopped (SIGSTOP) or cut off sends nothing and
 * closes nothing, so TCP alone never reports it.  A timer (tick) runs every
 * SDSM_HEARTBEAT under the progress lock, in whichever thread holds it: the
 * service thread and a leading waiter wake for it from epoll (its time-out),
 * and spinning waiters run it from poll_progress, so it keeps running while
 * threads spin or compute.  Each tick sends a 16-byte HEARTBEAT to every peer nothing
 * was sent to since the previous tick (a busy link carries none), and a peer
 * from which no byte at all arrived for SDSM_PEER_TIMEOUT is lost.  Bytes
 * count when read, even if the epoch stall holds their frames back.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/wait.h"
#include "net/auth.h"
#include "net/stranger.h"

_Static_assert(SDSM_MSG_NTYPES <= SDSM_STATS_MAX_TYPES, "stats count every message type");

#define TAG_WAKE   (-1)
#define TAG_LISTEN (-2)
#define TAG_CTRL   (-3)
#define TAG_KICK   (-4)
#define TAG_EP     (-5)  /* the service thread's instance, in the leader's while it steps aside */
#define TAG_OUT    (1 << 24)  /* + rank: that peer's socket can take more (EPOLLOUT) */

typedef struct peer {
    int             fd;
    int             ofd;        /* dup of fd: its EPOLLOUT item (set_events), -1 until needed */
    pthread_mutex_t smtx;       /* guards the output buffer and writes */
    uint8_t        *obuf;
    size_t          olen, ooff, ocap;
    int             want_out;
    uint8_t        *rbuf;       /* service thread only */
    size_t          rlen, roff, rcap;
    int             stalled;    /* next frame is from a later epoch */
    int             bye;        /* peer announced an orderly close */
    int             closed;
    _Atomic int     sent;       /* a frame went out since the last tick */
    int             heard;      /* bytes came in since the last tick (progress lock) */
    int64_t         heard_ms;   /* when bytes last came in, as of a tick (progress lock) */
    pthread_mutex_t pin_mtx;    /* guards pins and the item in the service thread's instance */
    int             pins;       /* requesters that took this socket out of it (sdsm_net_pin) */
    _Atomic int     unpinned;   /* requesters that chose not to, waiting for a reply */
} peer_t;

typedef struct selfmsg {
    struct selfmsg *next;
    sdsm_hdr_t      h;
    uint8_t         payload[];
} selfmsg_t;

typedef struct sdsm_net_state {
    int               rank, nprocs;
    size_t            page_size;
    peer_t           *peers;
    int               ep, wake_fd, listen_fd, ctrl_fd;
    int               lep;         /* the leader's epoll instance (lead_wait) */
    int               kick_fd;     /* wakes the leader out of epoll_wait (lead_wait) */
    _Atomic int       led;         /* a thread is leading (lead_wait) */
    _Atomic int       lead_serves; /* batches the current leader woke for and served */
    _Atomic uint32_t  aside;       /* the service thread stepped aside (service_aside) */
    int               aside_deferred; /* handle_aside let a report go (progress lock) */
    pthread_t         thread;
    pthread_mutex_t   qmtx;
    selfmsg_t        *qhead, *qtail;
    _Atomic uint32_t  epoch;
    _Atomic int       stopping;
    _Atomic uint32_t  byes;        /* peers that said BYE (service thread writes) */
    int               epoch_moved; /* rescan stalled peers (progress lock held) */
    pthread_mutex_t   progress;
    int               started;
    int64_t           hb_ms, timeout_ms; /* SDSM_HEARTBEAT, SDSM_PEER_TIMEOUT (0: off) */
    _Atomic int64_t   next_tick;  /* written under the progress lock, read without */
    _Atomic int       bye_sent;   /* our BYEs are out: peers no longer watch us */
} sdsm_net_state_t;

/* The transport's file state (one transport per process). */
static sdsm_net_state_t sdsm_net_state;

static __thread int in_service;
/* The peers whose sockets this thread pinned (sdsm_net_pin). */
#define PIN_MAX 8
static __thread int pinned[PIN_MAX], npinned;
/* Whether request pins pay (SDSM_REQ_PIN=1, see sdsm_net_pin). */
#define PIN_WOKE  8   /* a frame from a peer this rank waits for, read by the service thread */
#define PIN_ON    8   /* pins from this score on... */
#define PIN_TOP   64
#define PIN_PROBE 16  /* ...except one request in this many, which measures */
static _Atomic int      pin_score;
static _Atomic unsigned pin_probes;
static __thread int     unpinned_to = -1; /* the peer of this thread's unpinned request */
/* This thread holds the progress lock and runs the self-messages queued
 * meanwhile before it lets go (drain_queue), so those need no wake-up. */
static __thread int holding;

uint32_t sdsm_net_epoch(void)
{
    return atomic_load_explicit(&sdsm_net_state.epoch, memory_order_acquire);
}
int sdsm_net_rank(void) { return sdsm_net_state.rank; }
int sdsm_net_nprocs(void) { return sdsm_net_state.nprocs; }
int sdsm_net_in_service(void) { return in_service; }

void sdsm_net_epoch_advance(void)
{
    atomic_fetch_add_explicit(&sdsm_net_state.epoch, 1, memory_order_acq_rel);
    sdsm_net_state.epoch_moved = 1;
}

int sdsm_net_listen_port(void)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    if (sdsm_net_state.listen_fd < 0 ||
        getsockname(sdsm_net_state.listen_fd, (struct sockaddr *)&a, &l))
        return -1;
    return ntohs(a.sin_port);
}

static void peer_lost(int r, const char *why)
{
    if (atomic_load(&sdsm_net_state.stopping) || sdsm_net_state.peers[r].bye)
        return;
    sdsm_fatal_lost(r, why);
}

/*
 * Two epoll instances watch every peer's socket: the leader's (lep, see
 * lead_wait) and the service thread's (ep), added in that order and both
 * EPOLLEXCLUSIVE.  A frame then wakes one thread: the kernel offers the
 * wake-up to the socket's exclusive items in the order they were added, and
 * an item takes it only if a thread sleeps in its instance.  So the frame
 * wakes the leader if one sleeps in epoll_wait, and the service thread
 * otherwise; the service thread never needs to step aside for a leader.
 * The item of the instance nobody sleeps in still goes on that instance's
 * ready list; epoll_wait looks at the socket again before it reports it, so
 * a frame already read is not reported twice.
 *
 * The sockets are edge-triggered: whoever receives an event must handle it.
 * Every reader reads until a short read (the socket is then empty; any later
 * byte is a new edge), and a thread that cannot take the progress lock at
 * once waits for it rather than drop what it received.
 */
#define PEER_EVENTS (EPOLLIN | EPOLLET | EPOLLEXCLUSIVE)

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

/* A peer's socket is done with: out of both instances. */
static void peer_forget(peer_t *p)
{
    pthread_mutex_lock(&p->pin_mtx); /* no pin takes it out or puts it back meanwhile */
    epoll_ctl(sdsm_net_state.lep, EPOLL_CTL_DEL, p->fd, NULL);
    epoll_ctl(sdsm_net_state.ep, EPOLL_CTL_DEL, p->fd, NULL);
    pthread_mutex_lock(&p->smtx);
    if (p->want_out)
        epoll_ctl(sdsm_net_state.ep, EPOLL_CTL_DEL, p->ofd, NULL);
    p->closed = 1;
    pthread_mutex_unlock(&p->smtx);
    pthread_mutex_unlock(&p->pin_mtx);
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

static void send_self(unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                      const void *b, size_t blen)
{
    selfmsg_t *m = malloc(sizeof *m + alen + blen);
    if (!m)
        sdsm_fatal("out of memory");
    m->next = NULL;
    m->h = (sdsm_hdr_t){.len = (uint32_t)(alen + blen), .type = (uint16_t)type,
                        .flags = (uint16_t)flags, .epoch = sdsm_net_epoch(), .seq = seq};
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

static void drain_queue(void);
static void parse(int r);

/* Progress lock held since take_progress: run what handlers queued for
 * ourselves, then let go. */
static void release_progress(void)
{
    drain_queue();
    /* A barrier's release moved the epoch: frames held back for it may go now. */
    while (sdsm_net_state.epoch_moved) {
        sdsm_net_state.epoch_moved = 0;
        for (int r = 0; r < sdsm_net_state.nprocs; r++)
            if (sdsm_net_state.peers[r].stalled)
                parse(r);
        drain_queue();
    }
    holding = 0;
    pthread_mutex_unlock(&sdsm_net_state.progress);
}

void sdsm_net_post_local(unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                         const void *b, size_t blen)
{
    send_self(type, flags, seq, a, alen, b, blen); /* not counted: it never leaves the process */
    if (holding)
        return;
    if (sdsm_net_state.started && !atomic_load(&sdsm_net_state.stopping) &&
        pthread_mutex_trylock(&sdsm_net_state.progress) == 0) {
        holding = 1;
        release_progress();
        return;
    }
    /* Whoever holds the lock may be past its last look at the queue. */
    wake_service();
}

void sdsm_net_send(int dst, unsigned type, unsigned flags, uint32_t seq, const void *a,
                   size_t alen, const void *b, size_t blen)
{
    SDSM_ASSERT(dst >= 0 && dst < sdsm_net_state.nprocs && alen + blen <= SDSM_MAX_PAYLOAD);
    if (dst == sdsm_net_state.rank) { /* not counted: it never leaves the process */
        send_self(type, flags, seq, a, alen, b, blen);
        if (!holding)
            wake_service();
        return;
    }
    sdsm_stat_msg(type, sizeof(sdsm_hdr_t) + alen + blen);
    peer_t *p = &sdsm_net_state.peers[dst];
    sdsm_hdr_t h = {.len = (uint32_t)(alen + blen), .type = (uint16_t)type,
                    .flags = (uint16_t)flags, .epoch = sdsm_net_epoch(), .seq = seq};
    struct iovec iov[3] = {{&h, sizeof h}, {(void *)a, alen}, {(void *)b, blen}};
    size_t total = sizeof h + alen + blen, done = 0;
    if (!atomic_load_explicit(&p->sent, memory_order_relaxed))
        atomic_store_explicit(&p->sent, 1, memory_order_relaxed);
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
                peer_lost(dst, strerror(errno));
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

static void flush_out(int r)
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
            peer_lost(r, strerror(errno));
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

static void dispatch(int src, const sdsm_hdr_t *h, const uint8_t *payload)
{
    if (h->type == SDSM_MSG_BYE) {
        sdsm_net_state.peers[src].bye = 1;
        atomic_fetch_add(&sdsm_net_state.byes, 1);
        sdsm_wake_all(&sdsm_net_state.byes);
        return;
    }
    if (h->type == SDSM_MSG_HEARTBEAT) /* its arrival was all it had to say */
        return;
    sdsm_stat_recv(h->type, sizeof *h + h->len);
    sdsm_msg_handler_t fn = sdsm_msg_table[h->type].handler;
    int rc = fn ? fn(src, h, payload) : -ENOSYS;
    if (rc < 0) {
        sdsm_stat_add(SDSM_ST_REJECTED_MSGS, 1);
        sdsm_warn("rejected %s message (%u bytes) from rank %d: %s", sdsm_msg_name(h->type),
                  h->len, src, rc == -ENOSYS ? "no handler" : "invalid contents");
    }
}

/* Run every complete frame in r's buffer that is not from a later epoch. */
static void parse(int r)
{
    peer_t *p = &sdsm_net_state.peers[r];
    p->stalled = 0;
    while (p->rlen - p->roff >= sizeof(sdsm_hdr_t)) {
        sdsm_hdr_t h;
        memcpy(&h, p->rbuf + p->roff, sizeof h);
        int rc = sdsm_msg_check(&h, sdsm_net_state.page_size);
        if (rc == -EMSGSIZE)
            sdsm_fatal("rank %d sent a frame of %u bytes (limit %u): closing the job", r, h.len,
                       SDSM_MAX_PAYLOAD);
        if (p->rlen - p->roff < sizeof h + h.len)
            break;
        if (rc) {
            sdsm_stat_add(SDSM_ST_REJECTED_MSGS, 1);
            sdsm_warn("rejected malformed message from rank %d: type %u, %u bytes", r, h.type, h.len);
        } else if ((int32_t)(h.epoch - sdsm_net_epoch()) > 0) {
            p->stalled = 1;
            break;
        } else {
            dispatch(r, &h, p->rbuf + p->roff + sizeof h);
        }
        p->roff += sizeof h + h.len;
    }
    if (p->roff == p->rlen)
        p->roff = p->rlen = 0;
}

static void read_peer(int r)
{
    peer_t *p = &sdsm_net_state.peers[r];
    /* The service thread woke for a peer that a thread of this rank sent an
     * unpinned request to and waits for: most likely its reply, which a pin
     * would have kept for the waiter (sdsm_net_pin). */
    if (in_service && atomic_load_explicit(&p->unpinned, memory_order_relaxed) > 0) {
        int sc = atomic_load_explicit(&pin_score, memory_order_relaxed);
        atomic_store_explicit(&pin_score, sc + PIN_WOKE < PIN_TOP ? sc + PIN_WOKE : PIN_TOP,
                              memory_order_relaxed);
    }
    for (;;) {
        if (p->roff > 0 && p->rcap - p->rlen < 65536) {
            memmove(p->rbuf, p->rbuf + p->roff, p->rlen - p->roff);
            p->rlen -= p->roff;
            p->roff = 0;
        }
        size_t want = 65536;
        if (p->rlen - p->roff >= sizeof(sdsm_hdr_t)) {
            sdsm_hdr_t h;
            memcpy(&h, p->rbuf + p->roff, sizeof h);
            if (h.len <= SDSM_MAX_PAYLOAD && sizeof h + h.len > p->rlen - p->roff + want)
                want = sizeof h + h.len - (p->rlen - p->roff);
        }
        if (p->rcap - p->rlen < want) {
            size_t cap = p->rcap;
            while (cap - p->rlen < want)
                cap *= 2;
            if (!(p->rbuf = realloc(p->rbuf, cap)))
                sdsm_fatal("out of memory receiving from rank %d", r);
            p->rcap = cap;
        }
        size_t room = p->rcap - p->rlen;
        ssize_t n = read(p->fd, p->rbuf + p->rlen, room);
        if (n > 0) {
            p->heard = 1;
            p->rlen += (size_t)n;
            if (!p->stalled)
                parse(r);
            if ((size_t)n < room) /* drained: a later byte is a new edge (PEER_EVENTS) */
                return;
            continue;
        }
        if (n == 0) {
            peer_lost(r, "connection closed");
            peer_forget(p);
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            peer_lost(r, strerror(errno));
            peer_forget(p);
        }
        return;
    }
}

/* Progress lock held.  Handlers may queue more for ourselves: loop. */
static void drain_queue(void)
{
    for (;;) {
        pthread_mutex_lock(&sdsm_net_state.qmtx);
        selfmsg_t *m = sdsm_net_state.qhead;
        sdsm_net_state.qhead = sdsm_net_state.qtail = NULL;
        pthread_mutex_unlock(&sdsm_net_state.qmtx);
        if (!m)
            return;
        while (m) {
            selfmsg_t *next = m->next;
            dispatch(sdsm_net_state.rank, &m->h, m->payload);
            free(m);
            m = next;
        }
    }
}

static void drain_self(void)
{
    uint64_t v;
    ssize_t rd = read(sdsm_net_state.wake_fd, &v, sizeof v);
    (void)rd;
    drain_queue();
}

/* Set-up (boot) and the service thread both refuse strangers: one record. */
static sdsm_strangers_t strangers;
static pthread_mutex_t  strangers_mtx = PTHREAD_MUTEX_INITIALIZER;

void sdsm_net_stranger(const struct sockaddr_in *from, const char *why)
{
    char ip[INET_ADDRSTRLEN] = "?";
    uint32_t quiet;
    inet_ntop(AF_INET, &from->sin_addr, ip, sizeof ip);
    pthread_mutex_lock(&strangers_mtx);
    int say = sdsm_stranger_note(&strangers, from->sin_addr.s_addr, why, sdsm_io_now_ms(), &quiet);
    pthread_mutex_unlock(&strangers_mtx);
    if (say && quiet)
        sdsm_warn("refused connection from %s:%d (%s), and %u more from %s since the last report",
                  ip, ntohs(from->sin_port), why, quiet, ip);
    else if (say)
        sdsm_warn("refused connection from %s:%d (%s)", ip, ntohs(from->sin_port), why);
}

void sdsm_net_strangers_flush(void)
{
    sdsm_stranger_src_t s;
    for (;;) {
        pthread_mutex_lock(&strangers_mtx);
        int more = sdsm_stranger_take(&strangers, &s);
        pthread_mutex_unlock(&strangers_mtx);
        if (!more)
            break;
        char ip[INET_ADDRSTRLEN] = "other addresses";
        struct in_addr a = {.s_addr = s.ip};
        if (s.ip)
            inet_ntop(AF_INET, &a, ip, sizeof ip);
        sdsm_warn("refused %u more connection(s) from %s (latest: %s)", s.quiet, ip, s.why);
    }
}

static void refuse_stranger(void)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = accept4(sdsm_net_state.listen_fd, (struct sockaddr *)&a, &l, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    close(fd);
    sdsm_net_stranger(&a, "all ranks of the job are already connected");
}

void (*sdsm_net_on_ctrl_query)(void);

/* Frames from the launcher: QUERY gets an answer, anything else is skipped. */
static void ctrl_frames(const uint8_t *p, size_t n)
{
    static uint8_t hdr[sizeof(sdsm_hdr_t)];
    static size_t have;
    static uint32_t skip;
    while (n) {
        if (skip) {
            size_t k = n < skip ? n : skip;
            skip -= (uint32_t)k, p += k, n -= k;
            continue;
        }
        size_t k = sizeof hdr - have < n ? sizeof hdr - have : n;
        memcpy(hdr + have, p, k);
        have += k, p += k, n -= k;
        if (have < sizeof hdr)
            return;
        sdsm_hdr_t h;
        memcpy(&h, hdr, sizeof h);
        have = 0;
        skip = h.len;
        if (h.type == SDSM_CTRL_QUERY && h.len == 0 && sdsm_net_on_ctrl_query)
            sdsm_net_on_ctrl_query();
    }
}

static void ctrl_event(void)
{
    uint8_t buf[256];
    ssize_t n = read(sdsm_net_state.ctrl_fd, buf, sizeof buf);
    if (n > 0)
        ctrl_frames(buf, (size_t)n);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        epoll_ctl(sdsm_net_state.ep, EPOLL_CTL_DEL, sdsm_net_state.ctrl_fd, NULL);
        if (!atomic_load(&sdsm_net_state.stopping))
            sdsm_fatal("lost the connection to sdsmrun: the launcher stopped the job or died");
    }
}

/* A peer said nothing for the peer timeout: the job cannot go on without it. */
static void peer_silent(int r, int64_t ms)
{
    if (atomic_load(&sdsm_net_state.stopping) || sdsm_net_state.peers[r].bye)
        return;
    char why[160];
    snprintf(why, sizeof why,
             "no bytes from it for %.1f s (SDSM_PEER_TIMEOUT=%.1f s); stopped by a signal "
             "such as SIGSTOP, hung, or cut off from the network",
             (double)ms / 1000.0, (double)sdsm_net_state.timeout_ms / 1000.0);
    sdsm_fatal_silent(r, why, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
}

/*
 * The heartbeat timer (see the top of the file).  Progress lock held; cheap
 * when it is not yet time.  Before a silent peer is declared lost its socket
 * is read once more, so a rank that was itself stopped or starved for a
 * while does not blame peers whose bytes are simply waiting unread.
 */
static void tick(void)
{
    if (!sdsm_net_state.hb_ms)
        return;
    int64_t now = sdsm_io_now_ms();
    if (now < atomic_load_explicit(&sdsm_net_state.next_tick, memory_order_relaxed))
        return;
    atomic_store_explicit(&sdsm_net_state.next_tick, now + sdsm_net_state.hb_ms,
                          memory_order_relaxed);
    int quiet = atomic_load(&sdsm_net_state.bye_sent);
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        if (r == sdsm_net_state.rank || p->fd < 0 || p->closed)
            continue;
        if (!quiet && !atomic_exchange_explicit(&p->sent, 0, memory_order_relaxed)) {
            sdsm_net_send(r, SDSM_MSG_HEARTBEAT, 0, 0, NULL, 0, NULL, 0);
            atomic_store_explicit(&p->sent, 0, memory_order_relaxed);
        }
        if (p->bye || !sdsm_net_state.timeout_ms)
            continue;
        if (!p->heard && now - p->heard_ms >= sdsm_net_state.timeout_ms)
            read_peer(r);
        if (p->heard) {
            p->heard = 0;
            p->heard_ms = now;
        } else if (now - p->heard_ms >= sdsm_net_state.timeout_ms && !p->closed) {
            peer_silent(r, now - p->heard_ms);
        }
    }
}

/* Milliseconds until the next tick, for epoll_wait (-1: no timer). */
static int tick_wait_ms(void)
{
    if (!sdsm_net_state.hb_ms)
        return -1;
    int64_t left =
        atomic_load_explicit(&sdsm_net_state.next_tick, memory_order_relaxed) - sdsm_io_now_ms();
    return left < 0 ? 0 : left > sdsm_net_state.hb_ms ? (int)sdsm_net_state.hb_ms : (int)left;
}

/* The kick (sdsm_wait_kick) is in the leader's instance only: a kick left
 * by a leader that ended first only makes the next one look once more. */
static void kick_event(void)
{
    uint64_t v;
    ssize_t rd = read(sdsm_net_state.kick_fd, &v, sizeof v);
    (void)rd;
}

static void kick_leader(void)
{
    sdsm_stat_add(SDSM_ST_LEAD_KICKS, 1);
    uint64_t one = 1;
    ssize_t w = write(sdsm_net_state.kick_fd, &one, sizeof one);
    (void)w;
}

static void handle_aside(int others);

/* Progress lock held. */
static void handle(const struct epoll_event *evs, int n)
{
        int ep_ready = 0, others = 0;
        for (int i = 0; i < n; i++) {
            int tag = (int)(int64_t)evs[i].data.u64;
            others += tag != TAG_EP && tag != TAG_KICK;
            if (tag == TAG_WAKE)
                drain_self();
            else if (tag == TAG_EP)
                ep_ready = 1;
            else if (tag == TAG_KICK)
                kick_event();
            else if (tag == TAG_LISTEN)
                refuse_stranger();
            else if (tag == TAG_CTRL)
                ctrl_event();
            else if (tag >= TAG_OUT)
                flush_out(tag - TAG_OUT);
            else
                read_peer(tag);
        }
        if (ep_ready)
            handle_aside(others);
}

/*
 * The service thread's instance reported ready in the leader's (it is
 * nested there while the service thread steps aside, see service_aside).
 * Its peer items are on its ready list whenever a frame came, so beside a
 * frame just read it mostly has nothing left: that report is let go once
 * (the nested item is level-triggered, so a real one is reported again at
 * the leader's next epoll_wait, which re-checks it first).  Progress lock
 * held.
 */
static void handle_aside(int others)
{
    if (others && !sdsm_net_state.aside_deferred) {
        sdsm_net_state.aside_deferred = 1;
        return;
    }
    sdsm_net_state.aside_deferred = 0;
    struct epoll_event evs[64];
    int n = epoll_wait(sdsm_net_state.ep, evs, 64, 0);
    if (n > 0)
        handle(evs, n);
}

/* Progress lock just taken: handle what epoll_wait gave (n may be 0 or
 * less: nothing), run the timer, let go. */
static void serve(const struct epoll_event *evs, int n)
{
    holding = 1;
    if (n > 0)
        handle(evs, n);
    tick();
    release_progress();
}

static int poll_progress(void)
{
    if (!sdsm_net_state.started || atomic_load(&sdsm_net_state.stopping) ||
        pthread_mutex_trylock(&sdsm_net_state.progress))
        return 0;
    /* A socket this thread pinned is in the leader's instance only. */
    int ep = npinned && !atomic_load(&sdsm_net_state.led) ? sdsm_net_state.lep : sdsm_net_state.ep;
    struct epoll_event evs[64];
    int n = epoll_wait(ep, evs, 64, 0);
    serve(evs, n);
    return n;
}

static int add_fd(int ep, int fd, int64_t tag, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)tag};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* This thread's unpinned request (if any) no longer waits for its reply. */
static void unpinned_done(void)
{
    if (unpinned_to >= 0) {
        atomic_fetch_sub(&sdsm_net_state.peers[unpinned_to].unpinned, 1);
        unpinned_to = -1;
    }
}

/*
 * SDSM_REQ_PIN=1: does a pin of a request to dst pay?  Where the sender has
 * a CPU of its own and polls, it mostly sees its reply while it polls, and
 * the two epoll_ctl calls only cost (fault on 2 CPUs at the default poll:
 * 37 -> 56 us); where it shares its CPU or sleeps at once, the peer it wakes
 * takes that CPU (1 CPU: 36 -> 32 us, switches 4.2 -> 2.4 per fault, as the
 * ping-pong's); and where the rank's last wait slept at once (its polls
 * were not paying, or were held off because one lost its CPU, see wait.h),
 * this one is likely to as well.
 *
 * And only where replies do find their waiters awake: where the peer that
 * the request wakes runs on another CPU (another host, or a CPU of its own
 * here), the sender is asleep long before the reply comes, and the pin is
 * two epoll_ctl calls for nothing (ranks bound to a CPU each, each CPU
 * shared with another job's busy process: fault 1.30 -> 1.40 x the
 * ping-pong).  So while a thread waits for the reply to a request it did
 * not pin, a frame from that peer that the service thread reads
 * (read_peer) scores PIN_WOKE, every unpinned request takes 1 off, and
 * requests are pinned while the score is PIN_ON or more - while more than
 * 1 reply in 8 woke the service thread - except one in PIN_PROBE, which
 * goes unpinned to find out whether pins still pay.
 */
static int pin_pays(int dst)
{
    if (!sdsm_wait_yields && atomic_load_explicit(&sdsm_wait_spin_us, memory_order_relaxed) > 0 &&
        !atomic_load_explicit(&sdsm_spin_sleepy, memory_order_relaxed))
        return 0;
    int sc = atomic_load_explicit(&pin_score, memory_order_relaxed);
    if (sc >= PIN_ON &&
        atomic_fetch_add_explicit(&pin_probes, 1, memory_order_relaxed) % PIN_PROBE != 0)
        return 1;
    if (sc > 0)
        atomic_store_explicit(&pin_score, sc - 1, memory_order_relaxed);
    unpinned_done();
    unpinned_to = dst;
    atomic_fetch_add(&sdsm_net_state.peers[dst].unpinned, 1);
    return 0;
}

/*
 * Request pins.  A thread that sends a request and then waits for its reply
 * (a fault's FETCH, a lock request, a barrier arrival) cannot be asleep in
 * the leader's instance while it sends: on a busy CPU the request wakes the
 * peer, which preempts the sender before it is back in epoll_wait, and the
 * reply then finds no sleeper in the leader's instance and wakes the
 * service thread - a wake-up and two switches more than a ping-pong, at
 * about 40 % of the faults on one CPU.  So the sender takes the peer's
 * socket out of the service thread's instance before it sends
 * (sdsm_net_pin): a frame from that peer then lands on the leader's ready
 * list only and wakes nobody until a leader looks, and the sender, once it
 * runs again, leads and finds its reply there without sleeping.  The pin
 * lasts until the sender's wait ends or it cannot lead (sdsm_wait_unpin,
 * called from wait.h before a futex sleep and at every return, and at the
 * end of the operation), so a socket is out of the service thread's
 * instance only while a thread of this rank is about to lead or leads: a
 * request from that peer meanwhile is served by the leader.  A poll of a
 * thread that pinned looks in the leader's instance when nobody leads
 * (poll_progress).  SDSM_REQ_PIN: 1 (default) where it pays (pin_pays), 2
 * always, 0 never.
 */
void sdsm_net_pin(int dst)
{
    if (!sdsm_cfg.req_pin || !sdsm_net_state.started || in_service || holding ||
        dst == sdsm_net_state.rank || npinned == PIN_MAX || atomic_load(&sdsm_net_state.stopping))
        return;
    if (sdsm_cfg.req_pin == 1 && !pin_pays(dst))
        return;
    peer_t *p = &sdsm_net_state.peers[dst];
    if (p->fd < 0)
        return;
    pthread_mutex_lock(&p->pin_mtx);
    /* closed changes only under pin_mtx too (peer_forget) */
    if (p->pins++ == 0 && !p->closed && epoll_ctl(sdsm_net_state.ep, EPOLL_CTL_DEL, p->fd, NULL) &&
        errno != ENOENT)
        sdsm_fatal("epoll_ctl (rank %d's socket out of the service thread's instance): %m", dst);
    pthread_mutex_unlock(&p->pin_mtx);
    pinned[npinned++] = dst;
    sdsm_stat_add(SDSM_ST_REQ_PINS, 1);
}

void sdsm_net_unpin(void)
{
    unpinned_done();
    while (npinned > 0) {
        int r = pinned[--npinned];
        peer_t *p = &sdsm_net_state.peers[r];
        pthread_mutex_lock(&p->pin_mtx);
        /* Appended behind the leader's item, as at the start (see
         * PEER_EVENTS); a frame that came meanwhile and is still unread
         * makes the kernel report it here at once. */
        if (--p->pins == 0 && !p->closed && add_fd(sdsm_net_state.ep, p->fd, r, PEER_EVENTS) &&
            errno != EEXIST)
            sdsm_fatal("epoll_ctl (rank %d's socket back in the service thread's instance): %m", r);
        pthread_mutex_unlock(&p->pin_mtx);
    }
}

/*
 * Wait for *w to change as the thread that receives from the network (see
 * wait.h), asleep in the leader's epoll instance.  A frame that arrives
 * while this thread sleeps there wakes it and nobody else (see PEER_EVENTS),
 * so the reply it waits for wakes the thread that needs it.  One that
 * arrives while it is awake (it was just woken, or has not gone to sleep
 * yet) wakes the service thread, and if that frame was the reply, the
 * handler's sdsm_wake_all kicks us.  Every event the kernel gave this
 * thread is handled before it leaves: a full epoll_wait is followed by
 * another, since what it left on the ready list woke nobody else.  Not
 * while holding the progress lock (a handler that waits): this thread must
 * take it to handle what it receives.
 */
static int lead_wait(_Atomic uint32_t *w, uint32_t old)
{
    if (!sdsm_net_state.started || in_service || holding || atomic_load(&sdsm_net_state.stopping))
        return 0;
    int no = 0;
    if (!atomic_compare_exchange_strong(&sdsm_net_state.led, &no, 1))
        return 0;
    sdsm_stat_add(SDSM_ST_LEAD_WAITS, 1);
    atomic_store_explicit(&sdsm_net_state.lead_serves, 0, memory_order_relaxed);
    struct epoll_event evs[64];
    int changed = 0, full = 0;
    while (!atomic_load(&sdsm_net_state.stopping)) {
        atomic_store(&sdsm_wait_lead_word, w); /* seq_cst: before the check below */
        if (!full && atomic_load(w) != old) {
            atomic_store(&sdsm_wait_lead_word, NULL);
            changed = 1;
            break;
        }
        int ms = full ? 0 : tick_wait_ms();
        int n = epoll_wait(sdsm_net_state.lep, evs, 64, ms < 0 || ms > 1000 ? 1000 : ms);
        atomic_store(&sdsm_wait_lead_word, NULL);
        if (n < 0 && errno != EINTR)
            sdsm_fatal("epoll_wait: %m");
        full = n == 64;
        if (n > 0)
            atomic_fetch_add_explicit(&sdsm_net_state.lead_serves, 1, memory_order_relaxed);
        pthread_mutex_lock(&sdsm_net_state.progress);
        serve(evs, n);
    }
    /* Dekker with service_aside: led, then aside; it stores aside, then
     * reads led (seq_cst both). */
    atomic_store(&sdsm_net_state.led, 0);
    if (atomic_load(&sdsm_net_state.aside)) {
        atomic_store(&sdsm_net_state.aside, 0);
        syscall(SYS_futex, (uint32_t *)&sdsm_net_state.aside, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return changed;
}

/*
 * The service thread woke for a frame because the leader was awake: on a
 * busy CPU the leader that sent a reply is often preempted by the thread
 * the reply woke, before it is back in epoll_wait, and the next request
 * then wakes this thread, a wake-up and a switch more per request than a
 * ping-pong needs.  A leader that keeps serving (a rank waiting in a
 * barrier while it serves pages) makes that happen at every other request.
 * So while such a leader leads, this thread steps aside: it sleeps on a
 * futex instead of in its epoll instance, which it nests in the leader's so
 * that what only it watches (output backlog, the launcher, strangers) wakes
 * the leader.  Frames arriving while the leader is awake then wake nobody;
 * the leader finds them when it is back in epoll_wait.  The leader wakes
 * this thread when it stops leading.  A leader that woke for fewer than
 * SDSM_SERVICE_ASIDE batches is let be: a waiter that leaves at its first
 * reply would only trade this wake-up for the one that calls us back.
 * Progress lock not held.
 */
static void service_aside(void)
{
    long after = sdsm_cfg.service_aside; /* SDSM_SERVICE_ASIDE */
    if (after < 0 || !atomic_load(&sdsm_net_state.led) ||
        atomic_load_explicit(&sdsm_net_state.lead_serves, memory_order_relaxed) < after)
        return;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(int64_t)TAG_EP};
    if (epoll_ctl(sdsm_net_state.lep, EPOLL_CTL_ADD, sdsm_net_state.ep, &ev))
        sdsm_fatal("epoll_ctl (the service thread's instance in the leader's): %m");
    sdsm_stat_add(SDSM_ST_SERVICE_ASIDE, 1);
    atomic_store(&sdsm_net_state.aside, 1);
    while (atomic_load(&sdsm_net_state.aside) && atomic_load(&sdsm_net_state.led) &&
           !atomic_load(&sdsm_net_state.stopping)) {
        struct timespec ts = {1, 0};
        syscall(SYS_futex, (uint32_t *)&sdsm_net_state.aside, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
    }
    atomic_store(&sdsm_net_state.aside, 0);
    if (epoll_ctl(sdsm_net_state.lep, EPOLL_CTL_DEL, sdsm_net_state.ep, NULL))
        sdsm_fatal("epoll_ctl (the service thread's instance out of the leader's): %m");
}

static void *service_main(void *arg)
{
    (void)arg;
    in_service = 1;
    sdsm_trace_thread_name("service", -1);
    struct epoll_event evs[64];
    while (!atomic_load(&sdsm_net_state.stopping)) {
        int n = epoll_wait(sdsm_net_state.ep, evs, 64, tick_wait_ms());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            sdsm_fatal("epoll_wait: %m");
        }
        if (n > 0)
            sdsm_stat_add(SDSM_ST_SERVICE_WAKES, 1);
        /* Edge-triggered: these events are ours to handle (see PEER_EVENTS),
         * even if a waiter holds the lock for a while. */
        pthread_mutex_lock(&sdsm_net_state.progress);
        serve(evs, n);
        if (n > 0)
            service_aside();
    }
    return NULL;
}

int sdsm_net_start(const sdsm_net_setup_t *s)
{
    memset(&sdsm_net_state, 0, sizeof sdsm_net_state);
    sdsm_net_state.rank = s->rank;
    sdsm_net_state.nprocs = s->nprocs;
    long threads = sdsm_cfg.threads > 1 ? sdsm_cfg.threads : 1;
    sdsm_wait_yields = s->cpu_sharers <= 0 || (long)s->cpu_sharers * threads > sdsm_cpus_here();
    atomic_store(&sdsm_wait_local_threads,
                 s->local_nprocs > 0 ? (int)((long)s->local_nprocs * threads) : 0);
    sdsm_net_state.page_size = s->page_size;
    sdsm_net_state.listen_fd = s->listen_fd;
    sdsm_net_state.ctrl_fd = s->ctrl_fd;
    sdsm_net_state.hb_ms = s->nprocs > 1 ? sdsm_cfg.heartbeat_ms : 0; /* alone: no timer at all */
    sdsm_net_state.timeout_ms = sdsm_cfg.peer_timeout_ms;
    atomic_store(&sdsm_net_state.next_tick, sdsm_io_now_ms() + sdsm_net_state.hb_ms);
    pthread_mutex_init(&sdsm_net_state.qmtx, NULL);
    pthread_mutex_init(&sdsm_net_state.progress, NULL);
    sdsm_net_state.peers = calloc((size_t)s->nprocs, sizeof *sdsm_net_state.peers);
    sdsm_net_state.ep = epoll_create1(EPOLL_CLOEXEC);
    sdsm_net_state.lep = epoll_create1(EPOLL_CLOEXEC);
    sdsm_net_state.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sdsm_net_state.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!sdsm_net_state.peers || sdsm_net_state.ep < 0 || sdsm_net_state.lep < 0 ||
        sdsm_net_state.wake_fd < 0 || sdsm_net_state.kick_fd < 0) {
        sdsm_error_log("cannot create the service thread's event loop: %m");
        return -errno;
    }
    /* Self-messages (wake_fd) go to the leader if it sleeps, as frames do. */
    if (add_fd(sdsm_net_state.lep, sdsm_net_state.wake_fd, TAG_WAKE, PEER_EVENTS) ||
        add_fd(sdsm_net_state.ep, sdsm_net_state.wake_fd, TAG_WAKE, PEER_EVENTS) ||
        add_fd(sdsm_net_state.lep, sdsm_net_state.kick_fd, TAG_KICK, EPOLLIN))
        goto fail;
    if (sdsm_net_state.listen_fd >= 0 &&
        add_fd(sdsm_net_state.ep, sdsm_net_state.listen_fd, TAG_LISTEN, EPOLLIN))
        goto fail;
    if (sdsm_net_state.ctrl_fd >= 0 &&
        add_fd(sdsm_net_state.ep, sdsm_net_state.ctrl_fd, TAG_CTRL, EPOLLIN))
        goto fail;
    for (int r = 0; r < s->nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        pthread_mutex_init(&p->smtx, NULL);
        pthread_mutex_init(&p->pin_mtx, NULL);
        p->fd = s->peer_fds ? s->peer_fds[r] : -1;
        p->ofd = -1;
        /* the connection just proved it alive */
        p->heard_ms = atomic_load(&sdsm_net_state.next_tick) - sdsm_net_state.hb_ms;
        p->rcap = 1 << 18;
        p->rbuf = malloc(p->rcap);
        if (!p->rbuf)
            return -ENOMEM;
        if (r == s->rank || p->fd < 0)
            continue;
        /* The leader's instance first: see PEER_EVENTS. */
        if (add_fd(sdsm_net_state.lep, p->fd, r, PEER_EVENTS) ||
            add_fd(sdsm_net_state.ep, p->fd, r, PEER_EVENTS))
            goto fail;
    }
    int rc = pthread_create(&sdsm_net_state.thread, NULL, service_main, NULL);
    if (rc) {
        errno = rc;
        goto fail;
    }
    sdsm_net_state.started = 1;
    sdsm_wait_ops.kick = kick_leader;
    sdsm_wait_ops.progress = poll_progress;
    sdsm_wait_ops.lead = lead_wait;
    sdsm_wait_ops.unpin = sdsm_net_unpin;
    return 0;
fail:;
    int e = errno;
    if (e == EINVAL) /* EPOLLEXCLUSIVE is Linux 4.5 and later */
        sdsm_error_log("cannot start the service thread: epoll refused EPOLLEXCLUSIVE (%m); "
                       "sdsm needs Linux 4.5 or later");
    else
        sdsm_error_log("cannot start the service thread: %m");
    return -e;
}

void sdsm_net_shutdown(void)
{
    if (!sdsm_net_state.started)
        return;
    /* Peers stop watching us at our BYE, so no heartbeat need follow it, and
     * none may: a peer that has every BYE closes its socket, and a heartbeat
     * arriving after that resets the connection, which could discard its own
     * BYE unread here.  Under the progress lock, so a tick running now sends
     * before our BYEs are queued. */
    pthread_mutex_lock(&sdsm_net_state.progress);
    atomic_store(&sdsm_net_state.bye_sent, 1);
    pthread_mutex_unlock(&sdsm_net_state.progress);
    for (int r = 0; r < sdsm_net_state.nprocs; r++)
        if (r != sdsm_net_state.rank)
            sdsm_net_send(r, SDSM_MSG_BYE, 0, 0, NULL, 0, NULL, 0);
    /* Our BYE is queued behind everything we sent; theirs tells us they have
     * nothing more for us, so closing now loses nothing in either direction. */
    uint32_t b;
    while ((b = atomic_load(&sdsm_net_state.byes)) < (uint32_t)(sdsm_net_state.nprocs - 1))
        sdsm_wait_change(&sdsm_net_state.byes, b);
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        if (r == sdsm_net_state.rank)
            continue;
        /* Drain what the kernel has not taken yet before closing. */
        int64_t spins = 0;
        for (;;) {
            pthread_mutex_lock(&p->smtx);
            int empty = p->ooff == p->olen;
            pthread_mutex_unlock(&p->smtx);
            if (empty || ++spins > 200000)
                break;
            sched_yield();
        }
    }
    sdsm_wait_ops.progress = NULL;
    sdsm_wait_ops.lead = NULL;
    sdsm_wait_ops.unpin = NULL;
    atomic_store(&sdsm_net_state.stopping, 1);
    atomic_store(&sdsm_net_state.aside, 0);
    syscall(SYS_futex, (uint32_t *)&sdsm_net_state.aside, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_mutex_lock(&sdsm_net_state.progress); /* no waiter is inside a handler any more */
    pthread_mutex_unlock(&sdsm_net_state.progress);
    uint64_t one = 1;
    ssize_t w = write(sdsm_net_state.wake_fd, &one, sizeof one);
    (void)w;
    pthread_join(sdsm_net_state.thread, NULL);
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        if (sdsm_net_state.peers[r].fd >= 0)
            close(sdsm_net_state.peers[r].fd);
        if (sdsm_net_state.peers[r].ofd >= 0)
            close(sdsm_net_state.peers[r].ofd);
        free(sdsm_net_state.peers[r].rbuf);
        free(sdsm_net_state.peers[r].obuf);
    }
    free(sdsm_net_state.peers);
    close(sdsm_net_state.ep);
    close(sdsm_net_state.lep);
    close(sdsm_net_state.wake_fd);
    close(sdsm_net_state.kick_fd);
    sdsm_net_state.started = 0;
    sdsm_net_strangers_flush();
}
