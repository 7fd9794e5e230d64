/*
 * migrate.c - home migration to a page's single writer (JIAJIA's), hlrc.
 *
 * A page that one rank other than its home keeps writing costs that rank a
 * write fault, a twin and a diff in every interval, and its home a diff to
 * apply: an OpenMP program whose serial code touched every array first (so
 * rank 0 is the home of all of it), then whose parallel loops write each
 * rank's part.  Such a page moves its home to the writer at a barrier, with
 * the barrier's home moves (sdsm_set_home's machinery, control.c): the old
 * home sends the contents, every copy restarts from the new home.
 *
 * When: the writer asks (its arrival's moves, flagged as proposals) for a
 * page it wrote in this interval and was also the only writer of at the
 * last barrier that named the page; the manager keeps a proposal only if
 * the merged notices name the proposer as the page's only writer in this
 * interval too.  Two intervals in a row, not one: a page whose writers
 * alternate (a loop over rows, then one over columns) stays where it is.
 * Not for pages whose home never write-protects them (an OpenMP master's
 * stack, sdsm_alloc_set_announce): their home writes them without faults.
 */
#include <stdlib.h>

#include "core/log.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "proto/home.h"
#include "proto/home_int.h"

/* Page lock held, at every barrier that names pg (notice.c). */
void sdsm_home_note_writer(uint32_t pg, int writer)
{
    hs.solo[pg] = writer == hs.me && sdsm_page_home(pg) != hs.me;
}

uint32_t sdsm_home_pick_moves(const uint32_t *pages, uint32_t n, uint32_t **out)
{
    uint32_t k = 0;
    *out = NULL;
    if (!hs.migrate)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = pages[i];
        if (!hs.solo[pg] || sdsm_page_announced(pg))
            continue;
        int home = sdsm_page_home(pg);
        if (home < 0 || home == hs.me)
            continue;
        if (!*out && !(*out = malloc((size_t)n * sizeof **out))) /* only once one is found */
            sdsm_fatal("out of memory proposing home moves");
        (*out)[k++] = pg;
    }
    return k;
}
