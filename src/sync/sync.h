/*
 * sync.h - barriers, locks and condition variables over the transport.
 *
 * Managers: the barrier manager is SDSM_BARRIER_MANAGER (rank 0 by
 * default); lock and condition-variable ids are spread over the ranks
 * (id % nprocs).  Manager state lives in the service thread.
 */
#ifndef SDSM_SYNC_SYNC_H
#define SDSM_SYNC_SYNC_H

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "core/coll.h"
#include <stdint.h>

/* Install handlers; before the service thread starts.  host_of: per rank, its
 * host's number (the tree barrier's shape; NULL: one host). */
int sdsm_sync_init(const int *host_of);

int sdsm_barrier_run(void);
int sdsm_barrier_run_at(int manager);
/* Barriers run as a tree (SDSM_BARRIER, and the number of ranks for auto)? */
int sdsm_barrier_is_tree(void);
/* Handlers: what this rank, as barrier manager, waits for.  0 if nothing. */
int sdsm_barrier_describe(char *buf, size_t len);
/* Handlers: contended locks this rank manages (holder, waiters).  How many. */
int sdsm_lock_describe_managed(char *buf, size_t len);
/* The most bytes a barrier's release carries from its manager. */
#define SDSM_BARRIER_PAYLOAD_MAX 256
/* The next barrier of this rank carries p's len bytes to every rank, if
 * this rank manages it (else they are dropped); SDSM_EINVAL if too long. */
int sdsm_barrier_set_payload(const void *p, size_t len);
/* The payload the last barrier brought (at most cap bytes copied to out):
 * its length, 0 if none.  Valid until this rank's next barrier. */
size_t sdsm_barrier_payload(void *out, size_t cap);
/* The barrier manager of sdsm_barrier_run: SDSM_BARRIER_MANAGER. */
int sdsm_barrier_manager(void);
/*
 * The barrier in shared memory of a job on one host (hostbar.c): the bytes
 * its control block needs past the heap file's identity page, for nprocs
 * ranks; its mapping (0, or SDSM_ESYS; nothing unless the region is shared
 * by the host); whether it is on; one barrier (the manager's out_len bytes
 * reach every rank's in: their length is returned).
 */
size_t sdsm_hostbar_bytes(int nprocs);
int sdsm_hostbar_init(void);
void sdsm_hostbar_fini(void);
int sdsm_hostbar_on(void);
size_t sdsm_hostbar_run(int manager, const sdsm_coll_t *call, const void *out, uint32_t out_len, void *in);
/* As sdsm_barrier_describe, for the barrier in shared memory this rank manages. */
int sdsm_hostbar_describe(char *buf, size_t len);
/* More compute threads on this host than CPUs (waits yield instead of pausing). */
int sdsm_hostbar_crowded(void);
/*
 * Until the shared word *w moves away from old: poll as the runtime's other
 * waits do, then sleep in futex(2) (counted in *sleepers, waking every
 * 100 ms).  A wait past a second tells rank 0 the collective call this rank
 * is in (call, if not NULL), so that a rank in another kind of call is
 * reported, not waited for.  sdsm_host_wake wakes the sleepers after a move.
 */
void sdsm_host_wait(_Atomic uint32_t *w, uint32_t old, _Atomic uint32_t *sleepers, const sdsm_coll_t *call);
void sdsm_host_wake(_Atomic uint32_t *w, _Atomic uint32_t *sleepers);
/*
 * The host's stage of the tree barrier (hoststage.c, SDSM_BARRIER_SHM): the
 * block the host's lowest rank made, handed over at start-up in
 * sdsm_stage_fd (boot/share.c), is mapped by sdsm_stage_init.  A rank whose
 * tree parent is on its host (sdsm_stage_local) writes its arrival into its
 * slot (sdsm_stage_arrive: 0 if it does not fit, and the caller sends it)
 * and waits for the release there (sdsm_stage_wait_release: NULL if it
 * comes by message); the node gets its host's arrivals from
 * sdsm_stage_collect, once all have come, and writes the release with
 * sdsm_stage_release (0 if it does not fit: the caller sends it).
 */
