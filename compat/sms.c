/*
 * sms.c - SMS (sms.h) on sdsm: one sdsm call each.  Sizes are ints in
 * SMS; a negative one is refused with a message rather than converted to a
 * huge size_t.
 */
#include "sms.h"

#include <stdlib.h>

#include <sdsm.h>

int sms_nproc = 1;
int sms_proc_id;

void sms_startup(int argc, char **argv)
{
    if (sdsm_init(&argc, &argv))
        exit(1);
    sms_nproc = sdsm_nprocs();
    sms_proc_id = sdsm_rank();
}

void sms_shutdown(void) { sdsm_finalize(); }

void sms_error(char *errmsg) { sdsm_abort(1, "sms_error: %s", errmsg ? errmsg : ""); }

void *sms_alloc(int size, int PageM_pid)
{
    if (size <= 0)
        sdsm_abort(1, "sms_alloc: size %d is not positive", size);
    return sdsm_alloc((size_t)size, PageM_pid);
}

void *sms_calloc(int num, int itemsize, int PageM_pid)
{
    if (num <= 0 || itemsize <= 0)
        sdsm_abort(1, "sms_calloc: %d items of %d bytes: both must be positive", num, itemsize);
    return sdsm_calloc((size_t)num, (size_t)itemsize, PageM_pid);
}

void sms_change_page_manager(void *adr, int size, int PageM_pid)
{
    if (size <= 0)
        sdsm_abort(1, "sms_change_page_manager: size %d is not positive", size);
    sdsm_set_home(adr, (size_t)size, PageM_pid);
}

void sms_barrier(int BarrierM_pid) { sdsm_barrier_at(BarrierM_pid); }
void sms_lock(int Lock_id) { sdsm_lock(Lock_id); }
void sms_unlock(int Lock_id) { sdsm_unlock(Lock_id); }
void sms_cond_wait(int cond_id, int Lock_id) { sdsm_cond_wait(cond_id, Lock_id); }
void sms_cond_signal(int cond_id) { sdsm_cond_signal(cond_id); }
void sms_cond_broadcast(int cond_id) { sdsm_cond_broadcast(cond_id); }
