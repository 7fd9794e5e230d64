/*
 * pin.c - request pins: a thread that sends a request and waits for its
 * reply takes the peer's socket out of the service thread's epoll instance
 * meanwhile, so that the reply wakes the waiter and nobody else (see
 * sdsm_net_pin), where that pays (pin_pays, which scores the replies the
 * service thread woke for instead).
 */
#include "net_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>

#include "core/config.h"
#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"

/* The peers whose sockets this thread pinned (sdsm_net_pin). */
#define PIN_MAX 8
static __thread int pinned[PIN_MAX], npinned;
/* Whether request pins pay (SDSM_REQ_PIN=1, see sdsm_net_pin). */
#define PIN_WOKE  8 /* a frame from a peer this rank waits for, read by the service thread */
#define PIN_ON    8 /* pins from this score on... */
#define PIN_TOP   64
#define PIN_PROBE 16 /* ...except one request in this many, which measures */
static _Atomic int pin_score;
static _Atomic unsigned pin_probes;
static __thread int unpinned_to = -1; /* the peer of this thread's unpinned request */

/* The service thread woke for a peer that a thread of this rank sent an
 * unpinned request to and waits for: most likely its reply, which a pin
 * would have kept for the waiter (sdsm_net_pin).  Called by every read of a
 * peer's socket (sdsm_net_read_peer). */
void sdsm_net_pin_note_read(const peer_t *p)
{
    if (sdsm_net_is_service_thread && atomic_load_explicit(&p->unpinned, memory_order_relaxed) > 0) {
        int sc = atomic_load_explicit(&pin_score, memory_order_relaxed);
        atomic_store_explicit(&pin_score, sc + PIN_WOKE < PIN_TOP ? sc + PIN_WOKE : PIN_TOP,
                              memory_order_relaxed);
    }
}

int sdsm_net_pins_held(void) { return npinned; }

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
 * (sdsm_net_read_peer) scores PIN_WOKE, every unpinned request takes 1 off, and
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
    if (sc >= PIN_ON && atomic_fetch_add_explicit(&pin_probes, 1, memory_order_relaxed) % PIN_PROBE != 0)
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
 * lasts until the sender's wait ends or it cannot lead (sdsm_wait_ops.unpin,
 * called from wait.h before a futex sleep and at every return, and at the
 * end of the operation), so a socket is out of the service thread's
 * instance only while a thread of this rank is about to lead or leads: a
 * request from that peer meanwhile is served by the leader.  A poll of a
 * thread that pinned looks in the leader's instance when nobody leads
 * (sdsm_net_poll_progress).  SDSM_REQ_PIN: 1 (default) where it pays (pin_pays), 2
 * always, 0 never.
 */
void sdsm_net_pin(int dst)
{
    if (!sdsm_cfg.req_pin || !sdsm_net_state.started || sdsm_net_is_service_thread || sdsm_net_holding ||
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
        if (--p->pins == 0 && !p->closed && sdsm_net_add_fd(sdsm_net_state.ep, p->fd, r, PEER_EVENTS) &&
            errno != EEXIST)
            sdsm_fatal("epoll_ctl (rank %d's socket back in the service thread's instance): %m", r);
        pthread_mutex_unlock(&p->pin_mtx);
    }
}
