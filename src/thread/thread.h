/*
 * thread.h - compute threads (seed 001): creation and join, job-wide ids,
 * the barrier of every compute thread of every rank (a local barrier whose
 * last arrival takes part in the rank barrier), group barriers, and the
 * checks that turn misuse (too many or too few threads, a thread leaving
 * while the others wait for it) into an error instead of a hang.
 *
 * Errors are returned as negative SDSM_E* codes with a message in the
 * caller's buffer; the API layer reports them.
 */
#ifndef SDSM_THREAD_THREAD_H
#define SDSM_THREAD_THREAD_H

#include <stddef.h>

/* Called once the job is up: per_rank compute threads per rank (SDSM_THREADS),
 * slots run at once (SDSM_RUN_THREADS, 0: CPUs / ranks_here, the ranks of this
 * host that run on its CPUs, this one included). */
void sdsm_thread_init(int rank, int nprocs, int per_rank, int slots, int ranks_here);

/* stack, stack_len: memory for the thread's whole stack, or NULL for the C
 * library's own; the C library puts the thread's TLS and descriptor at its
 * top (pthread_attr_setstack). */
int sdsm_thread_start(int *handle, int group, void *(*fn)(void *), void *arg, void *stack, size_t stack_len,
                      char *err, size_t errlen);
int sdsm_thread_wait(int handle, void **ret, char *err, size_t errlen);
/* Job-wide id of the calling compute thread, or a negative code. */
int sdsm_thread_self_id(char *err, size_t errlen);
int sdsm_thread_total(void);

/* sdsm_barrier from a compute thread: local barrier, the last arrival calls
 * rank_barrier() (the rank barrier with its memory barrier), then all go. */
int sdsm_thread_barrier(int (*rank_barrier)(void), char *err, size_t errlen);
int sdsm_thread_group_barrier(int group, char *err, size_t errlen);

/* True in a compute thread. */
int sdsm_thread_is_compute(void);
/* Compute threads created by this rank and not yet ended. */
int sdsm_thread_alive(void);
/* sdsm_finalize: 0, or an error if compute threads run or their number is wrong. */
int sdsm_thread_check_finalize(char *err, size_t errlen);

#endif
