/*
 * alloc.h - collective allocation of shared memory and home placement.
 *
 * Every rank runs the same deterministic allocator over the region's free
 * page ranges (first fit, freed ranges reused), so agreeing on the arguments
 * is enough to agree on the address.  Rank 0 checks the
 * agreement: each call sends (call number, operation, size, element size,
 * home) there and waits for the verdict, one round trip.  The caller starts
 * the collective call first (sdsm_coll_begin), whose record goes along.
 */
#ifndef SDSM_MEM_ALLOC_H
#define SDSM_MEM_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef struct sdsm_alloc_rec {
    uint32_t first, npages;
    size_t size, elem;
    int home; /* rank or SDSM_HOME_* */
    int live;
    int announce; /* home pages never write-protected: announced at every release (an
                          OpenMP master's stack: see sdsm_alloc_set_announce); its pages'
                          bits in sdsm_region.announce are set while it lives */
} sdsm_alloc_rec_t;

/*
 * Mark the live block at pg (every rank, right after allocating it) as one
 * whose home never write-protects its pages: once another rank holds a copy,
 * every release of the home announces them as written.  For memory the home
 * writes all the time from code that must not fault (an OpenMP master's
 * stack, written by the C library with its locks held), at the price of
 * refetches by the readers.
 */
int sdsm_alloc_set_announce(uint32_t pg);
/* (Is pg in such a block: sdsm_page_announced, page.h.) */

int sdsm_alloc_init(void);
/* Drop every block (finalize). */
void sdsm_alloc_fini(void);
/* Collective.  Returns the address or NULL with *err set (message logged by the caller). */
void *sdsm_alloc_collective(size_t size, size_t elem, int home, int *err, char *why, size_t whylen);
int sdsm_free_collective(void *p, char *why, size_t whylen);

/*
 * Non-collective: a block of this rank's local arena (home: this rank), or
 * NULL with *err and why set.  Any thread.  Freed only by this rank.
 */
void *sdsm_alloc_local_block(size_t size, int *err, char *why, size_t whylen);
int sdsm_free_local_block(void *p, char *why, size_t whylen);
/* Is a (from sdsm_alloc_find) a whole local arena rather than a collective block? */
int sdsm_alloc_is_arena(const sdsm_alloc_rec_t *a);

/*
 * Collective (sdsm_init, as SDSM_COLL_INIT): do all ranks have the program
 * and the libraries at the same addresses?  0, or SDSM_EMISMATCH with why
 * naming the first rank that differs from rank 0 and both sets.
 */
int sdsm_alloc_agree_addrs(uint64_t prog, uint64_t libc, uint32_t digest, char *why, size_t whylen);

/*
 * Collective, right after sdsm_init (every rank, before the program runs):
 * home the adopted data (page.h) as `home` says instead of at rank 0, if
 * every rank's copy of it is rank 0's.  0; SDSM_EMISMATCH (why says which
 * rank differs: the data stays at rank 0) or another failure.
 */
int sdsm_alloc_adopt_home(int home, char *why, size_t whylen);

/* Record slots [0, count), live or free (check ->live); the allocating thread only. */
uint32_t sdsm_alloc_count(void);
const sdsm_alloc_rec_t *sdsm_alloc_get(uint32_t i);
/* The live allocation holding pg, or NULL.  Safe in the fault handler. */
const sdsm_alloc_rec_t *sdsm_alloc_find(uint32_t pg);
/* Home of pg: a rank, or -1 (no home, not an error code) for a first-touch
 * page whose home is not known here or a page of no live allocation. */
int sdsm_page_home(uint32_t pg);
/*
 * Manager of a first-touch page (arbitrates the claim): runs of
 * SDSM_MGR_CHUNK pages, dealt out round robin.  One manager for a run lets a
 * claim take the pages after it that a sweep is about to touch, and lets its
 * answer carry the homes of the rest of the run (fetch.c).
 */
#define SDSM_MGR_CHUNK 64u
static inline int sdsm_page_manager(uint32_t pg, int nprocs)
{
    return (int)((pg / SDSM_MGR_CHUNK) % (uint32_t)nprocs);
}
/* The end (exclusive) of pg's manager run, inside the allocation a if given. */
static inline uint32_t sdsm_mgr_run_end(uint32_t pg, const sdsm_alloc_rec_t *a)
{
    uint64_t end = ((uint64_t)pg / SDSM_MGR_CHUNK + 1) * SDSM_MGR_CHUNK;
    if (a && end > (uint64_t)a->first + a->npages)
        end = (uint64_t)a->first + a->npages;
    return (uint32_t)end;
}

/* Free-range hook of the protocol (drop copies, twins, copysets). */
extern void (*sdsm_alloc_on_free)(uint32_t first, uint32_t n);

#endif
