/*
 * log.c - diagnostics.  Level comes from SDSM_LOG; the buffer lives on the
 * stack so logging is usable from the service thread at any time.
 */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int sdsm_log_rank = -1;

void sdsm_vlog(int level, const char *fmt, va_list ap)
{
    if (level > sdsm_cfg.log_level && level != SDSM_LOG_ERROR)
        return;
    int saved = errno; /* keep %m meaningful for the caller's format */
    char buf[1024];
    int n;
    if (sdsm_log_rank >= 0)
        n = snprintf(buf, sizeof buf, "sdsm: rank %d: ", sdsm_log_rank);
    else
        n = snprintf(buf, sizeof buf, "sdsm: ");
    errno = saved;
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    if (n >= (int)sizeof buf - 1)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
    (void)w;
    errno = saved;
}

void sdsm_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sdsm_vlog(level, fmt, ap);
    va_end(ap);
}
