/*
 * fatal.h - stopping the job (see fatal.c).  sdsm_fatal() itself is
 * declared in log.h, beside the assertions that use it.
 */
#ifndef SDSM_CORE_FATAL_H
#define SDSM_CORE_FATAL_H

/* Log "<what>: <msg>", tell the launcher (if a notifier is set), exit. */
__attribute__((noreturn)) void sdsm_stop_job(int code, const char *what, const char *msg);

/* This rank cannot go on because rank `rank` went away (why: what the link
 * said): log it, tell the launcher it is only a consequence, exit. */
__attribute__((noreturn)) void sdsm_fatal_lost(int rank, const char *why);

/* Who tells the launcher: abort_fn(code, reason) before a deliberate stop,
 * lost_fn(rank) when this rank stops because rank `rank` went away. */
void sdsm_fatal_notify(void (*abort_fn)(int code, const char *reason), void (*lost_fn)(int rank));

#endif
