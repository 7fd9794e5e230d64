/*
 * quiet.h - a quiet rank publishes its pending writes (quiet.c), so that
 * threads of other ranks spinning on a flag without a runtime call see it.
 */
#ifndef SDSM_SYNC_QUIET_H
#define SDSM_SYNC_QUIET_H

int sdsm_quiet_start(void);   /* after the transport is up; no-op where off */
void sdsm_quiet_stop(void);   /* before the final barrier */
int sdsm_quiet_running(void); /* nonzero while the publisher runs (flag support on) */

#endif
