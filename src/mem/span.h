/*
 * span.h - the free page ranges of the shared region.
 *
 * Allocation is collective: every rank runs the same sequence of takes and
 * gives, so this allocator must be a pure function of that sequence (no
 * addresses, no timing, no per-rank state).  It keeps the free ranges sorted
 * by first page and coalesced, and takes from the lowest range that fits
 * (first fit), so a program that never frees gets consecutive blocks, and
 * freed address space is handed out again.
 */
#ifndef SDSM_MEM_SPAN_H
#define SDSM_MEM_SPAN_H

#include <stdint.h>

typedef struct sdsm_span {
    uint32_t first, n;
} sdsm_span_t;

typedef struct sdsm_spans {
    sdsm_span_t *v; /* free ranges, sorted, never adjacent nor empty */
    uint32_t count, cap;
    uint64_t free_pages;
} sdsm_spans_t;

/* All of [0, npages) free, room for up to cap ranges.  0 or SDSM_ENOMEM. */
int sdsm_spans_init(sdsm_spans_t *s, uint32_t npages, uint32_t cap);
void sdsm_spans_fini(sdsm_spans_t *s);
/* Take n > 0 pages from the lowest range that holds them: 0 and *first, or SDSM_ENOMEM. */
int sdsm_spans_take(sdsm_spans_t *s, uint32_t n, uint32_t *first);
/*
 * Give [first, first + n) back, merged with free neighbours.  Returns 0, or
 * SDSM_EINVAL if any of it is already free (the caller's bookkeeping is wrong),
 * or SDSM_ENOMEM if the table of ranges is full; s is unchanged on error.
 */
int sdsm_spans_give(sdsm_spans_t *s, uint32_t first, uint32_t n);
/* Pages in the largest free range. */
uint32_t sdsm_spans_largest(const sdsm_spans_t *s);

#endif
