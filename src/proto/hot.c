/*
 * hot.c - hot home pages (SDSM_HOME_HOT): home pages their home rewrites
 * every interval stay writable across releases, announced as written (or,
 * where the kernel tracks written pages, only when it saw them written).
 * release.c asks, per page of a release, whether one is kept open.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/config.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "mem/wptrack.h"
#include "proto/home.h"
#include "proto/home_int.h"

/*
 * Hot home pages (SDSM_HOME_HOT).  A home page others hold is write-protected
 * at every release so that the home's next write is seen, which costs a
 * fault (and an mprotect) per page per interval when the home rewrites the
 * same pages every interval (fft's transposed arrays, a stencil's boundary
 * rows).  A page written by its home in SDSM_HOME_HOT intervals in a row
 * (at most HOT_GAP intervals apart) stays writable and is announced as written at every release, like a page
 * of an announced block (alloc.h): readers fetch it again each interval,
 * which they would anyway if it is rewritten.  Every 16 intervals (staggered
 * by page) it is protected once more; one write fault in the next interval
 * makes it hot again, none leaves it protected, so a page the home stopped
 * writing costs readers at most 16 needless fetches.
 *
 * Where the kernel tracks written pages (mem/wptrack.h), a release asks it
 * which hot pages were written since the last one: only those are announced
 * (readers fetch nothing the home did not rewrite), and no periodic check
 * is needed; a hot page not written for HOT_CHECK intervals is protected as
 * usual again and stops being hot.
 */
#define HOT_ON    0x80u
#define HOT_CHECK 16u
/* A write this few intervals after the last continues the run (fft writes
 * its arrays every other interval).  Where the kernel tells which pages
 * were written, a page kept open costs its readers nothing in an interval
 * it was not written, so a longer gap is taken: NPB CG rewrites its
 * vectors once per pass of a loop with six barriers. */
#define HOT_GAP         4u
#define HOT_GAP_TRACKED HOT_CHECK

/* Not where homes serve twins (SDSM_HOME_TWINS): a page kept open takes no
 * write fault, so it is never twinned, and readers fetching it would see
 * the home's writes before its release (a flag before its data). */
static int hot_enabled(void)
{
    return sdsm_cfg.home_hot > 0 && sdsm_home_opens_ahead() && !sdsm_home_twins_shared;
}

void sdsm_home_hot_fault(uint32_t pg)
{
    if (!hot_enabled())
        return;
    uint16_t now = (uint16_t)atomic_load_explicit(&hs.interval, memory_order_relaxed);
    uint32_t streak = hs.hot[pg] & ~HOT_ON;
    if (hs.hot_last[pg] == now && streak)
        return; /* this interval counted already */
    uint32_t gap = sdsm_wpt_on() ? HOT_GAP_TRACKED : HOT_GAP;
    streak = (uint16_t)(now - hs.hot_last[pg]) <= gap && streak ? streak + 1 : 1;
    if (streak > 0x7f)
        streak = 0x7f;
    hs.hot_last[pg] = now;
    hs.hot[pg] = (uint8_t)(streak | (streak >= (uint32_t)sdsm_cfg.home_hot ? HOT_ON : 0));
}

int sdsm_home_hot(uint32_t pg) { return (hs.hot[pg] & HOT_ON) && hot_enabled(); }

void sdsm_home_hot_clear(uint32_t pg)
{
    if (hs.hot[pg])
        hs.hot[pg] = 0;
}

/* Page lock held, a release, pg a hot home page others hold: kept open
 * (1), or checked again this interval (0: it is protected as usual, and a
 * write in the next interval makes it hot again at once).  written: what
 * the kernel says (1 or 0), or -1 when it does not track. */
int sdsm_home_hot_keep(uint32_t pg, uint32_t interval, int written)
{
    if (written > 0)
        hs.hot_last[pg] = (uint16_t)interval;
    if (written >= 0 && (uint16_t)((uint16_t)interval - hs.hot_last[pg]) < HOT_CHECK)
        return 1;
    if (written < 0 && (interval + pg) % HOT_CHECK)
        return 1;
    hs.hot[pg] = (uint8_t)(sdsm_cfg.home_hot - 1 > 0x7f ? 0x7f : sdsm_cfg.home_hot - 1);
    hs.hot_last[pg] = (uint16_t)(interval - 1); /* a write this interval counts as the next in a row */
    return 0;
}

/* Locks of [first, first + m) held: for each hot or announced home page of
 * them, whether the kernel saw it written since the last release (runs of
 * such pages in one scan each); -1 for the others, or when the kernel does
 * not track. */
void sdsm_home_hot_written(uint32_t first, uint32_t m, int8_t *wr)
{
    memset(wr, -1, m);
    if (!sdsm_wpt_on())
        return;
    for (uint32_t k = 0; k < m;) {
        uint32_t e = k;
        while (e < m && sdsm_page(first + e)->state == SDSM_PG_READ_WRITE &&
               (sdsm_home_hot(first + e) || sdsm_page_announced(first + e)) &&
               sdsm_page_home(first + e) == hs.me)
            e++;
        if (e > k) {
            uint8_t got[SDSM_PAGE_LOCK_RUN];
            sdsm_wpt_scan(first + k, e - k, got);
            for (uint32_t j = k; j < e; j++)
                wr[j] = (int8_t)got[j - k];
        }
        k = e + 1;
    }
}
