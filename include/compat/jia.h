/*
 * jia.h - the JIAJIA programming interface on sdsm (libsdsm_compat).
 *
 * JIAJIA programs are SPMD: every process runs main() between jia_init
 * and jia_exit, and allocation (jia_alloc*) and barriers are collective.
 * A process is an sdsm rank (`sdsmrun -n N prog`: no .jiahosts file).
 * JIAJIA's scope consistency is weaker than what sdsm's hlrc and update
 * protocols give, so a program correct under JIAJIA gives the same answer.
 * Errors stop the job with a message naming the call and the rank.
 */
#ifndef SDSM_COMPAT_JIA_H
#define SDSM_COMPAT_JIA_H

#ifdef __cplusplus
extern "C" {
#endif

/* This process's id, 0..jiahosts-1, and the number of processes (set by jia_init). */
extern int jiapid;
extern int jiahosts;

void jia_init(int argc, char **argv);
/* Final barrier, shut down, exit(0). */
void jia_exit(void) __attribute__((noreturn));

/*
 * Collective allocations, page-aligned, zeroed; they return the address as
 * an integer, as JIAJIA does (cast it to the element pointer).
 *   jia_alloc(size)                  all pages at one process; successive calls
 *                                    rotate the process (0, 1, 2, ...)
 *   jia_alloc2(size, block)          blocks of `block` bytes at processes 0, 1, ... cyclically
 *   jia_alloc2p(size, host)          all pages at `host`
 *   jia_alloc3(size, block, start)   blocks cyclically from process `start`
 *   jia_alloc4(size, blocks, n, start)  like jia_alloc3 with the block size of the
 *                                    k-th block blocks[k % n]
 * Homes are per page: a page two blocks share goes with the later block.
 * The cyclic layouts take effect at the next barrier (sdsm_set_home).
 */
unsigned long jia_alloc(int size);
/* JIAJIA's G_MALLOC allocator: the same as jia_alloc here. */
unsigned long jia_alloc1(int size);
unsigned long jia_alloc2(int size, int block);
unsigned long jia_alloc2p(int size, int host);
unsigned long jia_alloc3(int size, int block, int starthost);
unsigned long jia_alloc4(int size, int *blocks, int n, int starthost);

void jia_lock(int lockid);
void jia_unlock(int lockid);
void jia_barrier(void);
/* Synchronization only, like a barrier (here it is one). */
void jia_wait(void);
/*
 * Condition flags (0 <= cv < JIA_MAX_CVS): jia_setcv sets cv and wakes its
 * waiters, jia_waitcv returns once cv is set (at once if it is), jia_resetcv
 * clears it.  The setter's earlier writes are visible to the woken waiters.
 */
#define JIA_MAX_CVS 1024
void jia_setcv(int cv);
void jia_resetcv(int cv);
void jia_waitcv(int cv);
/* Seconds since jia_init. */
float jia_clock(void);
/* JIAJIA's statistics switches: sdsm keeps its counters all the time
 * (sdsmrun --stats prints them); these return 0. */
unsigned int jia_startstat(void);
unsigned int jia_stopstat(void);
/* JIAJIA's optimization switches (home migration, write vectors, ...):
 * accepted and ignored (sdsm_set_home moves homes explicitly). */
void jia_config(int what, int on);
#ifndef ON
#define OFF 0
#define ON  1
#endif
#define HMIG      0
#define ADWD      1
#define BROADCAST 2
#define LOADBAL   3
#define WVEC      4
/* Write-notice hints: not needed by sdsm's write detection. */
#define jia_wtnt(a, b)
#define jia_wtntw(a)
#define jia_wtntd(a)
#define jia_errexit jia_error
/* Not provided: jia_send, jia_recv, jia_reduce, jia_bcast, jia_divtask,
 * jia_loadcheck (use shared memory, sdsm_bcast, or MPI beside sdsm). */

/*
 * The Argonne (ANL) macros JIAJIA's header carries, for programs written
 * with them directly (SPLASH programs processed by m4 use parmacs.m4
 * instead, and define these themselves).  Lock variables get lock ids from
 * a per-process counter, so every process must run the same LOCKINITs in
 * the same order (as SPMD programs do); BARRIER is the global barrier and
 * G_MALLOC a collective allocation.
 */
#ifndef LOCKDEC
extern int jia_lock_index;
#define LOCKDEC(x)     int x;
#define LOCKINIT(x)    (x) = jia_lock_index++;
#define LOCK(x)        jia_lock(x);
#define UNLOCK(x)      jia_unlock(x);
#define ALOCKDEC(x, y) int x[y];
#define ALOCKINIT(x, y)                                                                                      \
    {                                                                                                        \
        int jia_i_;                                                                                          \
        for (jia_i_ = 0; jia_i_ < (y); jia_i_++)                                                             \
            (x)[jia_i_] = jia_lock_index++;                                                                  \
    }
#define ALOCK(x, y)  jia_lock((x)[y]);
#define AULOCK(x, y) jia_unlock((x)[y]);
#define BARDEC(x)    int x;
#define BARINIT(x)
#define BARRIER(x, y) jia_barrier();
#define EXTERN_ENV
#define MAIN_ENV
#define MAIN_INITENV(x, y)
#define MAIN_END
#define WAIT_FOR_END(x) jia_barrier();
#define G_MALLOC(x)     jia_alloc1((x));
#define CLOCK(x)        (x) = jia_clock();
#endif

/* Print the message naming this process and stop every process of the job. */
void jia_error(char *msg, ...) __attribute__((noreturn, format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
