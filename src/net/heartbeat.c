/*
 * heartbeat.c - peer liveness.
 *
 * A peer that is stopped (SIGSTOP) or cut off sends nothing and closes
 * nothing, so TCP alone never reports it.  A timer (sdsm_net_tick) runs
 * every SDSM_HEARTBEAT under the progress lock, in whichever thread holds
 * it: the service thread and a leading waiter wake for it from epoll (its
 * time-out, sdsm_net_tick_wait_ms), and spinning waiters run it from
 * sdsm_net_poll_progress, so it keeps running while threads spin or
 * compute.  Each tick sends a 16-byte HEARTBEAT to every peer nothing was
 * sent to since the previous tick (a busy link carries none), and a peer
 * from which no byte at all arrived for SDSM_PEER_TIMEOUT is lost.  Bytes
 * count when read, even if the epoch stall holds their frames back.
 *
 * Loss probes, on the same timer.  A request and its reply are one segment
 * each, alone in flight, so a lost one is not found by the acknowledgements
 * of later ones: only the sender's tail-loss probe or retransmission timer
 * finds it, after 200 ms at least before Linux 6.15 (SDSM_RTO_MIN lowers
 * that on later kernels, to 8 ms at 250 ticks a second).  A segment sent
 * behind the lost one makes the receiver acknowledge it selectively at
 * once, and the sender's RACK then sends the lost one again within a round
 * trip.  So every SDSM_LOSS_PROBE, while frames go out, each link to another
 * host on which data is in flight and no byte was acknowledged for
 * SDSM_LOSS_PROBE, or for the kernel's own estimate of an acknowledgement's
 * delay if longer (smoothed round trip + 4 x its variation: a loaded host
 * acknowledges late), gets a HEARTBEAT (16 bytes, answered by nothing), at
 * the 1st, 2nd, 4th, 8th... pass that finds it stuck: a receiver that does
 * not read (a full window, not a loss) or a late acknowledgement costs a few.
 */
#include "net_int.h"

#include <stdatomic.h>
#include <stdio.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"
#include "net/auth.h"
#include "net/tcpopt.h"

/* A peer said nothing for the peer timeout: the job cannot go on without it. */
static void peer_silent(int r, int64_t ms)
{
    if (atomic_load(&sdsm_net_state.stopping) ||
        __atomic_load_n(&sdsm_net_state.peers[r].bye, __ATOMIC_RELAXED))
        return;
    char why[160];
    snprintf(why, sizeof why,
             "no bytes from it for %.1f s (SDSM_PEER_TIMEOUT=%.1f s); stopped by a signal "
             "such as SIGSTOP, hung, or cut off from the network",
             (double)ms / 1000.0, (double)sdsm_net_state.timeout_ms / 1000.0);
    sdsm_fatal_silent(r, why, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
}

/* Look at r's link: 1 if data is still in flight on it (progress lock held). */
static int probe_peer(int r, peer_t *p, int64_t now)
{
    uint64_t acked;
    uint32_t unacked, ack_us;
    if (!p->remote || sdsm_tcp_progress(p->fd, &acked, &unacked, &ack_us) || !unacked) {
        p->inflight = 0;
        p->stuck = 0;
        return 0;
    }
    int64_t wait_ms =
        (int64_t)ack_us / 1000 > sdsm_net_state.probe_ms ? (int64_t)ack_us / 1000 : sdsm_net_state.probe_ms;
    if (p->inflight && acked == p->acked) {
        if (now - p->since_ms < wait_ms)
            return 1; /* not late yet */
        p->stuck++;
        if ((p->stuck & (p->stuck - 1)) == 0) { /* 1, 2, 4, 8, ... */
            sdsm_stat_add(SDSM_ST_LOSS_PROBES, 1);
            sdsm_net_send(r, SDSM_MSG_HEARTBEAT, 0, 0, NULL, 0, NULL, 0);
        }
    } else {
        p->stuck = 0;
        p->since_ms = now;
    }
    p->inflight = 1;
    p->acked = acked;
    return 1;
}

/* The loss probe pass, when due (see the top of this file; progress lock held). */
static void probe_links(int64_t now)
{
    int64_t due = atomic_load_explicit(&sdsm_net_state.next_probe, memory_order_relaxed);
    if (!atomic_load_explicit(&sdsm_net_state.probe_armed, memory_order_relaxed) || !due || now < due)
        return;
    /* Disarmed first: a frame sent from here on arms it again. */
    atomic_store(&sdsm_net_state.probe_armed, 0);
    int pending = 0;
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        int sent = atomic_exchange_explicit(&p->watch, 0, memory_order_relaxed);
        if (r == sdsm_net_state.rank || p->fd < 0 || p->closed || (!sent && !p->inflight))
            continue;
        pending |= probe_peer(r, p, now);
    }
    atomic_store_explicit(&sdsm_net_state.next_probe, pending ? now + sdsm_net_state.probe_ms : 0,
                          memory_order_relaxed);
    if (pending)
        atomic_store(&sdsm_net_state.probe_armed, 1);
}

