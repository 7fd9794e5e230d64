/*
 * net_int.h - what the files of the transport share: the peers, the state,
 * the tags of the epoll items and the functions one file calls in another.
 * Internal to src/net; every other layer uses net.h.
 *
 * The files: net.c (state, set-up, shut-down), send.c (sending, the output
 * backlog, self-messages), recv.c (reading, framing, the epoch stall,
 * dispatch), heartbeat.c (the timer that keeps silent peers found out),
 * progress.c (who drives the sockets: the progress lock, the service thread,
 * the leading waiter), pin.c (request pins), outside.c (the launcher's link
 * and connections from outside the job).
 */
#ifndef SDSM_NET_NET_INT_H
#define SDSM_NET_NET_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "net/msg.h"
#include "net/net.h"

/* The data of the epoll items: which fd reported. */
#define TAG_WAKE   (-1)
#define TAG_LISTEN (-2)
#define TAG_CTRL   (-3)
#define TAG_KICK   (-4)
#define TAG_EP     (-5)      /* the service thread's instance, in the leader's while it steps aside */
#define TAG_OUT    (1 << 24) /* + rank: that peer's socket can take more (EPOLLOUT) */

typedef struct peer {
    int fd;
    int ofd;              /* dup of fd: its EPOLLOUT item (send.c), -1 until needed */
    pthread_mutex_t smtx; /* guards the output buffer and writes */
    uint8_t *obuf;
    size_t olen, ooff, ocap;
    int want_out;
    uint8_t *rbuf; /* service thread only */
    size_t rlen, roff, rcap;
    int stalled; /* next frame is from a later epoch */
    int bye;     /* peer announced an orderly close */
    int closed;
    _Atomic int sent;        /* a frame went out since the last tick */
    int heard;               /* bytes came in since the last tick (progress lock) */
    int64_t heard_ms;        /* when bytes last came in, as of a tick (progress lock) */
    _Atomic int watch;       /* a frame went out since the last loss probe pass (heartbeat.c) */
    int remote;              /* the peer is on another host (boot's same_host, before the service thread) */
    int inflight;            /* ...data was in flight at the last pass */
    uint64_t acked;          /* ...bytes the peer had acknowledged then */
    int64_t since_ms;        /* ...when that count last moved (or data went in flight) */
    uint32_t stuck;          /* ...passes in a row that found it stuck */
    pthread_mutex_t pin_mtx; /* guards pins and the item in the service thread's instance */
    int pins;                /* requesters that took this socket out of it (sdsm_net_pin) */
    _Atomic int unpinned;    /* requesters that chose not to, waiting for a reply */
} peer_t;

typedef struct selfmsg {
    struct selfmsg *next;
    sdsm_hdr_t h;
    uint8_t payload[];
} selfmsg_t;

typedef struct sdsm_net_state {
    int rank, nprocs;
    size_t page_size;
    peer_t *peers;
    int ep, wake_fd, listen_fd, ctrl_fd;
    int lep;                 /* the leader's epoll instance (sdsm_net_lead_wait) */
    int kick_fd;             /* wakes the leader out of epoll_wait (sdsm_net_lead_wait) */
    _Atomic int led;         /* a thread is leading (sdsm_net_lead_wait) */
    _Atomic int lead_serves; /* batches the current leader woke for and served */
    _Atomic uint32_t aside;  /* the service thread stepped aside (service_aside) */
    int aside_deferred;      /* handle_aside let a report go (progress lock) */
    pthread_t thread;
    pthread_mutex_t qmtx;
    selfmsg_t *qhead, *qtail;
    _Atomic uint32_t epoch;
    _Atomic int stopping;
    _Atomic uint32_t byes; /* peers that said BYE (service thread writes) */
    int epoch_moved;       /* rescan stalled peers (progress lock held) */
    pthread_mutex_t progress;
    int started;
    int64_t hb_ms, timeout_ms;  /* SDSM_HEARTBEAT, SDSM_PEER_TIMEOUT (0: off) */
    _Atomic int64_t next_tick;  /* written under the progress lock, read without */
    _Atomic int bye_sent;       /* our BYEs are out: peers no longer watch us */
    int64_t probe_ms;           /* SDSM_LOSS_PROBE (0: off) */
    _Atomic int probe_armed;    /* a peer's watch is set: a pass is due probe_ms after next_probe was set */
    _Atomic int64_t next_probe; /* when the next loss probe pass is due (0: not set) */
} sdsm_net_state_t;

/* The transport's state (one transport per process; net.c). */
extern sdsm_net_state_t sdsm_net_state;

/*
 * Two epoll instances watch every peer's socket: the leader's (lep, see
 * sdsm_net_lead_wait) and the service thread's (ep), added in that order and
 * both EPOLLEXCLUSIVE.  A frame then wakes one thread: the kernel offers the
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

static inline int sdsm_net_add_fd(int ep, int fd, int64_t tag, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)tag};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* True in the service thread (progress.c). */
extern __thread int sdsm_net_is_service_thread;
/* This thread holds the progress lock and runs the self-messages queued
 * meanwhile before it lets go (sdsm_net_drain_queue), so those need no
 * wake-up (progress.c). */
extern __thread int sdsm_net_holding;

/* net.c: a peer's connection failed; stops the job unless it said BYE or
 * this rank is stopping. */
void sdsm_net_peer_lost(int r, const char *why);
/* Peer r said BYE (or, past ours, closed): counted once in byes. */
void sdsm_net_peer_done(int r);

/* send.c: r's socket can take more (EPOLLOUT). */
void sdsm_net_flush_out(int r);

/* recv.c */
void sdsm_net_read_peer(int r);  /* read all r's socket has, run its frames */
void sdsm_net_parse(int r);      /* run r's buffered frames not from a later epoch */
void sdsm_net_drain_queue(void); /* run the self-messages (progress lock held) */
void sdsm_net_drain_self(void);  /* wake_fd reported: the same */

/* outside.c: the listening socket and the launcher's link reported. */
void sdsm_net_refuse_stranger(void);
void sdsm_net_ctrl_event(void);

/* heartbeat.c: a frame went out to p (loss probes: links to other hosts only). */
static inline void sdsm_net_watch(peer_t *p)
{
    if (p->remote && sdsm_net_state.probe_ms && !atomic_load_explicit(&p->watch, memory_order_relaxed)) {
        atomic_store_explicit(&p->watch, 1, memory_order_relaxed);
        if (!atomic_load_explicit(&sdsm_net_state.probe_armed, memory_order_relaxed))
            atomic_store(&sdsm_net_state.probe_armed, 1);
    }
}

/* heartbeat.c: the timer (progress lock held) and the time until it is due. */
void sdsm_net_tick(void);
int sdsm_net_tick_wait_ms(void);

/* progress.c: letting go of the progress lock, the hooks of wait.h, the
 * service thread. */
void sdsm_net_release_progress(void);
void sdsm_net_kick_leader(void);
int sdsm_net_poll_progress(void);
int sdsm_net_lead_wait(_Atomic uint32_t *w, uint32_t old);
void *sdsm_net_service_main(void *arg);

/* pin.c: the service thread read a frame from p (scores the pins); whether
 * this thread holds pins. */
void sdsm_net_pin_note_read(const peer_t *p);
int sdsm_net_pins_held(void);

#endif
