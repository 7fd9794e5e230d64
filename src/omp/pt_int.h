/*
 * pt_int.h - the pthreads side of libsdsm-omp (pthread.c: threads, keys,
 * once; pthread_sync.c: mutexes, conditions, barriers, rwlocks, spinlocks,
 * semaphores).  pthread.c's header comment has the design.
 */
#ifndef SDSM_PT_INT_H
#define SDSM_PT_INT_H

#include <stdint.h>
#include <time.h>

#pragma GCC visibility push(hidden)

/* sdsm lock (and condition) ids of the pthreads side, inside the runtime's
 * range (omp_rt.h, RT_ID_BASE): a condition id equals its lock's id. */
#define PT_LK_GLOBAL   (RT_ID_BASE + 3)         /* live count, keys */
#define PT_LK_REGISTRY (RT_ID_BASE + 4)         /* object address -> index */
#define PT_LK_RANK     (RT_ID_BASE + 0x5000000) /* + rank: its queue */
#define PT_LK_JOIN     (RT_ID_BASE + 0x6000000) /* + thread id % PT_JOIN_LOCKS */
#define PT_JOIN_LOCKS  4096
#define PT_LK_OBJ      (RT_ID_BASE + 0x8000000) /* + registry index: an object */
#define PT_OBJECTS     (1 << 17)                /* registry slots (objects per run) */

/* Nonzero in a program linked by sdsmcc -pthread (set before main). */
extern int pt_mode;

/* pthread.c, for main.c: collective set-up before the compute threads
 * start; a worker's life (it returns when main has ended); the end of main. */
void pt_start(void);
void pt_worker_loop(void);
void pt_finish(int status);

/* pthread.c: the calling thread's job-wide id (> 0; the owner of a
 * recursive mutex, a write-locked rwlock). */
int pt_self_id(void);

/* pthread_sync.c: an object's lock (and condition) id, from its address;
 * stops the job, naming `call`, for an object outside shared memory. */
int pt_obj_id(const void *obj, const char *what, const char *call);
void pt_registry_init(void *shared, int create);
size_t pt_registry_size(void);

/* The object's lock held: enter/leave, wait for a wake (0) or until
 * `abstime` on `clock` (ETIMEDOUT; abstime NULL: no limit). */
void pt_enter(int id, const char *call);
void pt_leave(int id, const char *call);
int pt_wait(int id, clockid_t clock, const struct timespec *abstime, const char *call);
void pt_wake(int id, int all, const char *call);

#pragma GCC visibility pop

#endif
