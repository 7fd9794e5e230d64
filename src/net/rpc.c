/*
 * rpc.c - reply slots (see rpc.h).  A fixed table: open/close/lookup take one
 * mutex for a few instructions; waiting is on the slot's own counter.
 */
#include "rpc.h"

#include <pthread.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "core/wait.h"

#define SLOTS 4096u

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static sdsm_rpc_t *slot[SLOTS];
static uint32_t gen[SLOTS];
static uint32_t next_free;

uint32_t sdsm_rpc_open(sdsm_rpc_t *r, uint32_t expected)
{
    atomic_store(&r->pending, expected);
    r->status = 0;
    r->len = 0;
    pthread_mutex_lock(&mtx);
    for (uint32_t k = 0; k < SLOTS; k++) {
        uint32_t i = (next_free + k) % SLOTS;
        if (!slot[i]) {
            slot[i] = r;
            gen[i] = (gen[i] + 1) & 0xfffff;
            next_free = i + 1;
            pthread_mutex_unlock(&mtx);
            return gen[i] << 12 | i;
        }
    }
    pthread_mutex_unlock(&mtx);
    sdsm_fatal("more than %u requests in flight", SLOTS);
}

void sdsm_rpc_wait(sdsm_rpc_t *r) { sdsm_count_wait_zero(&r->pending); }

void sdsm_rpc_close(uint32_t id)
{
    pthread_mutex_lock(&mtx);
    if (slot[id % SLOTS] && gen[id % SLOTS] == id >> 12)
        slot[id % SLOTS] = NULL;
    pthread_mutex_unlock(&mtx);
}

int sdsm_rpc_reply(uint32_t id, int status, const void *data, size_t len)
{
    pthread_mutex_lock(&mtx);
    sdsm_rpc_t *r = slot[id % SLOTS];
    if (!r || gen[id % SLOTS] != id >> 12 || atomic_load(&r->pending) == 0) {
        pthread_mutex_unlock(&mtx);
        return SDSM_EPROTO;
    }
    if (status < 0 && r->status == 0)
        r->status = status;
    if (data && r->buf) {
        size_t n = len < r->cap ? len : r->cap;
        memcpy(r->buf, data, n);
        r->len = n;
    }
    pthread_mutex_unlock(&mtx);
    sdsm_count_done(&r->pending);
    return 0;
}
