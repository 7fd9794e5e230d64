/*
 * watch.h - the hang report (SDSM_HANG_REPORT) and the description of what
 * this rank is waiting for, which the launcher also asks for when its
 * --timeout fires.
 */
#ifndef SDSM_SYNC_WATCH_H
#define SDSM_SYNC_WATCH_H

#include <stddef.h>

int sdsm_watch_init(void);  /* handlers; before the service thread starts */
int sdsm_watch_start(void); /* the watchdog thread; after the transport is up */
void sdsm_watch_stop(void); /* before the transport stops */
/* One line: this rank's waits, held locks, managed locks and barrier.  In a
 * handler (it reads manager state).  Returns the length (< len). */
size_t sdsm_watch_describe(char *buf, size_t len);

#endif
