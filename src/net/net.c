/*
 * net.c - the transport's state, its set-up and its orderly close.
 *
 * The transport is one file per concern (net_int.h lists them): sending
 * (send.c), receiving and dispatch (recv.c), peer liveness (heartbeat.c),
 * who drives the sockets (progress.c, with request pins in pin.c), and the
 * sockets that are not peers' (outside.c).  This file creates the two epoll
 * instances and the service thread, plugs the transport into wait.h, and at
 * the end trades BYEs with every peer before it closes anything.
 */
#include "net_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "net/auth.h"

_Static_assert(SDSM_MSG_NTYPES <= SDSM_STATS_MAX_TYPES, "stats count every message type");

sdsm_net_state_t sdsm_net_state;

uint32_t sdsm_net_epoch(void) { return atomic_load_explicit(&sdsm_net_state.epoch, memory_order_acquire); }
int sdsm_net_rank(void) { return sdsm_net_state.rank; }
int sdsm_net_nprocs(void) { return sdsm_net_state.nprocs; }
int sdsm_net_in_service(void) { return sdsm_net_is_service_thread; }

void sdsm_net_epoch_advance(void)
{
    atomic_fetch_add_explicit(&sdsm_net_state.epoch, 1, memory_order_acq_rel);
    sdsm_net_state.epoch_moved = 1;
}

int sdsm_net_listen_port(void)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    if (sdsm_net_state.listen_fd < 0)
        return SDSM_ESTATE;
    if (getsockname(sdsm_net_state.listen_fd, (struct sockaddr *)&a, &l))
        return SDSM_ESYS;
    return ntohs(a.sin_port);
}

/* The service thread at a peer's BYE, or peer_lost below: counted once. */
void sdsm_net_peer_done(int r)
{
    if (__atomic_exchange_n(&sdsm_net_state.peers[r].bye, 1, __ATOMIC_SEQ_CST))
        return;
    atomic_fetch_add(&sdsm_net_state.byes, 1);
    sdsm_wake_all(&sdsm_net_state.byes);
}

void sdsm_net_peer_lost(int r, const char *why)
{
    if (atomic_load(&sdsm_net_state.stopping) ||
        __atomic_load_n(&sdsm_net_state.peers[r].bye, __ATOMIC_SEQ_CST))
        return;
    /* Past our BYE (sdsm_finalize, after the job's last barrier), a peer
     * that has every BYE closes its end, and may do so with a late reply of
     * ours unread (one to a prefetch still on its way when the barrier
     * ended): the reset that follows can discard its own BYE before we read
     * it.  It is done with us either way: counted as its BYE, so the
     * teardown neither fails nor waits for one that may never be read.  A
     * peer that died instead is reported by the launcher from its exit. */
    if (atomic_load(&sdsm_net_state.bye_sent)) {
        sdsm_net_peer_done(r);
        return;
    }
    sdsm_fatal_lost(r, why);
}

/* The set-up's facts and the configuration this transport runs by. */
static void take_setup(const sdsm_net_setup_t *s)
{
    memset(&sdsm_net_state, 0, sizeof sdsm_net_state);
    sdsm_net_state.rank = s->rank;
    sdsm_net_state.nprocs = s->nprocs;
    long threads = sdsm_cfg.threads > 1 ? sdsm_cfg.threads : 1;
    sdsm_wait_yields = s->cpu_sharers <= 0 || (long)s->cpu_sharers * threads > sdsm_cpus_here();
    atomic_store(&sdsm_wait_local_threads, s->local_nprocs > 0 ? (int)((long)s->local_nprocs * threads) : 0);
    sdsm_net_state.page_size = s->page_size;
    sdsm_net_state.listen_fd = s->listen_fd;
    sdsm_net_state.ctrl_fd = s->ctrl_fd;
    sdsm_net_state.hb_ms = s->nprocs > 1 ? sdsm_cfg.heartbeat_ms : 0; /* alone: no timer at all */
    sdsm_net_state.probe_ms = s->nprocs > 1 ? sdsm_cfg.loss_probe_ms : 0;
    sdsm_net_state.timeout_ms = sdsm_cfg.peer_timeout_ms;
    atomic_store(&sdsm_net_state.next_tick, sdsm_io_now_ms() + sdsm_net_state.hb_ms);
    pthread_mutex_init(&sdsm_net_state.qmtx, NULL);
    pthread_mutex_init(&sdsm_net_state.progress, NULL);
}

/* The peer table, the two epoll instances and the two eventfds (logged
 * here if they cannot be made). */
