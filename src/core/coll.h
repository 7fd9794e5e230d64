/*
 * coll.h - what a collective call is, so ranks that are not in the same one
 * are told at once instead of waiting for each other forever.
 *
 * Every collective entry point (barrier, barrier_at, alloc/calloc, free,
 * bcast, finalize) numbers itself with the rank's collective sequence number
 * and records its arguments.  The record travels with every message the call
 * sends to a manager (barrier arrival, allocation request, or an
 * announcement to rank 0 when the barrier manager is another rank), and
 * whoever receives it checks that no other rank's call of the same number is
 * a different call.  In a correct program every collective synchronizes, so
 * ranks are at most one call apart and a small ring of records suffices.
 *
 * This lives in core (not sync) because both mem (allocation) and sync
 * (barriers) send it.
 */
#ifndef SDSM_CORE_COLL_H
#define SDSM_CORE_COLL_H

#include <stddef.h>
#include <stdint.h>

typedef enum sdsm_coll_kind {
    SDSM_COLL_NONE = 0,
    SDSM_COLL_BARRIER, /* arg0 manager, arg1 1 for sdsm_barrier_at (not compared) */
    SDSM_COLL_ALLOC,   /* arg0 size, arg1 element size, arg2 home (checked by the allocator) */
    SDSM_COLL_FREE,    /* arg0 address (checked by the allocator) */
    SDSM_COLL_BCAST,   /* arg0 address, arg1 length, arg2 root */
    SDSM_COLL_FINALIZE,
    SDSM_COLL_INIT, /* the address check at the end of sdsm_init (checked by the allocator) */
    SDSM_COLL_NKINDS
} sdsm_coll_kind_t;

typedef struct sdsm_coll {
    uint32_t kind; /* sdsm_coll_kind_t */
    uint32_t seq;  /* this rank's collective calls before this one */
    uint64_t arg[3];
} sdsm_coll_t;
_Static_assert(sizeof(sdsm_coll_t) == 32, "collective record on the wire");

/* Application thread: a collective call starts; its record becomes current. */
void sdsm_coll_begin(sdsm_coll_kind_t kind, uint64_t a0, uint64_t a1, uint64_t a2);
/* The record of this rank's current (or last) collective call (its own thread). */
const sdsm_coll_t *sdsm_coll_current(void);
/* The same, from any other thread (reports). */
void sdsm_coll_snapshot(sdsm_coll_t *out);
/*
 * Handlers: rank src sent record c.  0 if it agrees with every other rank's
 * call of the same number seen here; SDSM_EPROTO if the record is malformed.
 * A disagreement stops the job with a message naming both ranks and calls
 * (allocations of the same kind with different arguments are left to the
 * allocator, which can report them as SDSM_EMISMATCH).
 */
int sdsm_coll_check(int src, const sdsm_coll_t *c);
/* The same call (as the managers compare them: allocations of any size agree). */
int sdsm_coll_same(const sdsm_coll_t *a, const sdsm_coll_t *b);
/* "sdsm_alloc(size 4096, element 1, home 0) (collective #3)" */
void sdsm_coll_describe(const sdsm_coll_t *c, char *buf, size_t len);
/* Forget everything (init and finalize). */
void sdsm_coll_reset(void);

#endif
