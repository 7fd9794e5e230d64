/*
 * sdsm.h - the sdsm software distributed shared memory API.
 *
 * An sdsm program is SPMD: every process ("rank") runs the same main(), calls
 * sdsm_init() first and sdsm_finalize() last, and shares memory obtained from
 * the collective allocators.  Shared memory follows release consistency:
 * what a rank writes before a release (sdsm_unlock, sdsm_cond_wait,
 * sdsm_barrier) is visible to every rank after an acquire (sdsm_lock, return
 * from sdsm_cond_wait, sdsm_barrier) that the release happens-before, through
 * any chain of locks and barriers.  Programs free of data races therefore see
 * sequentially consistent results.  Several ranks may write different bytes
 * of the same page between two synchronizations; all writes survive.
 *
 * Start a job with `sdsmrun -n N ./prog args`; a program started without the
 * launcher runs as a job of one rank.
 *
 * Errors: every call that can fail returns 0 (or a documented non-negative
 * value) on success and a negative SDSM_E* code on failure.  By default a
 * failing call does not return: it prints "sdsm: rank R: <call>: <reason>"
 * and stops the whole job (like MPI's default error handler).  With
 * SDSM_ERRORS=return in the environment the calls return the code instead;
 * the allocators, which return a pointer, return NULL and leave the code in
 * sdsm_last_error().
 *
 * Threads: the calls may be made from several threads of a process.  Locks
 * are held by the calling thread; barriers and allocation are collective over
 * ranks and must be called by one thread per rank.  Any data-race-free
 * program gets the answer it would get with one process, whatever the number
 * of threads per rank, under hlrc and update.  Under ibec each thread's
 * critical sections are tracked apart (with the CPU's protection keys;
 * without them the critical sections of one rank's threads take turns; see
 * docs/guide/protocols.md on ibec).
 *
 * Collective calls (sdsm_barrier, sdsm_barrier_at, sdsm_alloc, sdsm_calloc,
 * sdsm_free, sdsm_bcast, sdsm_finalize) must be made by every rank in the
 * same order with the same arguments.  Ranks found in different collective
 * calls (a barrier made by only some ranks, a barrier against an allocation,
 * different managers or roots) stop the job at once, whatever SDSM_ERRORS
 * says, with a message naming the ranks and the calls; allocations that
 * differ only in their arguments return SDSM_EMISMATCH.  A call that waits
 * longer than SDSM_HANG_REPORT seconds (default 60) makes rank 0 print what
 * every rank is waiting for, unless a thread of the job computes (waits for
 * threads that compute are no hang); the job goes on.
 */
#ifndef SDSM_H
#define SDSM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SDSM_VERSION_MAJOR 0
#define SDSM_VERSION_MINOR 1
#define SDSM_VERSION_PATCH 0

#if defined(__GNUC__)
#define SDSM_API          __attribute__((visibility("default")))
#define SDSM_NORETURN     __attribute__((noreturn))
#define SDSM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SDSM_API
#define SDSM_NORETURN
#define SDSM_PRINTF(f, a)
#endif

/* Error codes (all negative, from -5001 down: beyond every errno value,
 * which Linux keeps below 4096).  sdsm_strerror() describes each. */
#define SDSM_OK        0
#define SDSM_EINVAL    (-5001) /* an argument is out of range or malformed */
#define SDSM_ENOINIT   (-5002) /* called before sdsm_init or after sdsm_finalize */
#define SDSM_ENOMEM    (-5003) /* out of memory or of shared address space */
#define SDSM_EMISMATCH (-5004) /* ranks passed different arguments to a collective call */
#define SDSM_ENOTHELD  (-5005) /* the lock is not held by the calling thread */
#define SDSM_EPEER     (-5006) /* a peer rank failed or closed its connection */
#define SDSM_EPROTO    (-5007) /* a malformed message was received */
#define SDSM_ENOTSUP   (-5008) /* not supported in this build or configuration */
#define SDSM_ESYS      (-5009) /* a system call failed (see the log) */
#define SDSM_ETIMEDOUT (-5010) /* a peer did not answer in time */
#define SDSM_ESTATE    (-5011) /* wrong state, e.g. sdsm_init called twice */
#define SDSM_EHELD     (-5012) /* the calling thread already holds the lock */
#define SDSM_ENOHOME   (-5013) /* first-touch page not touched by any rank yet */
#define SDSM_EAUTH     (-5014) /* connection failed the job-key authentication */