/* Milliseconds until the loss probe pass is due (-1: none), setting it
 * probe_ms from now if a frame went out since the last pass. */
static int64_t probe_wait_ms(int64_t now)
{
    if (!sdsm_net_state.probe_ms || !atomic_load_explicit(&sdsm_net_state.probe_armed, memory_order_relaxed))
        return -1;
    int64_t due = atomic_load_explicit(&sdsm_net_state.next_probe, memory_order_relaxed);
    if (!due) {
        int64_t want = now + sdsm_net_state.probe_ms;
        if (atomic_compare_exchange_strong(&sdsm_net_state.next_probe, &due, want))
            due = want;
    }
    return due > now ? due - now : 0;
}

/*
 * The heartbeat timer (see the top of this file).  Progress lock held; cheap
 * when it is not yet time.  Before a silent peer is declared lost its socket
 * is read once more, so a rank that was itself stopped or starved for a
 * while does not blame peers whose bytes are simply waiting unread.
 */
void sdsm_net_tick(void)
{
    if (!sdsm_net_state.hb_ms)
        return;
    int64_t now = sdsm_io_now_ms();
    if (sdsm_net_state.probe_ms && !atomic_load(&sdsm_net_state.bye_sent)) /* no frame after our BYE */
        probe_links(now);
    if (now < atomic_load_explicit(&sdsm_net_state.next_tick, memory_order_relaxed))
        return;
    atomic_store_explicit(&sdsm_net_state.next_tick, now + sdsm_net_state.hb_ms, memory_order_relaxed);
    int quiet = atomic_load(&sdsm_net_state.bye_sent);
    for (int r = 0; r < sdsm_net_state.nprocs; r++) {
        peer_t *p = &sdsm_net_state.peers[r];
        if (r == sdsm_net_state.rank || p->fd < 0 || p->closed)
            continue;
        if (!quiet && !atomic_exchange_explicit(&p->sent, 0, memory_order_relaxed)) {
            sdsm_net_send(r, SDSM_MSG_HEARTBEAT, 0, 0, NULL, 0, NULL, 0);
            atomic_store_explicit(&p->sent, 0, memory_order_relaxed);
        }
        if (__atomic_load_n(&p->bye, __ATOMIC_RELAXED) || !sdsm_net_state.timeout_ms)
            continue;
        if (!p->heard && now - p->heard_ms >= sdsm_net_state.timeout_ms)
            sdsm_net_read_peer(r);
        if (p->heard) {
            p->heard = 0;
            p->heard_ms = now;
        } else if (now - p->heard_ms >= sdsm_net_state.timeout_ms && !p->closed) {
            peer_silent(r, now - p->heard_ms);
        }
    }
}

/* Milliseconds until the next tick, for epoll_wait (-1: no timer). */
int sdsm_net_tick_wait_ms(void)
{
    if (!sdsm_net_state.hb_ms)
        return -1;
    int64_t now = sdsm_io_now_ms();
    int64_t left = atomic_load_explicit(&sdsm_net_state.next_tick, memory_order_relaxed) - now;
    left = left < 0 ? 0 : left > sdsm_net_state.hb_ms ? sdsm_net_state.hb_ms : left;
    int64_t probe = probe_wait_ms(now);
    return (int)(probe >= 0 && probe < left ? probe : left);
}
