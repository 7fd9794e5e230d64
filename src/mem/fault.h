/*
 * fault.h - the SIGSEGV handler.  It only decides whether a fault is ours
 * and hands it to the protocol; everything else goes to the handler that was
 * installed before us (or the default action: a real crash still crashes).
 */
#ifndef SDSM_MEM_FAULT_H
#define SDSM_MEM_FAULT_H

#include <stdint.h>

/* Protocol entry: 0 if the access may now be retried, -1 if the page is not shared memory. */
typedef int (*sdsm_fault_fn)(uint32_t pg, int is_write);

/* Also installs the crash report (crash.h) for the other signals. */
int sdsm_fault_install(sdsm_fault_fn fn);
void sdsm_fault_uninstall(void);

/* From an SA_SIGINFO handler's context: 1 the access was a write, 0 a
 * read, -1 this CPU does not say. */
int sdsm_fault_is_write(const void *ctx);

/*
 * Pages [first, first + n) are a guard below a stack in shared memory (an
 * OpenMP master's): an access there is an overflow, not a shared access.
 * The job stops with `what` (copied) and the address instead of the page
 * going to the protocol.  One guard per process; n = 0 removes it.  Call
 * before any thread can run on the stack.
 */
void sdsm_fault_guard(uint32_t first, uint32_t n, const char *what);

/* The same for a row of `count` stacks `stride` pages apart, each above n
 * guard pages from `first` on (the pthread stacks a rank runs threads on),
 * a second set beside the one above.  count = 0 removes it. */
void sdsm_fault_guards(uint32_t first, uint32_t n, uint32_t stride, uint32_t count, const char *what);
/* Nonzero if a guard page of either kind lies in [first, first + n). */
int sdsm_fault_guarded(uint32_t first, uint32_t n);

#endif
