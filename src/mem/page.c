/*
 * page.c - the shared region (reservation, the two views, twins, metadata)
 * and the page state machine.
 *
 * Everything is reserved up front with MAP_NORESERVE and costs memory only
 * where touched, so the user never sizes a pool: a 1 GiB allocation touched
 * in ten places uses ten pages of memory and ten page descriptors.
 */
#include "page.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/status.h"
#include "core/wait.h"

sdsm_region_t sdsm_region;
pthread_mutex_t sdsm_page_stripes[SDSM_PAGE_STRIPES];
_Atomic uint32_t sdsm_page_gens[SDSM_PAGE_WAKE_BUCKETS];
_Atomic int sdsm_page_waiters[SDSM_PAGE_WAKE_BUCKETS];

static const struct {
    const char *name;
    int prot;
} states[SDSM_PG_NSTATES] = {
    [SDSM_PG_INVALID] = {"INVALID", PROT_NONE},
    [SDSM_PG_FETCHING] = {"FETCHING", PROT_NONE},
    [SDSM_PG_READ_ONLY] = {"READ_ONLY", PROT_READ},
    [SDSM_PG_READ_WRITE] = {"READ_WRITE", PROT_READ | PROT_WRITE},
};

/* legal[from][to]: 1 for every rank, 2 only at the home, 3 only elsewhere. */
static const uint8_t legal[SDSM_PG_NSTATES][SDSM_PG_NSTATES] = {
    [SDSM_PG_INVALID] = {[SDSM_PG_FETCHING] = 3, [SDSM_PG_READ_ONLY] = 2, [SDSM_PG_READ_WRITE] = 2},
    [SDSM_PG_FETCHING] = {[SDSM_PG_INVALID] = 1, [SDSM_PG_READ_ONLY] = 1},
    [SDSM_PG_READ_ONLY] = {[SDSM_PG_INVALID] = 3, [SDSM_PG_FETCHING] = 3, [SDSM_PG_READ_WRITE] = 1},
    [SDSM_PG_READ_WRITE] = {[SDSM_PG_INVALID] = 3, [SDSM_PG_READ_ONLY] = 1},
};

const char *sdsm_pstate_name(unsigned s) { return s < SDSM_PG_NSTATES ? states[s].name : "?"; }

int sdsm_page_transition_ok(unsigned from, unsigned to, int is_home)
{
    if (from >= SDSM_PG_NSTATES || to >= SDSM_PG_NSTATES)
        return 0;
    uint8_t l = legal[from][to];
    return l == 1 || (l == 2 && is_home) || (l == 3 && !is_home);
}

int sdsm_page_prot(sdsm_pstate_t st) { return states[st].prot; }

void sdsm_page_protect(uint32_t first, uint32_t n, sdsm_pstate_t st)
{
    if (mprotect(sdsm_page_app(first), (size_t)n << sdsm_region.shift, states[st].prot))
        sdsm_fatal("mprotect(%s) of %u page(s) at page %u: %m", states[st].name, n, first);
}

void sdsm_page_set(uint32_t pg, sdsm_pstate_t to, int is_home, int protect)
{
    sdsm_page_t *p = sdsm_page(pg);
    if (!sdsm_page_transition_ok(p->state, to, is_home))
        sdsm_fatal("internal error: page %u: illegal transition %s -> %s (%s)", pg,
                   sdsm_pstate_name(p->state), sdsm_pstate_name(to), is_home ? "home" : "remote");
    int change = states[p->state].prot != states[to].prot;
    p->state = (uint8_t)to;
    if (protect && change)
        sdsm_page_protect(pg, 1, to);
}

/*
 * The waiter counts itself under pg's lock, where it saw the state it waits
 * out; whoever changes that state does so under the same lock and calls
 * sdsm_page_wake after it, so the wake finds the count (or the waiter finds
 * the new state).  A bucket nobody waits on is then left alone: a run of
 * pages fetched by a rank's only thread costs a load per bucket, no atomic
 * write.
 */
void sdsm_page_wait(uint32_t pg)
{
    uint32_t b = pg % SDSM_PAGE_WAKE_BUCKETS;
    atomic_fetch_add(&sdsm_page_waiters[b], 1);
    uint32_t g = atomic_load(&sdsm_page_gens[b]);
    sdsm_page_unlock(pg);
    sdsm_wait_change(&sdsm_page_gens[b], g);
    atomic_fetch_sub(&sdsm_page_waiters[b], 1);
    sdsm_page_lock(pg);
}

void sdsm_page_wake(uint32_t first, uint32_t n)
{
    if (n > SDSM_PAGE_WAKE_BUCKETS)
        n = SDSM_PAGE_WAKE_BUCKETS; /* every bucket once */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t b = (first + i) % SDSM_PAGE_WAKE_BUCKETS;
        if (atomic_load(&sdsm_page_waiters[b]) > 0) {
            atomic_fetch_add(&sdsm_page_gens[b], 1);
            sdsm_wake_all(&sdsm_page_gens[b]);
        }
    }
}

