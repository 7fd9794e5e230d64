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
 */
#include "net_int.h"

#include <stdatomic.h>
#include <stdio.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/wait.h"
#include "net/auth.h"

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
    int64_t left = atomic_load_explicit(&sdsm_net_state.next_tick, memory_order_relaxed) - sdsm_io_now_ms();
    return left < 0 ? 0 : left > sdsm_net_state.hb_ms ? (int)sdsm_net_state.hb_ms : (int)left;
}
