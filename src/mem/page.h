/*
 * page.h - the shared region and its per-page state.
 *
 * The region is one memfd mapped twice at the same offsets: the
 * application view (at the same virtual address in every rank; its
 * protections drive the protocol) and the runtime view (always read-write;
 * the runtime installs pages and applies diffs through it, so no protection
 * window is ever opened on the application's memory).
 *
 * Page states, per page and per rank:
 *
 *             fault (not home)          reply
 *   INVALID ------------------> FETCHING ------> READ_ONLY <---------+
 *     |  ^                                         |   ^             |
 *     |  |  invalidation / barrier notice          |   | release     |
 *     |  +-----------------------------------------+   | (diff sent) |
 *     |  +--------------------- invalidation ------+---+-- READ_WRITE
 *     |                                            write fault  ^  (twin made
 *     +--- fault at the home (no fetch) ---> READ_ONLY / READ_WRITE  unless home)
 *
 *   FETCHING -> INVALID: a first-touch claim made this rank the home; the
 *   faulting thread then takes the "fault at the home" edge.
 *   READ_ONLY -> FETCHING: update protocol, a barrier said others wrote the
 *   page; the home pushes the new contents (no request).
 *
 * The memory file is one page longer than the heap: that page (offset
 * size) is never mapped by the views; a rank writes a random token there so
 * that a peer on the same host that opened the file (proto/zcopy.c) can
 * check it holds this region and not some other file.
 *
 * The home's copy is the master and is never invalidated.  Every change of
 * state goes through sdsm_page_set(), which checks it against the table.
 */
#ifndef SDSM_MEM_PAGE_H
#define SDSM_MEM_PAGE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sdsm_pstate {
    SDSM_PG_INVALID = 0, /* zero-filled metadata is a valid initial state */
    SDSM_PG_FETCHING,
    SDSM_PG_READ_ONLY,
    SDSM_PG_READ_WRITE,
    SDSM_PG_NSTATES
} sdsm_pstate_t;

enum {
    SDSM_PGF_DIRTY = 1 << 0,      /* on this rank's dirty list */
    SDSM_PGF_FLUSHED = 1 << 1,    /* written this interval, diff already sent (invalidated while dirty) */
    SDSM_PGF_STALE = 1 << 2,      /* FETCHING across a barrier that saw others write it: drop the reply */
    SDSM_PGF_PENDING = 1 << 3,    /* its diff is in a release batch not sent yet: no fetch may overtake it */
    SDSM_PGF_TWIN = 1 << 4,       /* the twin holds the page as of the last release */
    SDSM_PGF_TWINL = 1 << 5,      /* ibec: written in the current critical section (twinL made) */
    SDSM_PGF_IDLE = 1 << 6,       /* ibec: protected to see whether it is still used (unmap time-out) */
    SDSM_PGF_AWAIT_PUSH = 1 << 7, /* update: FETCHING until the home pushes the new contents */
};

typedef struct sdsm_page {
    uint8_t state;
    uint8_t flags;
    uint16_t pushes;   /* update: home pushes still due (FETCHING with AWAIT_PUSH) */
    int32_t home1;     /* home rank + 1; 0 = not known yet */
    uint64_t *copyset; /* at the home: ranks holding a copy (service thread only) */
} sdsm_page_t;

typedef struct sdsm_region {
    uint8_t *app;  /* application view, fixed address */
    uint8_t *rt;   /* runtime view */
    uint8_t *twin; /* twin of page i at twin + i * page_size */
    sdsm_page_t *pages;
    uint32_t *dirty;            /* pages written since the last release */
    _Atomic uint64_t *announce; /* a bit per page: in a block whose home never write-protects it
                                   (alloc.h, sdsm_alloc_set_announce) */
    uint32_t ndirty;
    pthread_mutex_t dirty_mtx;
    size_t size, page_size;
    unsigned shift;
    uint32_t npages;
    int memfd;
    int host_shared; /* memfd is rank 0's, mapped by every rank of the host (SDSM_HOST_SHARE) */
    int nprocs, rank;
    size_t copyset_words;
} sdsm_region_t;

extern sdsm_region_t sdsm_region;

/*
 * An OpenMP program's own writable data (libsdsm-omp): [start, start + len)
 * becomes the region's first pages (the region then starts at `start`, not
 * at SDSM_HEAP_BASE), keeping the contents it has; the `gap` bytes after it
 * stay unmapped (the C library's brk heap grows there) and the rest of the
 * region follows.  len == 0: an ordinary region.  fences: the program's code
 * holds memory fences (what OpenMP's flush compiles to), the only way it
 * can wait for a plain flag without a runtime call: the flag support
 * (SDSM_QUIET_US, SDSM_HOME_TWINS) is on by default only then.  Bits: 1,
 * some are fence instructions; 2, sdsmcc made some calls of sdsm_omp_fence
 * (SDSM_OMP_FENCE_CODE and _CALLS in src/omp/omp_int.h).
 */
typedef struct sdsm_region_adopt {
    uintptr_t start;
    size_t len, gap;
    int fences;
} sdsm_region_adopt_t;
extern sdsm_region_adopt_t sdsm_region_adopt;

#define SDSM_PAGE_STRIPES 256
/* Most page locks one thread holds at once (a release or a barrier's
 * notices lock a run of consecutive pages together).  Under ThreadSanitizer
 * one: its deadlock detector stops the program past 64 held locks, and with
 * a few dozen it spends seconds per lock (ranks stopped answering). */