/* Home placement policies for sdsm_alloc/sdsm_calloc (or a rank number >= 0). */
#define SDSM_HOME_BLOCK       (-1) /* pages block-distributed over the ranks */
#define SDSM_HOME_CYCLIC      (-2) /* page i homed at rank i % nprocs */
#define SDSM_HOME_FIRST_TOUCH (-3) /* home = first rank that touches the page */

/*
 * Start the runtime.  Collective: every rank must call it, once, before any
 * other sdsm call.  Connects to the other ranks of the job (when started by
 * sdsmrun), installs the page-fault handler and reads the SDSM_* variables.
 * argc/argv may be NULL; they are accepted for symmetry with MPI_Init and are
 * left unchanged.  Blocks until all ranks have connected.
 * Returns 0, or SDSM_ESTATE if already initialized, SDSM_EPEER/SDSM_EAUTH/
 * SDSM_ESYS if the job could not be set up.
 */
SDSM_API int sdsm_init(int *argc, char ***argv);

/*
 * Stop the runtime.  Collective: acts as a final barrier (all shared writes
 * are completed), prints statistics when SDSM_STATS=1, then closes the
 * connections and every descriptor the runtime opened, and unmaps the
 * shared region.  Shared memory must not be used afterwards.  Returns 0, or
 * SDSM_ESTATE if this rank still held locks (which a rank waiting for them
 * would wait for forever): they are released first, and the job finalizes.
 */
SDSM_API int sdsm_finalize(void);

/*
 * This process's rank in [0, sdsm_nprocs()).  0 before sdsm_init; after
 * sdsm_finalize it still returns this process's rank (never an error), so
 * results can be printed by rank after the runtime is gone.
 */
SDSM_API int sdsm_rank(void);
/* Number of ranks in the job.  1 before sdsm_init; the job's size after sdsm_finalize. */
SDSM_API int sdsm_nprocs(void);

/*
 * Stop the whole job: prints "sdsm: rank R: abort(code): <message>", tells
 * the launcher (which stops every other rank and exits non-zero) and exits
 * with `code` (1 if code is 0).  Never returns.  Safe to call before init.
 */
SDSM_API SDSM_NORETURN void sdsm_abort(int code, const char *fmt, ...) SDSM_PRINTF(2, 3);

/* Wall-clock seconds from an arbitrary fixed point (monotonic clock). */
SDSM_API double sdsm_wtime(void);

/* A static English description of an SDSM_E* code (or "success"). */
SDSM_API const char *sdsm_strerror(int err);

/*
 * The SDSM_E* code of the calling thread's most recent failed sdsm call, or
 * 0 if none has failed.  Like errno, a successful call leaves it unchanged.
 * The way to learn why sdsm_alloc/sdsm_calloc returned NULL under
 * SDSM_ERRORS=return.  Thread-safe; usable before sdsm_init.
 */
SDSM_API int sdsm_last_error(void);

/*
 * Allocate `size` bytes of shared memory.  Collective: every rank calls it in
 * the same order with the same size and home, and gets the same address.
 * The block is page-aligned, and may be allocated at any point of the run.
 * `home` is a rank number or one of SDSM_HOME_*; the home of a page keeps its
 * master copy, so place pages at the rank that writes them most.
 * Fresh memory reads as zero.  Returns NULL on failure (with SDSM_ERRORS=
 * return; the code is then in sdsm_last_error()): SDSM_EINVAL for size 0, a
 * size above PTRDIFF_MAX (such as a negative int converted to size_t) or a
 * bad home, SDSM_ENOMEM when the shared address space (SDSM_HEAP_SIZE) has
 * no free range that large; a size/home mismatch between ranks is reported
 * as SDSM_EMISMATCH naming the ranks and their arguments.  Blocks for one
 * round trip.
 */
