/*
 * progress.c - who drives the sockets: the progress lock, the service
 * thread, and the waiter that leads.
 *
 * Invariant: handlers run one at a time, under the progress lock, so the
 * state they own (lock queues, barrier counts, pending operations) needs no
 * other lock.  The service thread takes the progress lock when epoll wakes
 * it; a thread waiting for a reply takes it (if free) while it spins, and
 * one waiting thread at a time then sleeps in epoll_wait itself
 * (sdsm_net_lead_wait), so the reply wakes the thread that needs it and
 * nobody else: as in a ping-pong, one wake-up per frame received, not two
 * (service thread, then waiter).
 */
#include "net_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/wait.h"

__thread int sdsm_net_is_service_thread;
__thread int sdsm_net_holding;

/* Progress lock held (taken by serve() or a poll): run what handlers queued for
 * ourselves, then let go. */
void sdsm_net_release_progress(void)
{
    sdsm_net_drain_queue();
    /* A barrier's release moved the epoch: frames held back for it may go now. */
    while (sdsm_net_state.epoch_moved) {
        sdsm_net_state.epoch_moved = 0;
        for (int r = 0; r < sdsm_net_state.nprocs; r++)
            if (sdsm_net_state.peers[r].stalled)
                sdsm_net_parse(r);
        sdsm_net_drain_queue();
    }
    sdsm_net_holding = 0;
    pthread_mutex_unlock(&sdsm_net_state.progress);
}

/* The kick (sdsm_wait_ops.kick) is in the leader's instance only: a kick left
 * by a leader that ended first only makes the next one look once more. */
static void kick_event(void)
{
    uint64_t v;
    ssize_t rd = read(sdsm_net_state.kick_fd, &v, sizeof v);
    (void)rd;
}

void sdsm_net_kick_leader(void)
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
            sdsm_net_drain_self();
        else if (tag == TAG_EP)
            ep_ready = 1;
        else if (tag == TAG_KICK)
            kick_event();
        else if (tag == TAG_LISTEN)
            sdsm_net_refuse_stranger();
        else if (tag == TAG_CTRL)
            sdsm_net_ctrl_event();
        else if (tag >= TAG_OUT)
            sdsm_net_flush_out(tag - TAG_OUT);
        else
            sdsm_net_read_peer(tag);
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
    sdsm_net_holding = 1;
    if (n > 0)
        handle(evs, n);
    sdsm_net_tick();
    sdsm_net_release_progress();
}

int sdsm_net_poll_progress(void)
{
    if (!sdsm_net_state.started || atomic_load(&sdsm_net_state.stopping) ||
        pthread_mutex_trylock(&sdsm_net_state.progress))
        return 0;
    /* A socket this thread pinned is in the leader's instance only. */
    int ep =
        sdsm_net_pins_held() && !atomic_load(&sdsm_net_state.led) ? sdsm_net_state.lep : sdsm_net_state.ep;
    struct epoll_event evs[64];
    int n = epoll_wait(ep, evs, 64, 0);
    serve(evs, n);
    return n;
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
int sdsm_net_lead_wait(_Atomic uint32_t *w, uint32_t old)
{
    if (!sdsm_net_state.started || sdsm_net_is_service_thread || sdsm_net_holding ||
        atomic_load(&sdsm_net_state.stopping))
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
        int ms = full ? 0 : sdsm_net_tick_wait_ms();
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

void *sdsm_net_service_main(void *arg)
{
    (void)arg;
    sdsm_net_is_service_thread = 1;
    sdsm_trace_thread_name("service", -1);
    struct epoll_event evs[64];
    while (!atomic_load(&sdsm_net_state.stopping)) {
        int n = epoll_wait(sdsm_net_state.ep, evs, 64, sdsm_net_tick_wait_ms());
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
