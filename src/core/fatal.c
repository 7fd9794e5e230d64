/*
 * fatal.c - how the job ends when something cannot go on (the names of
 * the error codes are in status.c).  Bottom layer: every other layer may
 * stop the job, so this file knows none of them; whoever can tell the launcher (boot, wired
 * by the API layer at init) registers itself with sdsm_fatal_notify().
 */
#include "fatal.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "core/log.h"
#include "sdsm.h"

static void (*notify_abort)(int code, const char *reason);
static void (*notify_lost)(int rank, uint32_t silent_ms);

void sdsm_fatal_notify(void (*abort_fn)(int code, const char *reason),
                       void (*lost_fn)(int rank, uint32_t silent_ms))
{
    notify_abort = abort_fn;
    notify_lost = lost_fn;
}

void sdsm_stop_job(int code, const char *what, const char *msg)
{
    sdsm_log(SDSM_LOG_ERROR, "%s: %s", what, msg);
    char reason[4096];
    snprintf(reason, sizeof reason, "%s: %s", what, msg);
    if (notify_abort)
        notify_abort(code, reason);
    _exit((code & 0xff) ? code & 0xff : 1);
}

void sdsm_fatal(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sdsm_stop_job(1, "fatal", msg);
}

static __attribute__((noreturn)) void lost(int rank, const char *why, uint32_t silent_ms)
{
    /* Someone else failed first: tell the launcher this exit is only a
     * consequence, and give it time to see that rank's own death. */
    if (silent_ms)
        sdsm_log(SDSM_LOG_ERROR, "rank %d stopped responding: %s", rank, why);
    else
        sdsm_log(SDSM_LOG_ERROR, "lost connection to rank %d (%s): rank %d failed or was stopped", rank, why,
                 rank);
    if (notify_lost)
        notify_lost(rank, silent_ms);
    usleep(500000);
    _exit(1);
}

void sdsm_fatal_lost(int rank, const char *why) { lost(rank, why, 0); }

void sdsm_fatal_silent(int rank, const char *why, uint32_t silent_ms)
{
    lost(rank, why, silent_ms ? silent_ms : 1);
}