SDSM_API void *sdsm_alloc(size_t size, int home);

/*
 * Like sdsm_alloc(n * elem_size, home), zeroed.  Changes to this block are
 * propagated in whole elements of elem_size bytes (SMS's granularity), which
 * makes diffs of arrays of numbers compact.  Overflow of n * elem_size is an
 * error (SDSM_EINVAL).
 */
SDSM_API void *sdsm_calloc(size_t n, size_t elem_size, int home);

/*
 * Release a block from sdsm_alloc/sdsm_calloc.  Collective, same order on
 * every rank; includes a barrier.  Its memory is returned to the system and
 * its address range goes back to the shared heap, where a later allocation
 * may get it (a pointer into a freed block must not be used).  Returns 0, SDSM_EINVAL for a pointer that is not the start of
 * a live block, SDSM_EMISMATCH if ranks free different blocks.
 */
SDSM_API int sdsm_free(void *p);

/*
 * Allocate `size` bytes of shared memory on this rank alone (not
 * collective; any thread).  The block comes from this rank's local arena (a
 * part of the shared region that only this rank allocates from: half of
 * SDSM_HEAP_SIZE is split evenly between the ranks), its pages have this
 * rank as home (sdsm_set_home can move them), and it is page-aligned.  The
 * other ranks can use it as soon as they get the pointer, e.g. through
 * shared memory after a synchronization, like any shared data.  Fresh
 * memory reads as zero (a reused range is zeroed by ordinary writes of this
 * rank, which reach the others by the usual rules).  Returns NULL on
 * failure (code in sdsm_last_error()): SDSM_EINVAL for size 0 or above
 * PTRDIFF_MAX, SDSM_ENOMEM when this rank's arena has no free range that
 * large.  No message is sent.
 */
SDSM_API void *sdsm_alloc_local(size_t size);

/*
 * Free a block of sdsm_alloc_local.  Only the rank that allocated it may
 * free it (any of its threads), and no rank may use it afterwards; its
 * range is reused by later sdsm_alloc_local calls of this rank.  Returns 0,
 * SDSM_EINVAL for a pointer that is not the start of a live local block of
 * this rank (the message names the allocating rank if it is another).
 */
SDSM_API int sdsm_free_local(void *p);

/*
 * Collective: copy root's private (not shared) bytes [ptr, ptr + len) to the
 * same address in every rank (a collective counterpart of TreadMarks'
 * Tmk_distribute; a master that initialized its globals before the others
 * start).  Needs the program and
 * its libraries at the same addresses in every rank, which sdsmrun arranges
 * by turning address randomization off (see sdsm_check_addresses).  Every
 * rank passes the same len and root.  Includes three barriers.  Returns 0,
 * SDSM_EINVAL for a bad root or a NULL or shared ptr, SDSM_EMISMATCH if the
 * ranks' addresses differ or they pass different len/root.
 */
SDSM_API int sdsm_distribute(void *ptr, size_t len, int root);

/*
 * 0 if every rank has the program, the C library and sdsm at the same
 * addresses (compared once in sdsm_init), so a pointer to a global, a
 * function or stdout means the same thing in every rank.  Otherwise
 * SDSM_EMISMATCH (through the error handler) with a message naming a rank
 * that differs from rank 0 and both addresses.  sdsmrun starts ranks with
 * address randomization off unless SDSM_ASLR=1, and a rank started by
 * mpirun or srun turns it off for itself (it starts once more, before
 * main); where the system refuses that, `setarch -R` in front of the
 * program does it.
 */
SDSM_API int sdsm_check_addresses(void);

/*
 * The home rank of the page holding `addr`, or SDSM_EINVAL if addr is not in
 * a live shared block, or SDSM_ENOHOME for a first-touch page nobody has
 * touched yet (this case does not invoke the error handler).
 * May send one message (first-touch pages).
 */
