/*
 * crash.h - the one line a rank prints when the program crashes (crash.c).
 *
 *   sdsm: rank R: thread T (tid N) crashed: SIGSEGV at ADDR: WHAT; ip IP in FUNC+OFF (OBJ)
 *
 * WHAT says what the address is here: a null pointer, shared memory in no
 * live allocation, a live shared allocation the runtime did not serve (a
 * protocol bug), a stack guard (overflow), another thread's stack or
 * thread-local storage, read-only or protected memory, or nothing mapped
 * (another rank's private memory).
 */
#ifndef SDSM_MEM_CRASH_H
#define SDSM_MEM_CRASH_H

#include <signal.h>
#include <stdint.h>

/*
 * Report that `sig` (si, ctx: as given to an SA_SIGINFO handler) kills
 * this thread, then arrange for it to: the default action is restored, and
 * a signal that was sent rather than raised by an instruction is raised
 * again (it is delivered when the handler returns).  Async-signal-safe
 * (dladdr aside, which only takes the loader's lock).
 */
void sdsm_crash_report(int sig, const siginfo_t *si, const void *ctx);

/* The same for SIGBUS, SIGFPE, SIGILL and SIGABRT where their action is the
 * default one; an alternate signal stack and the ranges of the calling
 * thread (which runs main).  Returns 0 or SDSM_ESYS (logged). */
int sdsm_crash_install(void);
void sdsm_crash_uninstall(void);

/*
 * A compute thread (job-wide id tid) starts / is about to end: its stack,
 * the guard below it and its thread-local storage are recorded (so an
 * address in them can be named, also after the thread has gone), and it
 * gets an alternate signal stack, without which a stack overflow kills it
 * before any handler runs.
 */
void sdsm_crash_thread_enter(int tid);
void sdsm_crash_thread_leave(void);

/* The calling thread's thread-local storage as recorded: 0, or -1 (none). */
int sdsm_crash_my_tls(uintptr_t *lo, uintptr_t *hi);

/*
 * Thread tid of another rank has its thread-local storage at [lo, hi)
 * there (learned from it: the OpenMP master's, through the control block):
 * an address in it that faults here is named as that rank's private memory.
 */
void sdsm_crash_note_tls(int rank, int tid, uintptr_t lo, uintptr_t hi);

#endif
