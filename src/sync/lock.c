/*
 * lock.c - distributed locks.
 *
 * Manager side (service thread of rank id % nprocs): per lock, the holding
 * rank and a FIFO of waiting ranks.  Client side: the threads of this rank
 * waiting for a lock, granted in the order they asked, and the locks held
 * by each thread (so misuse is reported, not silently accepted).
 *
 * Unlock flushes first (the protocol's release), then tells the manager, so
 * the next holder is granted only after the writes are visible.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/stats.h"
#include "core/wait.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/proto.h"
#include "sync.h"

#define BUCKETS 1024

typedef struct mlock { /* manager's record of one lock */
    struct mlock *next;
    uint32_t      id;
    int           holder; /* rank, -1 if free */
    int          *queue;
    uint32_t      qhead, qlen, qcap;
} mlock_t;

typedef struct waiter { /* a local thread waiting for a grant */
    struct waiter   *next;
    uint32_t         id;
    _Atomic uint32_t granted;
} waiter_t;

typedef struct held {
    struct held *next;
    uint32_t     id;
    pthread_t    thread;
} held_t;

static mlock_t        *table[BUCKETS];
static pthread_mutex_t local_mtx = PTHREAD_MUTEX_INITIALIZER;
static waiter_t       *waiters;
static held_t         *helds;

static int lock_manager(uint32_t id) { return (int)(id % (uint32_t)sdsm_net_nprocs()); }

static mlock_t *mlock_get(uint32_t id)
{
    mlock_t **b = &table[id % BUCKETS];
    for (mlock_t *l = *b; l; l = l->next)
        if (l->id == id)
            return l;
    mlock_t *l = calloc(1, sizeof *l);
    if (!l)
        sdsm_fatal("out of memory creating lock %u", id);
    l->id = id;
    l->holder = -1;
    l->next = *b;
    *b = l;
    return l;
}

static void grant(mlock_t *l, int r)
{
    l->holder = r;
    sdsm_net_send(r, SDSM_MSG_LOCK_GRANT, 0, 0, &l->id, 4, NULL, 0);
}

static int on_req(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    memcpy(&id, p, 4);
    if (id > INT32_MAX || lock_manager(id) != sdsm_net_rank())
        return -EPROTO;
    mlock_t *l = mlock_get(id);
    if (l->holder < 0) {
        grant(l, src);
        return 0;
    }
    if (l->qlen == l->qcap) { /* grow the ring, unrolling it */
        uint32_t cap = l->qcap ? 2 * l->qcap : 8;
        int *q = malloc(cap * sizeof *q);
        if (!q)
            sdsm_fatal("out of memory queueing for lock %u", id);
        for (uint32_t i = 0; i < l->qlen; i++)
            q[i] = l->queue[(l->qhead + i) % l->qcap];
        free(l->queue);
        l->queue = q;
        l->qhead = 0;
        l->qcap = cap;
    }
    l->queue[(l->qhead + l->qlen++) % l->qcap] = src;
    return 0;
}

static int on_rel(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    memcpy(&id, p, 4);
    if (id > INT32_MAX || lock_manager(id) != sdsm_net_rank())
        return -EPROTO;
    mlock_t *l = mlock_get(id);
    if (l->holder != src)
        return -EPROTO;
    l->holder = -1;
    if (l->qlen) {
        int next = l->queue[l->qhead];
        l->qhead = (l->qhead + 1) % l->qcap;
        l->qlen--;
        grant(l, next);
    }
    return 0;
}

static int on_grant(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t id;
    memcpy(&id, p, 4);
    if (src != lock_manager(id))
        return -EPROTO;
    pthread_mutex_lock(&local_mtx);
    waiter_t *w = waiters, *first = NULL;
    for (; w; w = w->next) /* the list is newest first: take the oldest */
        if (w->id == id && !atomic_load(&w->granted))
            first = w;
    if (first) {
        atomic_store(&first->granted, 1);
        sdsm_wake_all(&first->granted);
    }
    pthread_mutex_unlock(&local_mtx);
    return first ? 0 : -EPROTO;
}

int sdsm_lock_held(int id)
{
    pthread_mutex_lock(&local_mtx);
    held_t *h = helds;
    while (h && !(h->id == (uint32_t)id && pthread_equal(h->thread, pthread_self())))
        h = h->next;
    pthread_mutex_unlock(&local_mtx);
    return h != NULL;
}

int sdsm_lock_acquire(int id)
{
    uint64_t t0 = sdsm_now_ns();
    waiter_t w = {.id = (uint32_t)id};
    held_t *h = malloc(sizeof *h);
    if (!h)
        return -ENOMEM;
    pthread_mutex_lock(&local_mtx);
    w.next = waiters;
    waiters = &w;
    pthread_mutex_unlock(&local_mtx);
    sdsm_net_send(lock_manager(w.id), SDSM_MSG_LOCK_REQ, 0, 0, &w.id, 4, NULL, 0);
    while (!atomic_load(&w.granted))
        sdsm_wait_change(&w.granted, 0);
    pthread_mutex_lock(&local_mtx);
    for (waiter_t **pp = &waiters; *pp; pp = &(*pp)->next)
        if (*pp == &w) {
            *pp = w.next;
            break;
        }
    *h = (held_t){.next = helds, .id = w.id, .thread = pthread_self()};
    helds = h;
    pthread_mutex_unlock(&local_mtx);
    sdsm_proto->acquire(SDSM_SYNC_LOCK);
    sdsm_stat_add(SDSM_ST_LOCK_ACQUIRES, 1);
    sdsm_stat_add(SDSM_ST_LOCK_WAIT_NS, sdsm_now_ns() - t0);
    return 0;
}

int sdsm_lock_release(int id, int flush)
{
    if (flush)
        sdsm_proto->release(SDSM_SYNC_LOCK, NULL, NULL);
    pthread_mutex_lock(&local_mtx);
    held_t *h = NULL;
    for (held_t **pp = &helds; *pp; pp = &(*pp)->next)
        if ((*pp)->id == (uint32_t)id && pthread_equal((*pp)->thread, pthread_self())) {
            h = *pp;
            *pp = h->next;
            break;
        }
    pthread_mutex_unlock(&local_mtx);
    if (!h)
        return -ENOENT;
    free(h);
    uint32_t u = (uint32_t)id;
    sdsm_net_send(lock_manager(u), SDSM_MSG_LOCK_REL, 0, 0, &u, 4, NULL, 0);
    return 0;
}

int sdsm_lock_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REQ, on_req);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_REL, on_rel);
    sdsm_msg_set_handler(SDSM_MSG_LOCK_GRANT, on_grant);
    return 0;
}