SDSM_API int sdsm_home_of(const void *addr);

/*
 * Barrier over all ranks, and a full memory barrier: every shared write made
 * by any rank before it is visible to every rank after it.  Returns 0.
 */
SDSM_API int sdsm_barrier(void);

/*
 * Acquire lock `id` (any id in [0, 2^31)).  Locks need no creation.  Blocks
 * (sleeping) until granted; waiters are served first come, first served.
 * After return, all writes released under the lock, and everything that
 * happened before those releases, are visible.  Returns 0, SDSM_EINVAL for a
 * negative id, SDSM_EHELD if the calling thread already holds it.
 */
SDSM_API int sdsm_lock(int id);

/*
 * Release lock `id`: this rank's shared writes are made visible to the next
 * acquirer before the lock passes on.  Returns 0 or SDSM_ENOTHELD if the
 * calling thread does not hold it.
 */
SDSM_API int sdsm_unlock(int id);

/*
 * Wait on condition variable `cond` (any id in [0, 2^31)) with lock `lock`
 * held by the caller: atomically releases the lock and sleeps (no polling)
 * until sdsm_cond_signal/broadcast wakes it, then re-acquires the lock before
 * returning.  Mesa semantics: re-check the predicate in a loop.  Returns 0,
 * SDSM_ENOTHELD if `lock` is not held, SDSM_EINVAL for a negative id.
 */
SDSM_API int sdsm_cond_wait(int cond, int lock);

/* Wake one waiter of `cond` (FIFO), if any.  Returns 0 or SDSM_EINVAL. */
SDSM_API int sdsm_cond_signal(int cond);
/* Wake every waiter of `cond`.  Returns 0 or SDSM_EINVAL. */
SDSM_API int sdsm_cond_broadcast(int cond);

/* ---------------------------------------------------------------------
 * Placement, managers and explicit consistency control (SMS, SCASH).
 * Protocols: SDSM_PROTOCOL=hlrc (default) | update | ibec, or
 * `sdsmrun --protocol NAME`; docs/guide/protocols.md
 * and sdsm(7) say what each does.
 */

/*
 * Move the home (page manager) of the pages covering [addr, addr + len) to
 * `rank`, effective at the next barrier (SMS sms_change_page_manager).  Any
 * rank may call it; the moves of all ranks are applied together when the
 * next barrier completes (that barrier then takes one more round trip, and
 * the page contents travel from the old home to the new one).  Returns 0,
 * SDSM_EINVAL for a range outside live shared blocks or a bad rank.
 */
SDSM_API int sdsm_set_home(void *addr, size_t len, int rank);

/*
 * Barrier managed by rank `manager` (SMS sms_barrier(pid)); otherwise
 * identical to sdsm_barrier.  Every rank must name the same manager (else
 * the job stops, see above).
 */
SDSM_API int sdsm_barrier_at(int manager);

/*
 * Send this rank's changes to [addr, addr + len) to their homes now and wait
 * until they are applied there (SCASH's flush).  Does not synchronize with
 * anybody; a later acquire elsewhere is still needed to read them safely.
 */
SDSM_API int sdsm_flush(const void *addr, size_t len);

/*
 * Drop this rank's copies of [addr, addr + len) (changes are flushed first),
 * so the next access fetches the home's current contents (SCASH's fetch).
 */
SDSM_API int sdsm_refresh(void *addr, size_t len);

/*
 * Ask now for the pages of [addr, addr + len) this rank does not hold
 * (SCASH's fetch, as a hint): one request per run of consecutive pages at
 * the same home instead of one fault per page.  Returns at once without
 * waiting for the pages; a read of a page still on its way waits for it as
 * a fault would.  Pages this rank holds or is the home of are left alone.
 * Call it after the synchronization that makes the data current (a barrier,
 * a lock acquire): that synchronization invalidates a copy asked for before
 * it like any other, and the page is fetched again.
 * Same under every protocol, except ibec's check mode (SDSM_IBEC_CHECK=1),
 * where it does nothing: the check must see every read fault.  Returns 0
 * (also for len 0), SDSM_EINVAL for a range outside live shared blocks.
 */