void sdsm_page_mark_dirty(uint32_t pg)
{
    sdsm_page_t *p = sdsm_page(pg);
    if (p->flags & SDSM_PGF_DIRTY)
        return;
    p->flags |= SDSM_PGF_DIRTY;
    pthread_mutex_lock(&sdsm_region.dirty_mtx);
    sdsm_region.dirty[sdsm_region.ndirty++] = pg;
    pthread_mutex_unlock(&sdsm_region.dirty_mtx);
}

uint32_t sdsm_page_dirty_count(void)
{
    pthread_mutex_lock(&sdsm_region.dirty_mtx);
    uint32_t n = sdsm_region.ndirty;
    pthread_mutex_unlock(&sdsm_region.dirty_mtx);
    return n;
}

uint32_t sdsm_page_dirty_copy(uint32_t *out, uint32_t cap)
{
    pthread_mutex_lock(&sdsm_region.dirty_mtx);
    uint32_t n = sdsm_region.ndirty < cap ? sdsm_region.ndirty : cap;
    memcpy(out, sdsm_region.dirty, (size_t)n * sizeof *out);
    pthread_mutex_unlock(&sdsm_region.dirty_mtx);
    return n;
}

uint32_t sdsm_page_take_dirty(uint32_t *out)
{
    pthread_mutex_lock(&sdsm_region.dirty_mtx);
    uint32_t n = sdsm_region.ndirty;
    memcpy(out, sdsm_region.dirty, (size_t)n * sizeof *out);
    sdsm_region.ndirty = 0;
    pthread_mutex_unlock(&sdsm_region.dirty_mtx);
    return n;
}

int sdsm_copyset_add(uint32_t pg, int rank)
{
    sdsm_page_t *p = sdsm_page(pg);
    if (!p->copyset && !(p->copyset = calloc(sdsm_region.copyset_words, sizeof(uint64_t))))
        return SDSM_ENOMEM;
    p->copyset[rank / 64] |= 1ull << (rank % 64);
    return 0;
}

int sdsm_copyset_has(uint32_t pg, int rank)
{
    sdsm_page_t *p = sdsm_page(pg);
    return p->copyset && (p->copyset[rank / 64] >> (rank % 64)) & 1;
}

void sdsm_copyset_clear(uint32_t pg)
{
    sdsm_page_t *p = sdsm_page(pg);
    if (p->copyset)
        memset(p->copyset, 0, sdsm_region.copyset_words * sizeof(uint64_t));
}

static size_t announce_bytes(const sdsm_region_t *R)
{
    return ((size_t)R->npages + 63) / 64 * sizeof(uint64_t);
}

void sdsm_page_set_announce(uint32_t first, uint32_t n, int on)
{
    for (uint64_t pg = first; pg < (uint64_t)first + n; pg++) {
        uint64_t bit = 1ull << (pg % 64);
        if (on)
            atomic_fetch_or_explicit(&sdsm_region.announce[pg / 64], bit, memory_order_release);
        else
            atomic_fetch_and_explicit(&sdsm_region.announce[pg / 64], ~bit, memory_order_release);
    }
}

sdsm_region_adopt_t sdsm_region_adopt;
int sdsm_region_host_fd = -1;
size_t sdsm_region_host_tail;

