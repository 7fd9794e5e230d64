/*
 * sms.h - the SMS programming interface (Midorikawa and Iizuka) on sdsm
 * (libsdsm_compat).
 *
 * SMS programs are SPMD: every process runs main() between sms_startup and
 * sms_shutdown; allocation and barriers are collective.  A process is an
 * sdsm rank (`sdsmrun -n N prog`).  SMS's own consistency model, IBEC
 * (writes inside a critical section travel with its lock; everything else
 * becomes consistent at a barrier), is sdsm's ibec protocol: ask for it with
 * `sdsmrun --protocol ibec` or SDSM_PROTOCOL=ibec.  Without it the program
 * runs under hlrc, which makes visible at least what IBEC does, so a
 * program correct under IBEC gives the same answer.
 * Errors stop the job with a message naming the call and the rank.
 */
#ifndef SDSM_COMPAT_SMS_H
#define SDSM_COMPAT_SMS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Number of processes and this process's id, 0..sms_nproc-1 (set by sms_startup). */
extern int sms_nproc;
extern int sms_proc_id;

void sms_startup(int argc, char **argv);
/* Final barrier and shut down (the process goes on: return from main after it). */
void sms_shutdown(void);
/* Print "errmsg" naming this process and stop every process of the job. */
void sms_error(char *errmsg) __attribute__((noreturn));
/* Collective: size bytes of shared memory whose pages are managed (homed) by PageM_pid. */
void *sms_alloc(int size, int PageM_pid);
/* Collective: num items of itemsize bytes, zeroed; changes travel in whole items. */
void *sms_calloc(int num, int itemsize, int PageM_pid);
/* The pages of [adr, adr + size) move to page manager PageM_pid at the next barrier. */
void sms_change_page_manager(void *adr, int size, int PageM_pid);
/* Collective barrier managed by process BarrierM_pid (every process names the same one). */
void sms_barrier(int BarrierM_pid);
void sms_lock(int Lock_id);
void sms_unlock(int Lock_id);
/* Release Lock_id, wait for a signal of cond_id, re-acquire Lock_id (re-check in a loop). */
void sms_cond_wait(int cond_id, int Lock_id);
void sms_cond_signal(int cond_id);
void sms_cond_broadcast(int cond_id);

#ifdef __cplusplus
}
#endif

#endif