SDSM_API int sdsm_prefetch(const void *addr, size_t len);

/*
 * Collective: make root's contents of [addr, addr + len), as they are when
 * root calls it, current on every rank, overriding concurrent writes of the
 * range by other ranks (writes they have not yet made visible are dropped, so
 * they never reach root's contents; a page root holds no copy of is read from
 * its home, where the home rank's own concurrent writes may show).  Includes
 * two barriers.  Every rank must pass the same range and root (else the job
 * stops, see above).
 */
SDSM_API int sdsm_bcast(void *addr, size_t len, int root);

/*
 * Compute threads (seed 001's multithreaded SDSM).  Each rank runs
 * SDSM_THREADS compute threads (default 1; sdsmrun --threads N), created
 * with sdsm_thread_create by the thread that called sdsm_init (or by other
 * compute threads) and joined before sdsm_finalize.  The threads of a rank
 * share its memory directly; coherence traffic flows only between ranks.
 * A rank runs at most SDSM_RUN_THREADS of them at once (default: the
 * host's CPUs divided by its ranks): a thread that has to wait for a page, a
 * lock, a barrier or a condition gives its run slot to a ready thread, so
 * one thread's network wait is another's compute time.
 *
 * Creating more than SDSM_THREADS threads on a rank, ending one while the
 * others wait for it in a barrier, or joining with fewer than SDSM_THREADS
 * created while the others wait in sdsm_barrier stops the job with a message
 * (whatever SDSM_ERRORS says), as a hang would be the alternative.
 * Collective calls other than sdsm_barrier (sdsm_alloc, sdsm_free,
 * sdsm_bcast, ...) stay per rank: make them from one thread of each rank,
 * e.g. before the compute threads start.
 */
typedef int sdsm_thread_t;

/*
 * Start compute thread fn(arg) in `group` (>= 0; sdsm_group_barrier meets
 * the group's threads of this rank).  Its job-wide id is rank x SDSM_THREADS
 * + the order of creation in this rank.  *t is its handle for
 * sdsm_thread_join.  Returns 0, SDSM_EINVAL (NULL argument, negative group).
 */
SDSM_API int sdsm_thread_create(sdsm_thread_t *t, int group, void *(*fn)(void *), void *arg);

/* Wait for compute thread t to end; *ret (if ret is not NULL) gets what
 * fn returned.  Returns 0, SDSM_EINVAL for a bad or already joined handle. */
SDSM_API int sdsm_thread_join(sdsm_thread_t t, void **ret);

/* The calling compute thread's job-wide id, 0..sdsm_thread_count()-1,
 * rank-major.  In a program without compute threads (SDSM_THREADS=1, none
 * created) the main thread is thread `rank`.  SDSM_ESTATE elsewhere. */
SDSM_API int sdsm_thread_id(void);

/* The job-wide number of compute threads: ranks x SDSM_THREADS. */
SDSM_API int sdsm_thread_count(void);

/*
 * Barrier of the compute threads of `group` in this rank only (seed 001's
 * mdsmBarrier): no coherence action, the threads share the rank's memory.
 * (sdsm_barrier called from compute threads is the barrier of every compute
 * thread of every rank, with the memory barrier: the last thread of a rank
 * to arrive takes part in the rank barrier for all of them.)  Returns 0,
 * SDSM_EINVAL if the caller is not a compute thread of that group.
 */
SDSM_API int sdsm_group_barrier(int group);

/*
 * Give the run slot up and wait until another running compute thread of
 * this rank has to wait (for a page, lock, barrier...) or none runs, then
 * run again (seed 001's mdsmCompWait: choose which thread computes first,
 * and let the others fill its network waits).  Returns 0, SDSM_ESTATE
 * outside a compute thread.
 */
SDSM_API int sdsm_comp_wait(void);

#ifdef __cplusplus
}
#endif

#endif /* SDSM_H */
