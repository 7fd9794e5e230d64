/*
 * cond.c - condition variables (Mesa semantics, no polling).
 *
 * The manager of cond c (rank c % nprocs) keeps a FIFO of waiters, each a
 * (rank, reply id).  A waiter registers and waits for the acknowledgement
 * before it releases its lock, so a signal sent by anyone who acquires the
 * lock afterwards cannot miss it; then it sleeps until woken and re-acquires
 * the lock.
 */
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/trace.h"
#include "core/blocked.h"
#include "net/net.h"
#include "net/rpc.h"
#include "sync.h"

typedef struct cwait {
    struct cwait *next;
    int rank;
    uint32_t wake_id;
} cwait_t;

typedef struct mcond {
    uint32_t id;
    cwait_t *head, *tail;
} mcond_t;

static sdsm_idmap_t table; /* the conditions this rank manages */

#define cond_manager sdsm_sync_manager /* with the lock managers, as in SMS */

static mcond_t *mcond_get(uint32_t id)
{
    int fresh;
    mcond_t *c = sdsm_idmap_get_or_new(&table, id, sizeof *c, &fresh);
    if (!c)
        sdsm_fatal("out of memory creating condition variable %u", id);
    if (fresh)
        c->id = id;
    return c;
}

static int on_wait(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id, wake;
    memcpy(&id, p, 4);
    memcpy(&wake, p + 4, 4);
    if (id > INT32_MAX || cond_manager(id) != sdsm_net_rank())
        return SDSM_EPROTO;
    cwait_t *w = malloc(sizeof *w);
    if (!w)
        sdsm_fatal("out of memory");
    *w = (cwait_t){.rank = src, .wake_id = wake};
    mcond_t *c = mcond_get(id);
    if (c->tail)
        c->tail->next = w;
    else
        c->head = w;
    c->tail = w;
    sdsm_net_send(src, SDSM_MSG_COND_ACK, 0, h->seq, NULL, 0, NULL, 0);
    return 0;
}

static int on_signal(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id, all;
    memcpy(&id, p, 4);
    memcpy(&all, p + 4, 4);
    if (id > INT32_MAX || cond_manager(id) != sdsm_net_rank())
        return SDSM_EPROTO;
    mcond_t *c = mcond_get(id);
    while (c->head) {
        cwait_t *w = c->head;
        c->head = w->next;
        if (!c->head)
            c->tail = NULL;
        sdsm_net_send(w->rank, SDSM_MSG_COND_WAKE, 0, w->wake_id, &id, 4, NULL, 0);
        free(w);
        if (!all)
            break;
    }
    return 0;
}

static int on_reply(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    return sdsm_rpc_reply(h->seq, 0, NULL, 0) ? SDSM_EPROTO : 0; /* a reply nobody waits for */
}

int sdsm_cond_wait_run(int cond, int lock)
{
    sdsm_rpc_t ack = {0}, wake = {0};
    uint32_t ack_id = sdsm_rpc_open(&ack, 1), wake_id = sdsm_rpc_open(&wake, 1);
    uint32_t msg[2] = {(uint32_t)cond, wake_id};
    sdsm_wait_save_t sv;
    uint64_t t0 = sdsm_trace_t0();
    sdsm_wait_enter(&sv, SDSM_WAIT_COND, cond);
    sdsm_net_send(cond_manager((uint32_t)cond), SDSM_MSG_COND_WAIT, 0, ack_id, msg, 8, NULL, 0);
    sdsm_rpc_wait(&ack);
    sdsm_rpc_close(ack_id);
    sdsm_lock_release(lock, 1);
    sdsm_rpc_wait(&wake);
    sdsm_rpc_close(wake_id);
    sdsm_wait_leave(&sv);
    sdsm_stat_add(SDSM_ST_COND_WAITS, 1);
    SDSM_TRACE(SDSM_TR_COND_WAIT, t0, cond, lock, 0);
    return sdsm_lock_acquire(lock);
}

int sdsm_cond_signal_run(int cond, int all)
{
    uint32_t msg[2] = {(uint32_t)cond, (uint32_t) !!all};
    sdsm_net_send(cond_manager((uint32_t)cond), SDSM_MSG_COND_SIGNAL, 0, 0, msg, 8, NULL, 0);
    return 0;
}

int sdsm_cond_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_COND_WAIT, on_wait);
    sdsm_msg_set_handler(SDSM_MSG_COND_SIGNAL, on_signal);
    sdsm_msg_set_handler(SDSM_MSG_COND_ACK, on_reply);
    sdsm_msg_set_handler(SDSM_MSG_COND_WAKE, on_reply);
    return 0;
}
