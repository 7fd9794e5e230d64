/*
 * tmk.c - TreadMarks (Tmk.h) on sdsm.  Thin: every call is one sdsm call;
 * sdsm's error handler (abort by default) names the failing call and rank.
 */
#include "Tmk.h"

#include <stdlib.h>

#include <sdsm.h>

unsigned Tmk_proc_id;
unsigned Tmk_nprocs = 1;

void Tmk_startup(int argc, char **argv)
{
    if (sdsm_init(&argc, &argv))
        exit(1);
    /* Tmk_distribute hands pointers to globals around: the addresses must agree. */
    if (sdsm_check_addresses())
        exit(1);
    Tmk_proc_id = (unsigned)sdsm_rank();
    Tmk_nprocs = (unsigned)sdsm_nprocs();
}

void Tmk_exit(int status)
{
    sdsm_finalize();
    exit(status);
}

void *Tmk_malloc(size_t size) { return sdsm_alloc_local(size); }
void  Tmk_free(void *ptr) { sdsm_free_local(ptr); }
void  Tmk_distribute(const void *ptr, size_t size) { sdsm_distribute((void *)ptr, size, 0); }
void  Tmk_barrier(unsigned id) { (void)id; sdsm_barrier(); }
void  Tmk_lock_acquire(unsigned id) { sdsm_lock((int)id); }
void  Tmk_lock_release(unsigned id) { sdsm_unlock((int)id); }
