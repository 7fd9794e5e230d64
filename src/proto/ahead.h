/*
 * ahead.h - per-thread access streams, from which the fault path decides
 * how far to go ahead: pages to fetch before they are read (SDSM_PREFETCH)
 * and home pages to open before they are written (SDSM_WRITE_AHEAD); see
 * ahead.c.  Internal to src/proto.
 */
#ifndef SDSM_PROTO_AHEAD_H
#define SDSM_PROTO_AHEAD_H

#include <stdint.h>

typedef enum { SDSM_AHEAD_READ, SDSM_AHEAD_WRITE, SDSM_AHEAD_KINDS } sdsm_ahead_kind_t;

/* Largest stride (pages) taken for a pattern; a longer jump starts a stream. */
#define SDSM_AHEAD_STRIDE_MAX 1024

typedef struct sdsm_ahead {
    int32_t stride;  /* pages between consecutive accesses (+1 forward, -1 backward) */
    uint32_t win;    /* pages to take ahead along the stride (0: none) */
    uint32_t passed; /* pages the stream's previous window gave it that it went past
                      * without a fault: used */
} sdsm_ahead_t;

/*
 * This thread faulted (kind) on pg, a page of the block [lo, hi): the
 * stream it continues, or a new one.  The window doubles each time a stream
 * faults where its last window ended (up to cap pages); a fault anywhere
 * else starts again from nothing.
 */
sdsm_ahead_t sdsm_ahead_fault(sdsm_ahead_kind_t kind, uint32_t pg, uint32_t cap);
/* k pages were taken from pg along stride: the stream's next fault is
 * expected just past them. */
void sdsm_ahead_taken(sdsm_ahead_kind_t kind, uint32_t pg, int32_t stride, uint32_t k);

#endif
