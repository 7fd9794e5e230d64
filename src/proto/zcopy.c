/*
 * zcopy.c - same-host zero-copy page reads (seed 003's remote memory
 * transfer, done with the kernel's help).
 *
 * Every rank's heap is a memory file.  A rank on the same host opens its
 * peer's file through /proc/<pid>/fd/<fd> (read-only; the kernel allows it
 * to a process that may inspect the peer, as it allows process_vm_readv)
 * and maps it read-only; from then on a fetch from that home still asks the
 * home - which checks and records everything it records today - but the
 * answer (FETCH_ZC) carries no bytes: the reader copies the pages from its
 * mapping of the home's file itself, straight into its runtime view.  What
 * is saved is the page crossing two sockets and the home's copy into its
 * send buffer; the request stays, because it is what orders the fetch.
 *
 * Copying from the mapping ran at 8.2-8.6 GB/s where pread, which looks
 * each page up in the file and copies it in the kernel, ran at 5.3 (runs of
 * 32 pages, not in the cache), and it takes no system call.  The copy is a
 * plain 16-byte loop, not memcpy: alone they are about as fast, but in fft
 * (P=2, medium, 7 interleaved pairs) the loop gave 6.39 s and 870 ms of
 * fault time (medians), memcpy 6.82 s and 1000 ms - like fft's own row
 * copies (apps/fft/fft_kernel.h), likely through what each leaves in the
 * cache.  A peer whose file cannot be mapped is read with pread.
 *
 * Why the copy read later is right.  The home serves at a point P, under
 * the page lock, where the asker enters the page's copyset (the home's
 * writable copy is write-protected there, as for a TCP reply).  The reader
 * copies later, so it may see the home's copy as it is some time after P:
 * newer, possibly with writes half done.  That is safe because every change
 * to the home's copy after P is followed by something that discards the
 * reader's copy or replaces it whole, delivered no earlier than the FETCH_ZC:
 *  - a diff applied at the home, or the home's own writes, at a lock
 *    release: the home invalidates every copy in the copyset (INVAL on the
 *    same connection as the reply, so after it);
 *  - the same at a barrier: the page is in the barrier's write notices;
 *    the reader drops its copy at barrier completion, or, if the reply was
 *    not read yet, marks the page STALE and drops the reply (fetch.c);
 *  - update protocol: the home pushes the whole page after the barrier;
 *  - a home move or sdsm_free: every copy becomes INVALID; a reply for a
 *    page that is no longer FETCHING is dropped.
 * A data-race-free program therefore never reads a byte from a copy that
 * differs from what a TCP reply sent at P would have held; only bytes
 * whose writes are not yet ordered before the reader's reads may differ.
 * What a FETCH must not overtake (SDSM_PGF_PENDING: the asker's own diffs)
 * still holds: the request travels behind the diffs as before, and the
 * copy is made even later.
 *
 * ibec is the exception: its home notes which bytes of its twin each reader
 * got (the serve hook, ibec.c) and makes its next diff carry them, and
 * update-style diffs never discard a copy.  A copy newer than what the hook
 * saw would escape that, so a home with a serve hook answers with the
 * bytes as before (serve.c).
 *
 * Failure is never fatal: a peer whose file cannot be opened (another user,
 * Yama or a container, another kernel) or read keeps TCP, with one info
 * line per rank.  The token in the page past the heap (mem/page.h) proves
 * the file opened is the peer's heap and not whatever that fd number is in
 * some other process with the same pid (another pid namespace).
 */
#include "proto/zcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home.h"

/*
 * A peer's heap: not known yet (its hello not handled), given up, or open.
 * A peer we want sends its hello before anything else on its connection,
 * so by the time its FETCH_ZC is handled the hello has been too: a fetch
 * may carry the flag before the hello arrives, and its answer still finds
 * the heap open or given up (then the pages are asked for again by TCP).
 */
enum { HEAP_UNKNOWN = -1, HEAP_OFF = -2 };

