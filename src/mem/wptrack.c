/*
 * wptrack.c - written-page tracking by the kernel (see wptrack.h).
 *
 * One userfaultfd (user-mode only, so no privilege is needed) with
 * asynchronous write protection, registered over the application view in
 * write-protect mode.  Registering protects nothing: a page is tracked once
 * a scan has protected it.  The view's mprotect protections still work as
 * before (a page the protocol made read-only or inaccessible faults as
 * usual); the write protection lives in the page table entries, underneath.
 * Writes through the runtime view (the same memory, another mapping) are
 * not the program's and are not seen.  The uapi headers of older systems
 * lack the names this needs, so they are spelt here; the kernel decides at
 * run time, and where it cannot (before Linux 6.7, or a userfaultfd
 * refused) the tracking is off and the callers do without it.
 */
#include "mem/wptrack.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "mem/page.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

/* PAGEMAP_SCAN's argument and result (linux/fs.h, Linux 6.7). */
typedef struct {
    uint64_t start, end, categories;
} wpt_region_t;

typedef struct {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
} wpt_scan_arg_t;

#define WPT_PAGEMAP_SCAN    _IOWR('f', 16, wpt_scan_arg_t)
#define WPT_PAGE_IS_WRITTEN (1u << 1)
#define WPT_WP_MATCHING     (1u << 0) /* protect the pages reported */
#define WPT_CHECK_WPASYNC   (1u << 1) /* fail on memory not under asynchronous protection */

#define WPT_FEATURES (UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED | UFFD_FEATURE_WP_HUGETLBFS_SHMEM)

static struct {
    int uffd, pagemap;
    _Atomic int on;
} wpt = {-1, -1, 0};

int sdsm_wpt_on(void) { return atomic_load_explicit(&wpt.on, memory_order_relaxed); }

static int reg(uintptr_t start, size_t len)
{
    struct uffdio_register r = {.range = {.start = start, .len = len}, .mode = UFFDIO_REGISTER_MODE_WP};
    return len ? ioctl(wpt.uffd, UFFDIO_REGISTER, &r) : 0;
}

static int scan(uint32_t first, uint32_t n, wpt_region_t *vec, size_t cap, uint64_t flags)
{
    wpt_scan_arg_t a = {
        .size = sizeof a,
        .flags = flags,
        .start = (uintptr_t)sdsm_page_app(first),
        .end = (uintptr_t)sdsm_page_app(first + n),
        .vec = (uintptr_t)vec,
        .vec_len = cap,
        .category_mask = WPT_PAGE_IS_WRITTEN,
        .return_mask = WPT_PAGE_IS_WRITTEN,
    };
    return ioctl(wpt.pagemap, WPT_PAGEMAP_SCAN, &a);
}

static void off(const char *why)
{
    sdsm_debug("written-page tracking off: %s", why);
    sdsm_wpt_shutdown();
}

int sdsm_wpt_init(void)
{
    if (!sdsm_cfg.wp_track || !sdsm_region.npages)
        return 0;
    wpt.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (wpt.uffd < 0) {
        off("no userfaultfd");
        return 0;
    }
    struct uffdio_api api = {.api = UFFD_API, .features = WPT_FEATURES};
    if (ioctl(wpt.uffd, UFFDIO_API, &api) || (api.features & WPT_FEATURES) != WPT_FEATURES) {
        off("the kernel has no asynchronous write protection of shared memory");
        return 0;
    }
    /* The view: the adopted data (if any), a gap, the rest (page.c). */
    const sdsm_region_adopt_t *A = &sdsm_region_adopt;
    size_t skip = A->len ? A->len + A->gap : 0;
    uintptr_t app = (uintptr_t)sdsm_region.app;
    if (reg(app + skip, sdsm_region.size - skip) || reg(app, A->len)) {
        off("the region cannot be registered");
        return 0;
    }
    wpt.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    wpt_region_t v;
    if (wpt.pagemap < 0 || scan(0, 1, &v, 1, WPT_CHECK_WPASYNC) < 0) {
        off("no PAGEMAP_SCAN");
        return 0;
    }
    atomic_store(&wpt.on, 1);
    sdsm_stat_add(SDSM_ST_WPT_ON, 1);
    sdsm_debug("written-page tracking on");
    return 0;
}

void sdsm_wpt_shutdown(void)
{
    atomic_store(&wpt.on, 0);
    if (wpt.pagemap >= 0)
        close(wpt.pagemap);
    if (wpt.uffd >= 0)
        close(wpt.uffd); /* unregisters, and drops the protections */
    wpt.pagemap = wpt.uffd = -1;
}

int sdsm_wpt_scan(uint32_t first, uint32_t n, uint8_t *written)
{
    wpt_region_t vec[64];
    int got = -1;
    if (n <= 64 && sdsm_wpt_on())
        got = scan(first, n, vec, 64, WPT_WP_MATCHING | WPT_CHECK_WPASYNC);
    if (got < 0) {
        if (sdsm_wpt_on())
            sdsm_warn("written-page tracking stops (PAGEMAP_SCAN of %u pages: %s); hot home pages are "
                      "announced at every release from now on",
                      n, strerror(errno));
        atomic_store(&wpt.on, 0); /* the descriptors stay: another thread may be scanning */
        memset(written, 1, n);
        return SDSM_ESYS;
    }
    memset(written, 0, n);
    uintptr_t base = (uintptr_t)sdsm_page_app(first);
    for (int i = 0; i < got; i++)
        for (uint64_t a = vec[i].start; a < vec[i].end; a += sdsm_region.page_size)
            written[(a - base) >> sdsm_region.shift] = 1;
    return 0;
}
