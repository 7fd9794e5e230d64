/*
 * fatal.h - stopping the job (see fatal.c).  sdsm_fatal() itself is
 * declared in log.h, beside the assertions that use it.
 */
#ifndef SDSM_CORE_FATAL_H
#define SDSM_CORE_FATAL_H

#include <stdint.h>

/* Log "<what>: <msg>", tell the launcher (if a notifier is set), exit. */
__attribute__((noreturn)) void sdsm_stop_job(int code, const char *what, const char *msg);

/* This rank cannot go on because rank `rank` went away (why: what the link
 * said): log it, tell the launcher it is only a consequence, exit. */
__attribute__((noreturn)) void sdsm_fatal_lost(int rank, const char *why);

/* The same for a peer that went silent (no bytes for silent_ms, the peer
 * timeout): the launcher can name it as the rank that stopped responding. */
__attribute__((noreturn)) void sdsm_fatal_silent(int rank, const char *why, uint32_t silent_ms);

/* Who tells the launcher: abort_fn(code, reason) before a deliberate stop,
 * lost_fn(rank, silent_ms) when this rank stops because rank `rank` went away
 * (silent_ms > 0: it went silent for that long; 0: its link broke). */
void sdsm_fatal_notify(void (*abort_fn)(int code, const char *reason),
                       void (*lost_fn)(int rank, uint32_t silent_ms));

#endif
