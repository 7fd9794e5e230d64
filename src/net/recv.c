/*
 * recv.c - reading the peers' sockets, framing, and running the handlers.
 *
 * Whichever thread holds the progress lock reads (progress.c).  Each peer
 * has a buffer holding at least one whole frame; the header is validated
 * against the type table before the payload is looked at, then the handler
 * runs.  A frame from a later epoch stops its peer's buffer (stalled) until
 * this rank's epoch catches up (net.h; sdsm_net_release_progress rescans).
 * Messages this rank sent itself are run here too (sdsm_net_drain_queue).
 */
#include "net_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"

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

static void dispatch(int src, const sdsm_hdr_t *h, const uint8_t *payload)
{
    if (src != sdsm_net_state.rank) /* as sends: what a rank hands itself never was on the wire */
        sdsm_stat_recv(h->type, sizeof *h + h->len);
    if (h->type == SDSM_MSG_BYE) {
        sdsm_net_peer_done(src);
        return;
    }
    if (h->type == SDSM_MSG_HEARTBEAT) /* its arrival was all it had to say */
        return;
    sdsm_msg_handler_t fn = sdsm_msg_table[h->type].handler;
    if (!fn || fn(src, h, payload) < 0) {
        sdsm_stat_add(SDSM_ST_REJECTED_MSGS, 1);
        sdsm_warn("rejected %s message (%u bytes) from rank %d: %s", sdsm_msg_name(h->type), h->len, src,
                  fn ? "invalid contents" : "no handler");
    }
}

/* Run every complete frame in r's buffer that is not from a later epoch. */
void sdsm_net_parse(int r)
{
    peer_t *p = &sdsm_net_state.peers[r];
    p->stalled = 0;
    while (p->rlen - p->roff >= sizeof(sdsm_hdr_t)) {
        sdsm_hdr_t h;
        memcpy(&h, p->rbuf + p->roff, sizeof h);
        int rc = sdsm_msg_check(&h, sdsm_net_state.page_size);
        if (rc == SDSM_EPEER)
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

void sdsm_net_read_peer(int r)
{
    peer_t *p = &sdsm_net_state.peers[r];
    sdsm_net_pin_note_read(p);
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
                sdsm_net_parse(r);
            if ((size_t)n < room) /* drained: a later byte is a new edge (PEER_EVENTS) */
                return;
            continue;
        }
        if (n == 0) {
            sdsm_net_peer_lost(r, "connection closed");
            peer_forget(p);
            return;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            sdsm_net_peer_lost(r, strerror(errno));
            peer_forget(p);
        }
        return;
    }
}

/* Progress lock held.  Handlers may queue more for ourselves: loop. */
void sdsm_net_drain_queue(void)
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

void sdsm_net_drain_self(void)
{
    uint64_t v;
    ssize_t rd = read(sdsm_net_state.wake_fd, &v, sizeof v);
    (void)rd;
    sdsm_net_drain_queue();
}
