/*
 * wptrack.h - which pages of the application view this process wrote, told
 * by the kernel without a fault of ours: userfaultfd's asynchronous write
 * protection (UFFD_FEATURE_WP_ASYNC) and the pagemap's PAGEMAP_SCAN (Linux
 * 6.7 and later).  A page write-protected this way stays writable for the
 * program: its first write is resolved inside the kernel (about a
 * microsecond, no signal, no mprotect), and a scan reports the pages written
 * since and protects them again in the same call.
 *
 * The home uses it for its hot pages (release.c): pages it rewrites every
 * interval stay writable, and each release announces only those the scan
 * finds written, instead of taking one write fault per page per interval or
 * announcing all of them blindly.
 */
#ifndef SDSM_MEM_WPTRACK_H
#define SDSM_MEM_WPTRACK_H

#include <stdint.h>

/* After the region is mapped: set the tracking up if SDSM_WP_TRACK allows it
 * and the kernel can; 0 either way (unavailable is not an error). */
int sdsm_wpt_init(void);
void sdsm_wpt_shutdown(void);
/* Is the tracking in use? */
int sdsm_wpt_on(void);
/*
 * Pages [first, first + n) (n <= 64): set written[i] to 1 for each page
 * written since it was last protected (or never protected), 0 otherwise,
 * and protect the written ones again.  Returns 0, or SDSM_ESYS if the scan failed:
 * then every written[i] is 1 and the tracking is off from now on (a warning
 * says why).
 */
int sdsm_wpt_scan(uint32_t first, uint32_t n, uint8_t *written);

#endif
