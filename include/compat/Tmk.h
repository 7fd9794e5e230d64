/*
 * Tmk.h - the TreadMarks programming interface on sdsm (libsdsm_compat).
 *
 * TreadMarks programs are SPMD: every process runs main(), calls
 * Tmk_startup first, and one process (usually 0) allocates shared memory
 * with Tmk_malloc and hands the pointer to the others with Tmk_distribute.
 * Here a process is an sdsm rank (start the job with `sdsmrun -n N prog`);
 * Tmk_malloc is sdsm_alloc_local (home: the allocating rank), and
 * Tmk_distribute's bytes reach the other processes at the next barrier.
 * TreadMarks' lazy release consistency is what sdsm's default protocol
 * (hlrc) and update give; ibec is weaker and not meant for these programs.
 * Errors stop the job with a message naming the call and the rank.
 */
#ifndef SDSM_COMPAT_TMK_H
#define SDSM_COMPAT_TMK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's id, 0..Tmk_nprocs-1, and the number of processes (set by Tmk_startup). */
extern unsigned Tmk_proc_id;
extern unsigned Tmk_nprocs;

/* Start (sdsm_init) and check that every process has the program at the same addresses. */
void Tmk_startup(int argc, char **argv);
/* Final barrier, shut down, exit(status). */
void Tmk_exit(int status) __attribute__((noreturn));
/* Shared memory from this process alone; other processes use it once they have the pointer. */
void *Tmk_malloc(size_t size);
/* Free a block of Tmk_malloc (on the process that allocated it). */
void Tmk_free(void *ptr);
/*
 * Copy this process's private bytes [ptr, ptr + size) (typically a global
 * holding a Tmk_malloc pointer) to the same address in every other
 * process; they arrive there by the next Tmk_barrier.  Called by one
 * process, usually 0 right after Tmk_malloc.  At most 4096 per run.
 */
void Tmk_distribute(const void *ptr, size_t size);
/* Barrier of all processes (the id is accepted and ignored: one barrier at a time). */
void Tmk_barrier(unsigned id);
/* Locks: any id below 2^31; the release makes this process's writes visible to the next acquirer. */
void Tmk_lock_acquire(unsigned id);
void Tmk_lock_release(unsigned id);

#ifdef __cplusplus
}
#endif

#endif