static void *reserve(size_t len, int prot, int flags, int fd, void *at)
{
    void *p = mmap(at, len, prot, flags | MAP_NORESERVE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

/*
 * The adopted data: its current contents become the heap file's first
 * bytes, then the file is mapped over it.  Nothing may touch that data
 * between here and the fault handler's installation; the program's own
 * code has not run yet (libsdsm-omp, which calls this, keeps its variables
 * in its own shared library).
 */
static int map_adopted(sdsm_region_t *R)
{
    const sdsm_region_adopt_t *A = &sdsm_region_adopt;
    for (size_t done = R->host_shared ? A->len : 0; done < A->len;) {
        ssize_t w = pwrite(R->memfd, (const uint8_t *)A->start + done, A->len - done, (off_t)done);
        if (w <= 0) {
            sdsm_error_log("cannot copy the program's data into the shared heap file: %m");
            return SDSM_ESYS;
        }
        done += (size_t)w;
    }
    if (mmap((void *)A->start, A->len, PROT_NONE, MAP_SHARED | MAP_FIXED, R->memfd, 0) == MAP_FAILED) {
        sdsm_error_log("cannot map the program's data at %#lx into the shared region: %m",
                       (unsigned long)A->start);
        return SDSM_ESYS;
    }
    return 0;
}

/* The application view: one reservation at base, or (adopted data) the
 * data, a hole for the brk heap, and the rest. */
static int map_app(sdsm_region_t *R, uintptr_t base, size_t size)
{
    const sdsm_region_adopt_t *A = &sdsm_region_adopt;
    size_t skip = A->len ? A->len + A->gap : 0;
    void *want = (void *)(base + skip);
    uint8_t *at = mmap(want, size - skip, PROT_NONE, MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
                       R->memfd, (off_t)skip);
    at = at == MAP_FAILED ? NULL : at;
    if (at && at != (uint8_t *)(base + skip)) {
        /* A kernel without MAP_FIXED_NOREPLACE takes it as a hint; elsewhere
         * the ranks would not share addresses. */
        munmap(at, size - skip);
        at = NULL;
        errno = EEXIST;
    }
    if (!at) {
        sdsm_error_log("cannot map the shared region at %#lx (%zu bytes): %m; set SDSM_HEAP_BASE "
                       "or SDSM_HEAP_SIZE",
                       (unsigned long)(base + skip), size - skip);
        return SDSM_ESYS;
    }
    if (skip && map_adopted(R)) {
        munmap(at, size - skip);
        return SDSM_ESYS;
    }
    R->app = (uint8_t *)base;
    return 0;
}

/* The heap file: rank 0's (sdsm_region_host_fd), which must be as large as
 * ours would be, or a new one. */
static int open_file(sdsm_region_t *R)
{
    /* One page past the heap holds the region's identity (page.h). */
    size_t len = R->size + R->page_size + sdsm_region_host_tail;
    if (sdsm_region_host_fd >= 0) {
        struct stat st;
        R->memfd = sdsm_region_host_fd;
        R->host_shared = 1;
        sdsm_region_host_fd = -1;
        if (fstat(R->memfd, &st) == 0 && (size_t)st.st_size == len)
            return 0;
        sdsm_error_log("rank 0's shared heap file is %lld bytes, not %zu: the ranks were given different "
                       "SDSM_HEAP_SIZE or SDSM_PAGE_SIZE",
                       (long long)st.st_size, len);
        close(R->memfd);
        return SDSM_EINVAL;
    }
    R->memfd = memfd_create("sdsm-heap", MFD_CLOEXEC);
    if (R->memfd < 0 || ftruncate(R->memfd, (off_t)len)) {
        sdsm_error_log("cannot create the %zu-byte shared heap file: %m", R->size);
        if (R->memfd >= 0)
            close(R->memfd);
        return SDSM_ESYS;
    }
    return 0;
}

int sdsm_region_init(size_t size, size_t page_size, uintptr_t base, int rank, int nprocs)
{
    sdsm_region_t *R = &sdsm_region;
    memset(R, 0, sizeof *R);
    for (int i = 0; i < SDSM_PAGE_STRIPES; i++)
        pthread_mutex_init(&sdsm_page_stripes[i], NULL);
    pthread_mutex_init(&R->dirty_mtx, NULL);
    R->size = size;
    R->page_size = page_size;
    R->shift = (unsigned)__builtin_ctzl(page_size);
    R->npages = (uint32_t)(size / page_size);
    R->rank = rank;
    R->nprocs = nprocs;
    R->copyset_words = ((size_t)nprocs + 63) / 64;
    int rc = open_file(R);
    if (rc)
        return rc;
    rc = map_app(R, base, size);
    if (rc) {
        close(R->memfd);
        return rc;
    }
    R->rt = reserve(size, PROT_READ | PROT_WRITE, MAP_SHARED, R->memfd, NULL);
    R->twin = reserve(size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
    R->pages = reserve((size_t)R->npages * sizeof(sdsm_page_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
    R->dirty = reserve((size_t)R->npages * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
    R->announce = reserve(announce_bytes(R), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, NULL);
    if (!R->rt || !R->twin || !R->pages || !R->dirty || !R->announce) {
        sdsm_error_log("cannot reserve the runtime views of the shared region: %m");
        return SDSM_ENOMEM;
    }
    return 0;
}

static void map_private(uint8_t *at, size_t len, int fd, size_t off)
{
    if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd, (off_t)off) ==
        MAP_FAILED)
        sdsm_warn("cannot give this rank a private copy of the shared data at %p at finalize (%m): "
                  "writes after finalize reach the other ranks of the host",
                  (void *)at);
}

void sdsm_region_fini(void)
{
    sdsm_region_t *R = &sdsm_region;
    if (!R->app)
        return;
    if (sdsm_region_adopt.len) {
        /* The program's data (and heap) stay usable by what runs after
         * finalize (exit handlers, destructors), with this rank's last
         * copy of them; the mapping outlives the file descriptor. */
        const sdsm_region_adopt_t *A = &sdsm_region_adopt;
        size_t skip = A->len + A->gap;
        if (R->host_shared) {
            /* Private from here: what one rank's exit handlers and
             * destructors write no other rank sees, and the file holds
             * the contents at finalize for the pages a rank only reads. */
            map_private(R->app, A->len, R->memfd, 0);
            map_private(R->app + skip, R->size - skip, R->memfd, skip);
        }
        mprotect(R->app, A->len, PROT_READ | PROT_WRITE);
        mprotect(R->app + skip, R->size - skip, PROT_READ | PROT_WRITE);
    } else {
        munmap(R->app, R->size);
    }
    munmap(R->rt, R->size);
    munmap(R->twin, R->size);
    munmap(R->pages, (size_t)R->npages * sizeof(sdsm_page_t));
    munmap(R->dirty, (size_t)R->npages * sizeof(uint32_t));
    munmap((void *)R->announce, announce_bytes(R));
    close(R->memfd);
    memset(R, 0, sizeof *R);
}
