/*
 * rpc.h - matching replies to the application thread that waits for them.
 *
 * A waiter opens a slot saying how many replies it expects, puts the slot's
 * id in the request's seq field, and sleeps until the count reaches zero.
 * The service thread looks the id up when a reply comes; ids carry a
 * generation so a stale or forged id finds nothing (and is rejected).
 */
#ifndef SDSM_NET_RPC_H
#define SDSM_NET_RPC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sdsm_rpc {
    _Atomic uint32_t pending; /* replies still expected */
    int status;               /* 0, or the first negative status reported */
    void *buf;                /* optional reply buffer */
    size_t cap, len;
} sdsm_rpc_t;

uint32_t sdsm_rpc_open(sdsm_rpc_t *r, uint32_t expected);
void sdsm_rpc_wait(sdsm_rpc_t *r);
/* Expect k more replies (call before sending the requests). */
static inline void sdsm_rpc_expect(sdsm_rpc_t *r, uint32_t k) { atomic_fetch_add(&r->pending, k); }
void sdsm_rpc_close(uint32_t id);
/*
 * Service thread: one reply for id.  Copies up to cap bytes of data into the
 * waiter's buffer.  Returns 0, or SDSM_EPROTO for an unknown id (a reply
 * nobody waits for).
 */
int sdsm_rpc_reply(uint32_t id, int status, const void *data, size_t len);

#endif
