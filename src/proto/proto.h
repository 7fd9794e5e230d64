/*
 * proto.h - the coherence protocol operations table.  The core calls the
 * selected protocol at faults, releases, acquires and barriers; protocols
 * keep their state to themselves.
 */
#ifndef SDSM_PROTO_PROTO_H
#define SDSM_PROTO_PROTO_H

#include <stddef.h>
#include <stdint.h>

typedef enum { SDSM_SYNC_LOCK, SDSM_SYNC_BARRIER } sdsm_sync_kind_t;

typedef struct sdsm_proto_ops {
    const char *name;
    int (*init)(void); /* install message handlers; before the service thread starts */
    /* Resolve an access fault on pg (any application thread).  0, or SDSM_EINVAL if pg is not in a
     * live shared block (mem/fault.c then passes the fault on). */
    int (*fault)(uint32_t pg, int is_write);
    /*
     * Make this rank's writes since its last release visible.  LOCK: to any
     * rank that acquires after this returns.  BARRIER: to the homes; the
     * pages written are returned as write notices (*pages valid until the
     * next release).  Blocks until the homes have acknowledged, except
     * via: the rank a barrier's arrival goes to next (the manager, or the
     * tree parent; -1 for none).  That rank reads our diffs before our
     * arrival on the same connection and applies them as it reads them, so
     * they go unacknowledged (SDSM_DIFF_NOACK): a barrier after writes to
     * pages homed there costs one round trip less.
     */
    int (*release)(sdsm_sync_kind_t kind, int via, const uint32_t **pages, uint32_t *n);
    /*
     * A quiet rank's publish (sync/quiet.c): its pending writes made
     * visible as a lock release makes them, from a thread of the runtime's
     * own, outside any synchronization of the program.  *written: pages
     * announced; *again: how many of them the previous publish announced
     * too (pages the program rewrites all along).  NULL: not supported
     * (ibec, whose writes are bound to locks).
     */
    int (*publish)(uint32_t *written, uint32_t *again);
    void (*acquire)(sdsm_sync_kind_t kind);
    /* Service thread, barrier completion: {u32 page, i32 writer (-1: several)}[n]. 0 or SDSM_EPROTO. */
    int (*barrier_done)(const uint8_t *pairs, uint32_t n);
    /* What this rank adds to the barrier's flags (ORed over all ranks). */
    uint32_t (*barrier_flags)(void);
    /* Application thread, when the barrier's flags say so: a second phase,
     * followed by one more barrier round (ibec forwards diffL here). */
    void (*barrier_second)(void);
    /* Service thread, after the epoch moved past the barrier (update pushes here). */
    void (*barrier_after)(const uint8_t *pairs, uint32_t n);
    /* Collective free of [first, first + n). */
    void (*free_range)(uint32_t first, uint32_t n);
    /* sdsm_flush (drop 0) and sdsm_refresh (drop 1) of [first, first + n). */
    int (*flush)(uint32_t first, uint32_t n, int drop);
    /* sdsm_prefetch of [first, first + n): ask for the pages this rank does
     * not hold without waiting for them. */
    void (*prefetch)(uint32_t first, uint32_t n);
    /*
     * Locks.  lock_stamp: what this rank has seen of lock id (ibec's per-lock
     * time stamp; 0 elsewhere).  release_lock: make the critical section's
     * writes available; may return a payload (malloc'd) for the lock manager
     * to hand to later acquirers with its stamp.  acquire_lock: apply what
     * the grant carried: {u32 stamp, u32 len, bytes}[] (0 or SDSM_EPROTO).
     */
    uint32_t (*lock_stamp)(int id);
    int (*release_lock)(int id, uint8_t **payload, size_t *len, uint32_t *stamp);
    int (*acquire_lock)(int id, const uint8_t *chain, size_t len);
    /*
     * 1: the protocol binds data to locks (the grant carries the lock's
     * payload), so every thread asks the manager itself: no rank-wide claim,
     * no hand-off between local threads.
     */
    int lock_data;
    /*
     * How many threads of a rank may be inside critical sections at once
     * (NULL: no limit).  ibec tracks each thread's critical section apart,
     * with a protection key each; without keys it has one, and the
     * critical sections of a rank's threads take turns.
     */
    int (*cs_slots)(void);
} sdsm_proto_ops_t;

extern const sdsm_proto_ops_t *sdsm_proto;
extern const sdsm_proto_ops_t sdsm_proto_hlrc, sdsm_proto_update, sdsm_proto_ibec;
/* One copy of the memory for every rank (a job on one host, SDSM_HOST_SHARE): host.c. */
extern const sdsm_proto_ops_t sdsm_proto_host;

/* Home of a first-touch page, asked of its manager without claiming it:
 * a rank or SDSM_ENOHOME. */
int sdsm_proto_home_query(uint32_t pg);

/* Atomic operations done at a page's home (atomic.c). */
enum {
    SDSM_AOP_LOAD,
    SDSM_AOP_STORE,
    SDSM_AOP_XCHG,
    SDSM_AOP_CAS,
    SDSM_AOP_ADD,
    SDSM_AOP_SUB,
    SDSM_AOP_AND,
    SDSM_AOP_OR,
    SDSM_AOP_XOR,
    SDSM_AOP_NAND,
    SDSM_AOP_COUNT
};
/*
 * op on the size-byte (1, 2, 4, 8) naturally aligned integer at addr, a
 * shared address, done at its page's home, sequentially consistent.  *old
 * gets the value before.  Returns 1, 0 for a compare-exchange that found
 * another value (then *old is it), or negative:
 *  - -EAGAIN, a signal and not an error (the one negated errno value left
 *    among proto's results): the home refused it (it moved at a barrier,
 *    or does not know yet that it won a first-touch claim); ask again,
 *    never through a lock, which would not be atomic against the home's;
 *  - an SDSM_E* code when this path cannot take it, for this address
 *    always: SDSM_ENOTSUP under ibec, SDSM_EINVAL for a bad op or size, a
 *    misaligned address or one outside live shared blocks, SDSM_ENOHOME
 *    for a first-touch page still homeless after a read; the caller locks
 *    instead.
 */
int sdsm_proto_atomic(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old);

/* Select by SDSM_PROTOCOL id and initialize (sdsm_proto_host instead
 * where the region is one copy for the host).  0 or negative. */
int sdsm_proto_select(int id);

#endif
