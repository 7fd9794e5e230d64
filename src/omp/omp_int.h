/*
 * omp_int.h - libsdsm-omp, the OpenMP runtime that sdsmcc links into a
 * program: the libgomp ABI that gcc emits, served by sdsm's compute threads,
 * locks and barriers, with the program's globals, heap and master stack in
 * shared memory.
 *
 * It is a shared library (libsdsm-omp.so), so that its own variables stay
 * private to each process while the executable's writable data becomes
 * shared memory; only start/start.c (__wrap_main, no data) is linked into
 * the executable, from libsdsm-omp-start.a.  It sees libsdsm only through
 * its exported calls: the public API of sdsm.h and the few sdsm__omp_*
 * entry points, which exist for this library alone.
 */
#ifndef SDSM_OMP_INT_H
#define SDSM_OMP_INT_H

#include <stddef.h>

/* The program's entry, called by __wrap_main with the program's own main. */
int sdsm_omp_main(int argc, char **argv, char **envp, int (*real_main)(int, char **, char **));

/* --- memory side (mem.c, heap.c, override.c, fences.c) ----------------------------- */

/*
 * sdsm_init for an OpenMP program: the program's writable data (its
 * globals and statics) joins the shared region, with rank 0's image as the
 * initial contents, and the heap (malloc and friends called from the
 * program) is served from shared memory from then on.  Exits with a message
 * naming the rank on failure.
 */
void sdsm_omp_boot(int *argc, char ***argv);

/* The master thread's stack in shared memory (rank 0 runs main on it), or
 * NULL to run main on the thread's own stack; *len gets its size. */
void *sdsm_omp_master_stack(size_t *len);

/* The stack rank 0 starts its master thread on (shared memory, above the
 * master stack): the C library puts the thread's TLS at its top, so the
 * master's threadprivate variables are shared memory too. */
void *sdsm_omp_master_thread_stack(size_t *len);

/* The same bounds, with nothing set up (any thread may ask). */
void *sdsm_omp_master_stack_bounds(size_t *len);

/* The shared heap, after sdsm_init (heap.c): until then, and for calls
 * that do not come from the program's own code, malloc and friends are the
 * C library's (override.c). */
void sdsm_omp_heap_init(void);
int sdsm_omp_heap_ready(void);
/* Where the program's pages are homed (SDSM_OMP_HOME): a rank or SDSM_HOME_*. */
int sdsm_omp_heap_policy(void);
int sdsm_omp_home_spread(void);       /* SDSM_OMP_HOME spreads the homes (before sdsm_init) */
int sdsm_omp_heap_has(const void *p); /* p is in the shared heap */
void *sdsm_omp_heap_alloc(size_t n, int zero);
void *sdsm_omp_heap_aligned(size_t align, size_t n);
void *sdsm_omp_heap_realloc(void *p, size_t n); /* p in the heap, n may be 0 */
void sdsm_omp_heap_free(void *p);
size_t sdsm_omp_heap_usable(const void *p);

/* What the program's code (and that of the libraries sdsmcc compiled)
 * does for `#pragma omp flush` (fences.c): SDSM_OMP_FENCE_CODE, some
 * fence is left an instruction; SDSM_OMP_FENCE_CALLS, sdsmcc made some a
 * call of sdsm_omp_fence; 0, the program has no flush. */
#define SDSM_OMP_FENCE_CODE  1
#define SDSM_OMP_FENCE_CALLS 2
int sdsm_omp_program_fences(void);

/* After sdsm_init: sdsm_omp_fence publishes the rank's writes where that
 * is wanted (sdsm__omp_flush_mode); before sdsm_finalize: a fence again. */
void sdsm_omp_fence_start(void);
void sdsm_omp_fence_stop(void);

/* Nonzero if the code address `caller` is in the program (not a library). */
int sdsm_omp_from_program(const void *caller);

/* Nonzero if p is an address of the shared region (globals, heap, master
 * stack, sdsm_alloc'd memory). */
int sdsm_omp_is_shared(const void *p);
/* p is in the shared region's address range (no look-up of its blocks:
 * an address there outside a live block faults when touched). */
int sdsm_omp_in_region(const void *p);

#endif
