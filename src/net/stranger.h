/*
 * stranger.h - a rate-limited record of refused connections.
 *
 * Anyone who can reach a port can make us refuse connections as fast as they
 * can open them; a log line for each would flood the log and cost time.  So
 * each source address gets at most one line per interval, and that line
 * carries how many of its refusals went unreported since the previous one;
 * what is still unreported at the end is taken out with its count.
 *
 * Bookkeeping only, no I/O and no lock: shared by the runtime and the
 * launcher, which print the lines their own way from one thread at a time.
 */
#ifndef SDSM_NET_STRANGER_H
#define SDSM_NET_STRANGER_H

#include <stdint.h>

#define SDSM_STRANGER_SOURCES     32    /* addresses told apart; the rest share the last slot */
#define SDSM_STRANGER_INTERVAL_MS 10000 /* at most one line per address per interval */

typedef struct sdsm_stranger_src {
    uint32_t ip;       /* network order; 0 for the shared slot of all other addresses */
    uint32_t quiet;    /* refusals counted since the last line, without a line */
    int64_t logged_ms; /* when the last line about this address was allowed */
    const char *why;   /* reason of the latest refusal (a string that outlives us) */
} sdsm_stranger_src_t;

typedef struct sdsm_strangers {
    int n;
    sdsm_stranger_src_t src[SDSM_STRANGER_SOURCES];
} sdsm_strangers_t; /* zero-initialized = empty */

/*
 * Count one refusal of ip for why.  Returns 1 when the caller should print a
 * line now; *quiet is then the number of earlier refusals from ip that got no
 * line (0 on the first).  Returns 0 when this one is only counted.
 */
int sdsm_stranger_note(sdsm_strangers_t *t, uint32_t ip, const char *why, int64_t now_ms, uint32_t *quiet);

/*
 * Take the next address with refusals still unreported: copies it to *out,
 * resets its count and returns 1; returns 0 when every refusal was reported.
 */
int sdsm_stranger_take(sdsm_strangers_t *t, sdsm_stranger_src_t *out);

#endif