extern int sdsm_stage_fd;
size_t sdsm_stage_bytes(int local);
int sdsm_stage_init(const int *host_of, int nprocs, int rank);
void sdsm_stage_fini(void);
int sdsm_stage_on(void);
int sdsm_stage_local(int r);
int sdsm_stage_ranks(void);
uint32_t sdsm_stage_gen(void);
int sdsm_stage_arrive(int me, const void *msg, size_t len);
void sdsm_stage_collect(int me, const sdsm_coll_t *call,
                        void (*each)(int rank, const void *body, size_t len));
int sdsm_stage_release(const void *p, size_t len);
/* Rank r (of this host) arrived in the stage and waits for its release. */
int sdsm_stage_arrived(int r);
const void *sdsm_stage_wait_release(uint32_t g, const sdsm_coll_t *call, size_t *len);
/* The lock table in the control block (hostlock.c), or NULL. */
void *sdsm_hostbar_locks(void);
/*
 * Locks in shared memory for a job on one host (hostlock.c): the table's
 * size; whether lock id lives there (0: the table is full, the managers'
 * messages take it); take and give it back (the caller keeps the record of
 * who holds what); describe the contended ones this rank would manage.
 */
size_t sdsm_hostlock_bytes(void);
int sdsm_hostlock_on(uint32_t id);
/* Returns the nanoseconds it waited (0: taken at once). */
uint64_t sdsm_hostlock_take(uint32_t id);
void sdsm_hostlock_give(uint32_t id);
int sdsm_hostlock_describe(char *buf, size_t len);
/* The locks this rank holds, appended to buf as sdsm_lock_held_list does
 * (before: how many it listed already); how many.  give_mine frees them
 * (sdsm_finalize's clean-up). */
int sdsm_hostlock_list_mine(char *buf, size_t len, int before);
void sdsm_hostlock_give_mine(void);
/*
 * A lock that is a futex word in the host's one copy of the memory (0 free,
 * 1 held, 2 held and maybe sleepers): a pthreads program's mutex, in the
 * mutex itself.  take polls, then sleeps (a compute thread's run slot
 * given up, the wait reported as lock report_id) until it has the word or
 * abs (on clock; NULL: no limit) has passed: ETIMEDOUT.  give frees it and
 * wakes one sleeper.
 */
int sdsm_hostword_take(_Atomic uint32_t *word, int64_t report_id, clockid_t clock,
                       const struct timespec *abs);
void sdsm_hostword_give(_Atomic uint32_t *word);
/*
 * The tree barrier's shape (topo.c): host_of[r] numbers rank r's host
 * (NULL: one host); the ranks of a host in a tree of fanout kids each, their
 * leaders in one of host_fanout; the parent of r in the tree rooted at root
 * (-1 for the root) and its children (*kids, valid until sdsm_topo_fini).
 */
int sdsm_topo_init(int n, const int *host_of, int fanout, int host_fanout);
void sdsm_topo_fini(void);
int sdsm_topo_parent(int r, int root);
/* How many hosts the job spans. */
int sdsm_topo_hosts(void);
int sdsm_topo_kids(int r, int root, const int **kids);
/* Queue a home move, announced at this rank's next barrier. */
int sdsm_barrier_add_move(uint32_t first, uint32_t count, int rank);
/* Manager of lock or condition id: spread over the ranks, avoiding the barrier manager. */
int sdsm_sync_manager(uint32_t id);
int sdsm_lock_acquire(int id);
/* Take lock id if this rank can have it within wait_ns: 0 taken, 1 not
 * (held or waited for by a thread of this rank, or not granted in time),
 * SDSM_ENOTSUP where a request cannot be left behind (one-copy host locks,
 * protocols whose grants carry data), or an SDSM_E* code. */
int sdsm_lock_try(int id, uint64_t wait_ns);
/* Release; with `flush` 0 the caller has already made its writes visible. */
int sdsm_lock_release(int id, int flush);
int sdsm_lock_held(int id); /* held by the calling thread? */
/* Locks held by any thread of this rank: how many, ids listed in buf. */
int sdsm_lock_held_list(char *buf, size_t len);
/* Release every lock any thread of this rank holds (finalize, after the error). */
void sdsm_lock_release_all(void);
int sdsm_cond_wait_run(int cond, int lock);
int sdsm_cond_signal_run(int cond, int all);

#endif