static struct {
    int n, me;
    uint8_t *want;       /* per peer: offer and accept zero-copy (the same on both sides) */
    _Atomic int *fd;     /* per peer: its heap (read-only fd), or HEAP_* */
    const uint8_t **map; /* per peer: its heap mapped read-only, or NULL (pread); set before fd */
    uint8_t token[SDSM_ZC_TOKEN];
    _Atomic int noted; /* the fallback was reported */
} zcopy;

/* why: a reason for the first failure (strerror for a system call's). */
static void note_fallback(int peer, const char *what, const char *why)
{
    if (atomic_exchange(&zcopy.noted, 1))
        return;
    sdsm_info("zero-copy: %s rank %d's heap failed (%s); pages from such ranks travel over TCP", what, peer,
              why);
}

/* Open peer's heap file and check it is the one that holds token.  The
 * descriptor, or (noted, note_fallback) SDSM_ESYS if it cannot be opened,
 * SDSM_ENOTSUP if the file there is not peer's heap. */
static int open_heap(int peer, uint32_t pid, int32_t fd, const uint8_t *token)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, (int)fd);
    int h = open(path, O_RDONLY | O_CLOEXEC);
    if (h < 0) {
        note_fallback(peer, "opening", strerror(errno));
        return SDSM_ESYS;
    }
    uint8_t got[SDSM_ZC_TOKEN];
    struct stat st;
    if (fstat(h, &st) || (size_t)st.st_size != sdsm_region.size + sdsm_region.page_size ||
        pread(h, got, sizeof got, (off_t)sdsm_region.size) != (ssize_t)sizeof got ||
        memcmp(got, token, sizeof got)) {
        note_fallback(peer, "identifying", "the file at that descriptor is not its heap");
        close(h);
        return SDSM_ENOTSUP;
    }
    return h;
}

static int on_hello(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t pid;
    int32_t fd;
    memcpy(&pid, p, 4);
    memcpy(&fd, p + 4, 4);
    if (src == zcopy.me || pid == 0 || pid > (uint32_t)INT32_MAX || fd < 0)
        return SDSM_EPROTO;
    if (!zcopy.want[src] || atomic_load(&zcopy.fd[src]) != HEAP_UNKNOWN)
        return 0; /* not wanted here (the ranks disagree on SDSM_ZEROCOPY), or said twice */
    int heap = open_heap(src, pid, fd, p + 8);
    if (heap >= 0) {
        void *m = mmap(NULL, sdsm_region.size, PROT_READ, MAP_SHARED | MAP_NORESERVE, heap, 0);
        zcopy.map[src] = m == MAP_FAILED ? NULL : m;
    }
    atomic_store_explicit(&zcopy.fd[src], heap >= 0 ? heap : HEAP_OFF, memory_order_release);
    return 0;
}

int sdsm_zcopy_init(const uint8_t *same_host)
{
    zcopy.n = sdsm_region.nprocs;
    zcopy.me = sdsm_region.rank;
    atomic_store(&zcopy.noted, 0);
    if (!(zcopy.want = calloc((size_t)zcopy.n, 1)) ||
        !(zcopy.fd = malloc((size_t)zcopy.n * sizeof *zcopy.fd)) ||
        !(zcopy.map = calloc((size_t)zcopy.n, sizeof *zcopy.map)))
        return SDSM_ENOMEM;
    for (int r = 0; r < zcopy.n; r++) {
        atomic_init(&zcopy.fd[r], HEAP_UNKNOWN);
        /* auto leaves out programs whose homes serve twins (OpenMP's):
         * a zero-copy reader copies the page some time after the home
         * served it, and may see a flag another rank's diff raised
         * meanwhile before the invalidation of its copy of the data
         * written before the flag arrives (docs/guide/openmp.md: 'Flags and flush'). */
        zcopy.want[r] = r != zcopy.me && !sdsm_region.host_shared &&
                        (sdsm_cfg.zerocopy == SDSM_ZC_ON || (sdsm_cfg.zerocopy == SDSM_ZC_AUTO && same_host &&
                                                             same_host[r] && !sdsm_home_twins_shared));
    }
    if (sdsm_region.host_shared) /* one file for the host, and the page past the heap is the barrier's */
        ;
    else if (getrandom(zcopy.token, sizeof zcopy.token, 0) != (ssize_t)sizeof zcopy.token ||
             pwrite(sdsm_region.memfd, zcopy.token, sizeof zcopy.token, (off_t)sdsm_region.size) !=
                 (ssize_t)sizeof zcopy.token) {
        /* Without a token nobody can check our heap: offer nothing. */
        memset(zcopy.want, 0, (size_t)zcopy.n);
        note_fallback(zcopy.me, "labelling", strerror(errno));
    }
    sdsm_msg_set_handler(SDSM_MSG_ZC_HELLO, on_hello);
    return 0;
}