#if defined(__SANITIZE_THREAD__)
#define SDSM_PAGE_LOCK_RUN 1
#else
#define SDSM_PAGE_LOCK_RUN 64
#endif
extern pthread_mutex_t sdsm_page_stripes[SDSM_PAGE_STRIPES];
/* Words a thread waiting for a page sleeps on, one per bucket of pages
 * (pg % SDSM_PAGE_WAKE_BUCKETS): bumped, and their sleepers woken, when a
 * page of the bucket leaves FETCHING or loses its PENDING flag.  Threads
 * waiting for other pages (compute threads of one rank, each faulting on a
 * page of its own) then sleep on: with one word for all, every reply woke
 * every waiter, and all but one went back to sleep. */
#define SDSM_PAGE_WAKE_BUCKETS 64
extern _Atomic uint32_t sdsm_page_gens[SDSM_PAGE_WAKE_BUCKETS];
/* Threads waiting on each word (sleeping, leading or polling): a wake finds
 * whether anyone waits on that very word, where the sleeper counts of
 * core/wait.h, shared by all the words that hash alike, would also count a
 * thread asleep on another word (64 words meet every hash bucket) and cost
 * a futex call for nobody. */
extern _Atomic int sdsm_page_waiters[SDSM_PAGE_WAKE_BUCKETS];

int sdsm_region_init(size_t size, size_t page_size, uintptr_t base, int rank, int nprocs);
/*
 * Set before sdsm_region_init: the heap file to map instead of a new one
 * (rank 0's, handed to the other ranks of a job on one host: SDSM_HOST_SHARE),
 * which the region then owns and does not fill (the adopted data is rank
 * 0's); -1 (the default): a file of its own.
 */
extern int sdsm_region_host_fd;
/* Set before sdsm_region_init on every rank of a job on one host: bytes of
 * the file past the identity page that the host's barrier uses (sync.h). */
extern size_t sdsm_region_host_tail;
void sdsm_region_fini(void);

static inline sdsm_page_t *sdsm_page(uint32_t pg) { return &sdsm_region.pages[pg]; }
static inline uint8_t *sdsm_page_app(uint32_t pg)
{
    return sdsm_region.app + ((size_t)pg << sdsm_region.shift);
}
static inline uint8_t *sdsm_page_rt(uint32_t pg)
{
    return sdsm_region.rt + ((size_t)pg << sdsm_region.shift);
}
static inline uint8_t *sdsm_page_twin(uint32_t pg)
{
    return sdsm_region.twin + ((size_t)pg << sdsm_region.shift);
}
static inline void sdsm_page_lock(uint32_t pg)
{
    pthread_mutex_lock(&sdsm_page_stripes[pg % SDSM_PAGE_STRIPES]);
}
static inline void sdsm_page_unlock(uint32_t pg)
{
    pthread_mutex_unlock(&sdsm_page_stripes[pg % SDSM_PAGE_STRIPES]);
}
/* 0 if taken; for a thread that holds another page's lock (stripes wrap). */
static inline int sdsm_page_trylock(uint32_t pg)
{
    return pthread_mutex_trylock(&sdsm_page_stripes[pg % SDSM_PAGE_STRIPES]);
}

/*
 * Is pg in a block whose home never write-protects it (alloc.h)?  A bit per
 * page rather than a search of the blocks: the home asks for every page it
 * serves or releases.  Any thread, the fault handler included.
 */
static inline int sdsm_page_announced(uint32_t pg)
{
    return (int)((atomic_load_explicit(&sdsm_region.announce[pg / 64], memory_order_acquire) >> (pg % 64)) &
                 1);
}
/* Set (on = 1) or clear the bits of [first, first + n). */
void sdsm_page_set_announce(uint32_t first, uint32_t n, int on);

/* True if addr lies in the application view; sets *pg. */
static inline int sdsm_region_page_of(const void *addr, uint32_t *pg)
{
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)sdsm_region.app;
    if (!b || a < b || a - b >= sdsm_region.size)
        return 0;
    *pg = (uint32_t)((a - b) >> sdsm_region.shift);
    return 1;
}

const char *sdsm_pstate_name(unsigned s);
/* Is from -> to a legal transition?  (Exposed for the unit tests.) */
int sdsm_page_transition_ok(unsigned from, unsigned to, int is_home);
/*
 * Change the state of pg (stripe lock held).  protect: also set the
 * application view's protection for the new state (callers batching
 * protections over a range pass 0 and call sdsm_page_protect()).
 * An illegal transition is an internal error and stops the job.
 */
void sdsm_page_set(uint32_t pg, sdsm_pstate_t to, int is_home, int protect);
void sdsm_page_protect(uint32_t first, uint32_t n, sdsm_pstate_t st);
/* Re-apply the protection the state calls for (repairs a stale mapping). */
int sdsm_page_prot(sdsm_pstate_t st);

/* Page lock of pg held, its state one to wait out (FETCHING, a pending
 * diff): sleep until a page of pg's bucket changes (sdsm_page_wake), then
 * take the lock again; the caller looks at the state again. */
void sdsm_page_wait(uint32_t pg);
/* After changing, under their locks, the state of pages first .. first +
 * n - 1: wake the threads waiting for them (those of their buckets). */
void sdsm_page_wake(uint32_t first, uint32_t n);

/* Append pg to the dirty list (once per interval).  Stripe lock held. */
void sdsm_page_mark_dirty(uint32_t pg);
/* Move the dirty list into out (capacity npages) and empty it; returns the count. */
/* Pages on the dirty list now (a snapshot). */
uint32_t sdsm_page_dirty_count(void);
/* At most cap of them into out, left on the list; returns how many. */
uint32_t sdsm_page_dirty_copy(uint32_t *out, uint32_t cap);
uint32_t sdsm_page_take_dirty(uint32_t *out);

/* Copyset helpers (home side, service thread). */
int sdsm_copyset_add(uint32_t pg, int rank);
void sdsm_copyset_clear(uint32_t pg);
int sdsm_copyset_has(uint32_t pg, int rank);

#endif
