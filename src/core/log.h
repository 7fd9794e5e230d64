/*
 * log.h - one-line diagnostics "sdsm: rank R: ..." on stderr, written with a
 * single write() so lines of different ranks do not interleave.
 */
#ifndef SDSM_CORE_LOG_H
#define SDSM_CORE_LOG_H

#include "config.h"

#include <stdarg.h>

extern int sdsm_log_rank; /* -1 until the rank is known */

void sdsm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sdsm_vlog(int level, const char *fmt, va_list ap);

#define sdsm_error_log(...) sdsm_log(SDSM_LOG_ERROR, __VA_ARGS__)
#define sdsm_warn(...)      sdsm_log(SDSM_LOG_WARN, __VA_ARGS__)
#define sdsm_info(...)      sdsm_log(SDSM_LOG_INFO, __VA_ARGS__)
#define sdsm_debug(...)     sdsm_log(SDSM_LOG_DEBUG, __VA_ARGS__)

/* Our own invariants only; never for data that came from the network. */
#define SDSM_ASSERT(c)                                                                                       \
    do {                                                                                                     \
        if (__builtin_expect(!(c), 0))                                                                       \
            sdsm_fatal("internal error: %s:%d: assertion '%s' failed", __FILE__, __LINE__, #c);              \
    } while (0)

/* Report and stop the job (implemented by the init layer, which knows the launcher). */
__attribute__((noreturn, format(printf, 1, 2))) void sdsm_fatal(const char *fmt, ...);

#endif