void sdsm_zcopy_announce(void)
{
    uint8_t hello[8 + SDSM_ZC_TOKEN];
    uint32_t pid = (uint32_t)getpid();
    int32_t fd = sdsm_region.memfd;
    memcpy(hello, &pid, 4);
    memcpy(hello + 4, &fd, 4);
    memcpy(hello + 8, zcopy.token, SDSM_ZC_TOKEN);
    for (int r = 0; r < zcopy.n; r++)
        if (zcopy.want[r])
            sdsm_net_send(r, SDSM_MSG_ZC_HELLO, 0, 0, hello, sizeof hello, NULL, 0);
}

void sdsm_zcopy_fini(void)
{
    for (int r = 0; zcopy.fd && r < zcopy.n; r++) {
        int fd = atomic_exchange(&zcopy.fd[r], HEAP_OFF);
        if (fd >= 0)
            close(fd);
        if (zcopy.map && zcopy.map[r])
            munmap((void *)zcopy.map[r], sdsm_region.size);
    }
    free(zcopy.want);
    free((void *)zcopy.fd);
    free(zcopy.map);
    zcopy.want = NULL;
    zcopy.fd = NULL;
    zcopy.map = NULL;
}

unsigned sdsm_zcopy_flags(int home)
{
    return home >= 0 && home < zcopy.n && zcopy.want && zcopy.want[home] &&
                   atomic_load_explicit(&zcopy.fd[home], memory_order_acquire) != HEAP_OFF
               ? SDSM_FETCH_ZC
               : 0;
}

int sdsm_zcopy_offered(int peer) { return peer >= 0 && peer < zcopy.n && zcopy.want && zcopy.want[peer]; }

/* len bytes (a multiple of 64) from src to dst, both 16-byte aligned. */
static void copy_pages(uint8_t *dst, const uint8_t *src, size_t len)
{
#if defined(__SSE2__)
    for (size_t i = 0; i < len; i += 64) {
        __m128i a = _mm_load_si128((const __m128i *)(const void *)(src + i));
        __m128i b = _mm_load_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c = _mm_load_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i d = _mm_load_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_store_si128((__m128i *)(void *)(dst + i), a);
        _mm_store_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_store_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_store_si128((__m128i *)(void *)(dst + i + 48), d);
    }
#else
    memcpy(dst, src, len);
#endif
}

int sdsm_zcopy_read(int home, uint32_t pg, uint32_t count, uint8_t *dst)
{
    int fd = home >= 0 && home < zcopy.n && zcopy.fd
                 ? atomic_load_explicit(&zcopy.fd[home], memory_order_acquire)
                 : HEAP_OFF;
    if (fd == HEAP_UNKNOWN) /* its FETCH_ZC came before its hello: it broke the order */
        atomic_store(&zcopy.fd[home], HEAP_OFF);
    if (fd < 0)
        return SDSM_ENOTSUP; /* never opened, or given up */
    size_t len = (size_t)count << sdsm_region.shift, off = (size_t)pg << sdsm_region.shift;
    ssize_t got = (ssize_t)len;
    if (zcopy.map[home])
        copy_pages(dst, zcopy.map[home] + off, len);
    else
        got = pread(fd, dst, len, (off_t)off);
    if (got == (ssize_t)len) {
        sdsm_stat_add(SDSM_ST_ZC_PAGES, count);
        return 0;
    }
    int e = got < 0 ? errno : EIO;
    /* Give the heap up (only handlers read, one at a time: no pread is using it). */
    if ((fd = atomic_exchange(&zcopy.fd[home], HEAP_OFF)) >= 0)
        close(fd);
    note_fallback(home, "reading", strerror(e));
    return SDSM_ESYS;
}