static int loop_create(int nprocs)
{
    sdsm_net_state.peers = calloc((size_t)nprocs, sizeof *sdsm_net_state.peers);
    sdsm_net_state.ep = epoll_create1(EPOLL_CLOEXEC);
    sdsm_net_state.lep = epoll_create1(EPOLL_CLOEXEC);
    sdsm_net_state.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sdsm_net_state.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!sdsm_net_state.peers || sdsm_net_state.ep < 0 || sdsm_net_state.lep < 0 ||
        sdsm_net_state.wake_fd < 0 || sdsm_net_state.kick_fd < 0) {
        sdsm_error_log("cannot create the service thread's event loop: %m");
        return sdsm_net_state.peers ? SDSM_ESYS : SDSM_ENOMEM;
    }
    return 0;
}

/* The items that are not peers' sockets.  0, or SDSM_ESYS with errno
 * saying why: the caller logs why the service thread could not start. */
static int loop_watch(void)
{
    /* Self-messages (wake_fd) go to the leader if it sleeps, as frames do. */
    if (sdsm_net_add_fd(sdsm_net_state.lep, sdsm_net_state.wake_fd, TAG_WAKE, PEER_EVENTS) ||
        sdsm_net_add_fd(sdsm_net_state.ep, sdsm_net_state.wake_fd, TAG_WAKE, PEER_EVENTS) ||
        sdsm_net_add_fd(sdsm_net_state.lep, sdsm_net_state.kick_fd, TAG_KICK, EPOLLIN))
        return SDSM_ESYS;
    if (sdsm_net_state.listen_fd >= 0 &&
        sdsm_net_add_fd(sdsm_net_state.ep, sdsm_net_state.listen_fd, TAG_LISTEN, EPOLLIN))
        return SDSM_ESYS;
    if (sdsm_net_state.ctrl_fd >= 0 &&
        sdsm_net_add_fd(sdsm_net_state.ep, sdsm_net_state.ctrl_fd, TAG_CTRL, EPOLLIN))
        return SDSM_ESYS;
    return 0;
}

/* A peer's entry before its socket is watched (fd -1: none).  0 or SDSM_ENOMEM. */
static int peer_init(peer_t *p, int fd, int remote)
{
    pthread_mutex_init(&p->smtx, NULL);
    pthread_mutex_init(&p->pin_mtx, NULL);
    p->fd = fd;
    p->ofd = -1;
    p->remote = fd >= 0 && remote;
    /* the connection just proved it alive */
    p->heard_ms = atomic_load(&sdsm_net_state.next_tick) - sdsm_net_state.hb_ms;
    p->rcap = 1 << 18;
    p->rbuf = malloc(p->rcap);
    if (!p->rbuf)
        return SDSM_ENOMEM;
    return 0;
}

/* epoll (or pthread_create) refused, errno says why: log it.  SDSM_ESYS. */
static int start_failed(void)
{
    if (errno == EINVAL) /* EPOLLEXCLUSIVE is Linux 4.5 and later */
        sdsm_error_log("cannot start the service thread: epoll refused EPOLLEXCLUSIVE (%m); "
                       "sdsm needs Linux 4.5 or later");
    else
        sdsm_error_log("cannot start the service thread: %m");
    return SDSM_ESYS;
}

int sdsm_net_start(const sdsm_net_setup_t *s)
{
    take_setup(s);
    int rc = loop_create(s->nprocs);
    if (rc)
        return rc;
    if (loop_watch())
        goto fail;
    for (int r = 0; r < s->nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        if ((rc = peer_init(p, s->peer_fds ? s->peer_fds[r] : -1, s->same_host && !s->same_host[r])))
            return rc;
        if (r == s->rank || p->fd < 0)
            continue;
        /* The leader's instance first: see PEER_EVENTS. */
        if (sdsm_net_add_fd(sdsm_net_state.lep, p->fd, r, PEER_EVENTS) ||
            sdsm_net_add_fd(sdsm_net_state.ep, p->fd, r, PEER_EVENTS))
            goto fail;
    }
    rc = pthread_create(&sdsm_net_state.thread, NULL, sdsm_net_service_main, NULL);
    if (rc) {
        errno = rc;
        goto fail;
    }
    sdsm_net_state.started = 1;
    sdsm_wait_ops.kick = sdsm_net_kick_leader;
    sdsm_wait_ops.progress = sdsm_net_poll_progress;
    sdsm_wait_ops.lead = sdsm_net_lead_wait;
    sdsm_wait_ops.unpin = sdsm_net_unpin;
    return 0;
fail:
    return start_failed();
}

/* Send our BYEs and wait for every peer's. */
static void trade_byes(void)
{
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
}

/* Drain what the kernel has not taken yet before closing. */
static void drain_output(void)
{
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        if (r == sdsm_net_state.rank)
            continue;
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
}

/* The service thread is gone: close and free everything. */
static void loop_free(void)
{
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
}

void sdsm_net_shutdown(void)
{
    if (!sdsm_net_state.started)
        return;
    trade_byes();
    drain_output();
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
    loop_free();
    sdsm_net_state.started = 0;
    sdsm_net_strangers_flush();
}
