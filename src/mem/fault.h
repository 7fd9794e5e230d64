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

int  sdsm_fault_install(sdsm_fault_fn fn);
void sdsm_fault_uninstall(void);

#endif
