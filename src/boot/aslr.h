/*
 * aslr.h - a rank started directly by mpirun or srun turns address
 * randomization off for itself, as sdsmrun does for the ranks it starts:
 * before main, the program executes itself once more with the same
 * arguments and environment (aslr.c).  SDSM_ASLR=1 keeps randomization.
 */
#ifndef SDSM_BOOT_ASLR_H
#define SDSM_BOOT_ASLR_H

/* What happened before main: the values of sdsm_aslr_state. */
typedef enum {
    SDSM_ASLR_UNTOUCHED,  /* not directly launched, SDSM_ASLR=1, or already off */
    SDSM_ASLR_REEXECUTED, /* turned off: this is the program's second start */
    SDSM_ASLR_REFUSED,    /* randomization is on and could not be turned off */
} sdsm_aslr_state_t;

sdsm_aslr_state_t sdsm_aslr_state(void);

#endif
