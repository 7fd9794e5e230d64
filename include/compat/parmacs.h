/*
 * parmacs.h - run-time support for the PARMACS macros of parmacs.m4
 * (SPLASH-2/3 programs) on sdsm, in libsdsm_compat.  Programs do not call
 * these directly: the macros expand to them.
 *
 * A PARMACS process is an sdsm rank.  Every rank starts main(); at
 * MAIN_INITENV rank 0 goes on as the master and the others wait.  The k-th
 * CREATE(fn) starts fn on rank k with a copy of the master's globals as
 * they are at that moment (the program's own data and bss; objects the
 * program copies from shared libraries, such as stdout or environ, keep
 * the rank's own values), which is what fork() gave the original PARMACS
 * processes.  Shared data comes from G_MALLOC (sdsm_alloc_local on the
 * caller, usable everywhere once the pointer is known).  The master's
 * private heap (malloc) and stack are not copied.
 *
 * Locks, barriers and pauses are objects the macros declare (usually in a
 * G_MALLOC'd struct); LOCKINIT/ALOCKINIT/PAUSEINIT store a job-unique sdsm
 * id in the object itself, built from the initializing rank and a counter
 * of that rank, so two objects never share an id (no hashing, no
 * collisions), and LOCK on an object never initialized is an error.
 * Condition variables (CONDVARINIT) get ids the same way; one initialized
 * again in place keeps its id, as programs re-initialize the condition of
 * a recycled tree cell at every step.
 *
 * The fences (RELEASE_FENCE, ACQUIRE_FENCE, FULL_FENCE) are one acquire and
 * release of a reserved lock: this rank's shared writes before the fence
 * are visible to any rank after its next fence, and it sees theirs.
 *
 * A rank whose process has returned serves the master's next CREATE, with
 * a fresh copy of the globals: SPLASH-3 programs that CREATE(fn, n) in
 * several phases need only n ranks.
 */
#ifndef SDSM_COMPAT_PARMACS_H
#define SDSM_COMPAT_PARMACS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int id;
} sdsm_pm_lock_t;
typedef struct {
    int id, cond;
    volatile int flag;
} sdsm_pm_pause_t;
typedef struct {
    sdsm_pm_lock_t lock;
    volatile long sub, done;
} sdsm_pm_gs_t;
typedef struct {
    int unused;
} sdsm_pm_bar_t;
/* A plain integer (the id, and a check of it in the high half): headers
 * declare conditions before they include anything, where pthread_cond_t
 * came from <pthread.h>, so CONDVARDEC names a type needing no header. */
typedef unsigned long long sdsm_pm_cond_t;

void sdsm_pm_quiet(void);
void sdsm_pm_init(int argc, char **argv);
void sdsm_pm_create(void (*fn)(void), int count);
void sdsm_pm_wait_for_end(int n);
void sdsm_pm_main_end(int status) __attribute__((noreturn));
void *sdsm_pm_malloc(size_t size);
void sdsm_pm_free(void *p);
void sdsm_pm_lock_init(sdsm_pm_lock_t *l, int n);
void sdsm_pm_lock(sdsm_pm_lock_t *l);
void sdsm_pm_unlock(sdsm_pm_lock_t *l);
void sdsm_pm_barrier(sdsm_pm_bar_t *b, int n);
void sdsm_pm_pause_init(sdsm_pm_pause_t *p);
void sdsm_pm_pause_set(sdsm_pm_pause_t *p);
void sdsm_pm_pause_clear(sdsm_pm_pause_t *p);
void sdsm_pm_pause_wait(sdsm_pm_pause_t *p);
void sdsm_pm_cond_init(sdsm_pm_cond_t *c);
void sdsm_pm_cond_wait(sdsm_pm_cond_t *c, sdsm_pm_lock_t *l);
void sdsm_pm_cond_signal(sdsm_pm_cond_t *c, int all);
void sdsm_pm_fence(void);
void sdsm_pm_roi(int end);
unsigned long sdsm_pm_clock(void);

#ifdef __cplusplus
}
#endif

#endif
