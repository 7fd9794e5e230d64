/*
 * diff.h - twins and diffs.
 *
 * A diff lists the bytes of a page that differ from its twin as runs:
 * (varint gap from the end of the previous run, varint length, bytes).
 * Runs are exact to the byte by default, so ranks writing different bytes
 * of one page never overwrite each other; with a granularity g (from
 * sdsm_calloc's element size) every run covers whole elements, which makes
 * diffs of numeric arrays one run instead of many.
 *
 * A batch (the payload of a DIFF message) is a sequence of entries
 * { u32 page, u32 nbytes, runs[nbytes] }; nbytes 0 is a write notice without
 * data (the home already has the bytes).
 */
#ifndef SDSM_MEM_DIFF_H
#define SDSM_MEM_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define SDSM_DIFF_EAGER 1u /* DIFF flag: the home invalidates other copies before acking */
#define SDSM_DIFF_NOACK 2u /* DIFF flag: no acknowledgement wanted */
#define SDSM_DIFF_LOCK  8u /* DIFF flag: ibec diffL; the home keeps it to forward at the barrier */
/* DIFF flag: the home forwards it to the other copies (update, not invalidate). */
#define SDSM_DIFF_FORWARD 4u
/* DIFF flag: the pages stay held - nobody reads them here, fetches wait -
 * until the writer's LIFT of the hold's generation, flags >> 8 (a publish
 * to several homes, release.c); without EAGER (a barrier arrival over
 * several homes) also until this home's barrier completes. */
#define SDSM_DIFF_HOLD 16u

/* Upper bound of the encoded size of one page's diff. */
static inline size_t sdsm_diff_bound(size_t page_size) { return page_size + page_size / 2 + 32; }

/*
 * Encode the difference between twin and cur (page_size bytes each).
 * gran: element size (1 = bytes); phase: offset of this page's first byte
 * within its element (page offset in the allocation, modulo gran).
 * Returns the encoded length; *nruns and *ndata get run and byte counts.
 */
size_t sdsm_diff_encode(const uint8_t *twin, const uint8_t *cur, size_t page_size, size_t gran, size_t phase,
                        uint8_t *out, size_t *nruns, size_t *ndata);

/* Check that runs[len] stays inside a page of page_size bytes.  0 or SDSM_EPROTO. */
int sdsm_diff_check(const uint8_t *runs, size_t len, size_t page_size);

/* Apply checked runs to page.  Returns the number of data bytes written. */
size_t sdsm_diff_apply(uint8_t *page, const uint8_t *runs, size_t len);

/*
 * Walk checked runs one at a time: *off and *pos start at 0; each call
 * returns the next run's bytes (NULL after the last) with their offset in
 * the page in *at and their count in *n.
 */
const uint8_t *sdsm_diff_next(const uint8_t *runs, size_t len, size_t *off, size_t *pos, size_t *at,
                              size_t *n);

/* Walk a batch, checking every entry against npages and page_size.  0 or SDSM_EPROTO. */
int sdsm_diff_batch_check(const uint8_t *buf, size_t len, uint32_t npages, size_t page_size);

/*
 * Walk a lock's diff chain, {u32 stamp, u32 nbytes, batch[nbytes]}[] (the
 * ibec payload of LOCK_GRANT), checking every batch.  0 or SDSM_EPROTO.
 */
int sdsm_diff_chain_check(const uint8_t *chain, size_t len, uint32_t npages, size_t page_size);

#endif
