/*
 * coll.c - collective call records and the mismatch check (see coll.h).
 *
 * The check keeps, for the last RING sequence numbers, the first record seen
 * and who sent it.  Handlers run one at a time (the transport's progress
 * lock), so the ring needs no lock of its own.
 */
#include "coll.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"

#define RING 16

static sdsm_coll_t cur;
static uint32_t next_seq;
static pthread_mutex_t cur_mtx = PTHREAD_MUTEX_INITIALIZER; /* cur vs. reporters' snapshots */

static struct {
    sdsm_coll_t rec;
    int rank;
    int valid;
} ref[RING];

void sdsm_coll_reset(void)
{
    memset(&cur, 0, sizeof cur);
    memset(ref, 0, sizeof ref);
    next_seq = 0;
}

void sdsm_coll_begin(sdsm_coll_kind_t kind, uint64_t a0, uint64_t a1, uint64_t a2)
{
    pthread_mutex_lock(&cur_mtx);
    cur = (sdsm_coll_t){.kind = kind, .seq = next_seq++, .arg = {a0, a1, a2}};
    pthread_mutex_unlock(&cur_mtx);
}

const sdsm_coll_t *sdsm_coll_current(void) { return &cur; }

void sdsm_coll_snapshot(sdsm_coll_t *out)
{
    pthread_mutex_lock(&cur_mtx);
    *out = cur;
    pthread_mutex_unlock(&cur_mtx);
}

void sdsm_coll_describe(const sdsm_coll_t *c, char *buf, size_t len)
{
    char what[160];
    unsigned long long a0 = c->arg[0], a1 = c->arg[1];
    int a2 = (int)(int64_t)c->arg[2];
    switch (c->kind) {
    case SDSM_COLL_BARRIER:
        if (c->arg[1])
            snprintf(what, sizeof what, "sdsm_barrier_at(%llu)", a0);
        else
            snprintf(what, sizeof what, "sdsm_barrier() (manager %llu)", a0);
        break;
    case SDSM_COLL_ALLOC:
        if (a1 == 1)
            snprintf(what, sizeof what, "sdsm_alloc(size %llu, home %d)", a0, a2);
        else
            snprintf(what, sizeof what, "sdsm_calloc(size %llu, element %llu, home %d)", a0, a1, a2);
        break;
    case SDSM_COLL_FREE: snprintf(what, sizeof what, "sdsm_free(%#llx)", a0); break;
    case SDSM_COLL_BCAST:
        snprintf(what, sizeof what, "sdsm_bcast(%#llx, %llu bytes, root %d)", a0, a1, a2);
        break;
    case SDSM_COLL_FINALIZE: snprintf(what, sizeof what, "sdsm_finalize()"); break;
    case SDSM_COLL_INIT: snprintf(what, sizeof what, "sdsm_init()"); break;
    default: snprintf(what, sizeof what, "unknown collective %u", c->kind); break;
    }
    /* sdsm_init's address check is call 0, so the program's calls count from 1. */
    snprintf(buf, len, "%s (collective #%u)", what, c->seq);
}

int sdsm_coll_same(const sdsm_coll_t *a, const sdsm_coll_t *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case SDSM_COLL_BARRIER: return a->arg[0] == b->arg[0]; /* barrier == barrier_at(its manager) */
    case SDSM_COLL_ALLOC:
    case SDSM_COLL_FREE: return 1; /* the allocator compares the arguments and can return an error */
    case SDSM_COLL_FINALIZE:
    case SDSM_COLL_INIT: return 1;
    default: return memcmp(a->arg, b->arg, sizeof a->arg) == 0;
    }
}

int sdsm_coll_check(int src, const sdsm_coll_t *c)
{
    if (c->kind == SDSM_COLL_NONE || c->kind >= SDSM_COLL_NKINDS)
        return SDSM_EPROTO;
    __typeof__(ref[0]) *r = &ref[c->seq % RING];
    if (!r->valid || (int32_t)(c->seq - r->rec.seq) > 0) {
        r->rec = *c;
        r->rank = src;
        r->valid = 1;
        return 0;
    }
    if (r->rec.seq != c->seq || sdsm_coll_same(&r->rec, c))
        return 0; /* too old to compare (cannot happen in a synchronizing program), or agrees */
    char a[256], b[256];
    sdsm_coll_describe(&r->rec, a, sizeof a);
    sdsm_coll_describe(c, b, sizeof b);
    sdsm_fatal("collective mismatch: rank %d is in %s, rank %d in %s; every rank must make the "
               "same collective calls in the same order",
               r->rank, a, src, b);
}
