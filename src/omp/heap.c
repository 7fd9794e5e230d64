/*
 * heap.c - an OpenMP program's heap in shared memory.
 *
 * malloc and friends called from the program's own code (not from a
 * library: the C library's and the runtime's own allocations stay private
 * to the process) are served from the shared region once sdsm_init has run
 * (the entry points are in override.c, with the rest of the C library that
 * libsdsm-omp replaces).
 * At start-up one collective block is reserved for the heap and cut into
 * one part per rank; each rank allocates from its own part alone, with
 * private bookkeeping, so a malloc costs no message.  Pages are homed by
 * first touch (the rank that first uses a page keeps it, like NUMA
 * memory), or as SDSM_OMP_HOME says.
 *
 * Any rank can tell a block's size (realloc, malloc_usable_size, free by
 * another rank), from shared memory the allocator writes apart from the
 * block's data, so that data pages are first touched by whoever uses them,
 * not by the allocator.  Small blocks (up to 32 KiB) come in classes, each
 * carved from 1 MiB chunks of its own with no header: a byte per chunk in
 * its rank's chunk map (the first pages of the rank's part) gives the
 * chunk's class, so a block's size is its chunk's.  (With a 16-byte header
 * before each small block, the allocating rank touched every page first:
 * NPB MG mallocs each row of its grids, 2 KiB, on the master, so all of
 * them were homed at rank 0 and every other rank's writes became twins
 * and diffs.)  Large blocks are whole pages after a page holding their
 * 16-byte header just before the data.  Free lists are private arrays:
 * no shared page is read or written while the allocator's mutex is held (a
 * fault there would block the other threads of the rank on the mutex while
 * this one waits for the network, or for a run slot one of them holds).
 * strdup, strndup, asprintf and vasprintf called from the program are
 * served the same way (other C library calls that allocate stay private).
 * A block freed by another rank than its allocator is not reused (counted,
 * reported at exit by SDSM_OMP_VERBOSE=1).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omp_int.h"
#include "sdsm.h"

extern void *__libc_realloc(void *, size_t); /* the bookkeeping is private */

#define PAGE 4096ul
#define HDR  16ul
/* 32 B .. 32 KiB: multiples of 16 up to 128 B, then sixteen classes per
 * power of two (136, 144, ... 256, 272, ...), so a block wastes at most a
 * sixteenth of itself.  With powers of two only, NPB MG's rows of 2,064
 * bytes took 4 KiB each, twice the memory libgomp's program touches; with
 * two classes per power of two, 3 KiB, and one rank ran MG.A 1.2 times as
 * long as libgomp's one thread; with eight, 2,304 bytes, 1.05-1.07 times
 * (the rows 12 % further apart than glibc's 2,080); with sixteen, 2,176
 * bytes, 1.03. */
#define PER_POW   16 /* classes per power of two above 128 B */
#define NCLASS    (7 + 8 * PER_POW)
#define SMALL_MAX (32ul << 10)
#define CHUNK     (1ul << 20)
#define MAGIC     0x5d5a110cu

enum { K_LARGE = 2, K_ALIGNED = 3 };

typedef struct hdr {
    uint32_t magic;
    uint16_t kind;
    uint16_t owner;
    uint64_t v; /* class, data pages, or the offset back to the block */
} hdr_t;
_Static_assert(sizeof(hdr_t) == HDR, "block header");
_Static_assert((128ul << ((NCLASS - 8) / PER_POW)) * 2 == SMALL_MAX, "largest class");
_Static_assert(NCLASS < 255, "a class fits the chunk map's byte");

typedef struct vec {
    uintptr_t *v;
    size_t n, cap;
} vec_t;

typedef struct span {
    uintptr_t at;
    size_t pages;
} span_t;

static struct {
    int ready, rank, nprocs, policy;          /* policy: SDSM_HOME_* or a rank */
    uintptr_t lo, hi;                         /* the whole heap block */
    size_t per;                               /* bytes of each rank's part */
    uintptr_t mine, top, end;                 /* this rank's part; top: never handed out above */
    uintptr_t bump[NCLASS], bump_end[NCLASS]; /* each class's chunk being carved (fresh: zero) */
    vec_t free_small[NCLASS];
    span_t *spans; /* free large ranges, by address */
    size_t nspans, cap_spans;
    pthread_mutex_t mu;
    unsigned long foreign_frees;
} heap = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int vec_push(vec_t *v, uintptr_t x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        uintptr_t *n = __libc_realloc(v->v, cap * sizeof *n);
        if (!n)
            return SDSM_ENOMEM;
        v->v = n;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}

/* Class c's block size: 32 + 16c up to 128, then P + j P/PER_POW for the
 * powers of two P from 128 and j = 1..PER_POW. */
static size_t class_size(int c)
{
    if (c < 7)
        return 32ul + 16ul * (size_t)c;
    size_t p = 128ul << ((c - 7) / PER_POW);
    return p + (size_t)((c - 7) % PER_POW + 1) * (p / PER_POW);
}

static int class_of(size_t n)
{
    size_t need = n;
    if (need <= 128)
        return need <= 32 ? 0 : (int)((need - 32 + 15) / 16);
    int lg = 63 - __builtin_clzl(need - 1); /* need in (2^lg, 2^(lg+1)] */
    size_t p = 1ul << lg, step = p / PER_POW;
    return 7 + (lg - 7) * PER_POW + (int)((need - p + step - 1) / step) - 1;
}

/* Take `pages` pages of this rank's part (mutex held); 0 when full. */
static uintptr_t take_pages(size_t pages, int *fresh)
{
    for (size_t i = 0; i < heap.nspans; i++) {
        if (heap.spans[i].pages < pages)
            continue;
        uintptr_t at = heap.spans[i].at;
        heap.spans[i].at += pages * PAGE;
        heap.spans[i].pages -= pages;
        if (!heap.spans[i].pages)
            memmove(&heap.spans[i], &heap.spans[i + 1], (heap.nspans - i - 1) * sizeof *heap.spans),
                heap.nspans--;
        *fresh = 0;
        return at;
    }
    if ((heap.end - heap.top) / PAGE < pages)
        return 0;
    uintptr_t at = heap.top;
    heap.top += pages * PAGE;
    *fresh = 1; /* never used: still zero */
    return at;
}

/* Give pages back (mutex held), merging with neighbours. */
static void give_pages(uintptr_t at, size_t pages)
{
    size_t i = 0;
    while (i < heap.nspans && heap.spans[i].at < at)
        i++;
    if (i > 0 && heap.spans[i - 1].at + heap.spans[i - 1].pages * PAGE == at) {
        heap.spans[i - 1].pages += pages;
        if (i < heap.nspans && at + pages * PAGE == heap.spans[i].at) {
            heap.spans[i - 1].pages += heap.spans[i].pages;
            memmove(&heap.spans[i], &heap.spans[i + 1], (heap.nspans - i - 1) * sizeof *heap.spans);
            heap.nspans--;
        }
        return;
    }
    if (i < heap.nspans && at + pages * PAGE == heap.spans[i].at) {
        heap.spans[i].at = at;
        heap.spans[i].pages += pages;
        return;
    }
    if (heap.nspans == heap.cap_spans) {
        size_t cap = heap.cap_spans ? 2 * heap.cap_spans : 256;
        span_t *n = __libc_realloc(heap.spans, cap * sizeof *n);
        if (!n)
            return; /* out of private memory: the range is lost, not corrupted */
        heap.spans = n;
        heap.cap_spans = cap;
    }
    memmove(&heap.spans[i + 1], &heap.spans[i], (heap.nspans - i) * sizeof *heap.spans);
    heap.spans[i] = (span_t){at, pages};
    heap.nspans++;
}

static void place(uintptr_t data, size_t len)
{
    /* SDSM_OMP_HOME=block: each large block is spread over the ranks in
     * contiguous parts (effective at the next barrier, a parallel region's
     * start at the latest). */
    if (heap.policy != SDSM_HOME_BLOCK || len < PAGE * (size_t)heap.nprocs)
        return;
    size_t per = (len / PAGE + (size_t)heap.nprocs - 1) / (size_t)heap.nprocs * PAGE;
    for (int r = 0; r < heap.nprocs && (size_t)r * per < len; r++) {
        size_t n = len - (size_t)r * per < per ? len - (size_t)r * per : per;
        sdsm_set_home((void *)(data + (size_t)r * per), n, r);
    }
}

/* A part's chunk map: byte i is 1 + the class of the part's i-th CHUNK, 0
 * if that is no small-block chunk.  Written only by the part's rank. */
static uint8_t *chunk_map(uintptr_t part) { return (uint8_t *)part; }
static size_t map_bytes(void) { return (heap.per / CHUNK + PAGE - 1) / PAGE * PAGE; }

/* A fresh chunk for class c (mutex held): the next CHUNK-aligned MiB of
 * this rank's part above top (the pages skipped go to the large blocks);
 * 0 when full. */
static uintptr_t take_chunk(int c)
{
    uintptr_t at = heap.mine + (heap.top - heap.mine + CHUNK - 1) / CHUNK * CHUNK;
    if (at > heap.end || heap.end - at < CHUNK)
        return 0;
    if (at > heap.top)
        give_pages(heap.top, (at - heap.top) / PAGE);
    heap.top = at + CHUNK;
    chunk_map(heap.mine)[(at - heap.mine) / CHUNK] = (uint8_t)(c + 1);
    return at;
}

static void *alloc_small(size_t n, int zero)
{
    int c = class_of(n);
    size_t bs = class_size(c);
    uintptr_t b = 0;
    int fresh = 0;
    pthread_mutex_lock(&heap.mu);
    if (heap.free_small[c].n) {
        b = heap.free_small[c].v[--heap.free_small[c].n];
    } else {
        if (heap.bump_end[c] - heap.bump[c] < bs) {
            uintptr_t ch = take_chunk(c);
            heap.bump[c] = ch;
            heap.bump_end[c] = ch ? ch + CHUNK : 0;
        }
        if (heap.bump[c]) {
            b = heap.bump[c];
            heap.bump[c] += bs;
            fresh = 1; /* chunks are never given back: a carved block is new, still zero */
        }
    }
    pthread_mutex_unlock(&heap.mu);
    if (!b)
        return NULL;
    if (zero && !fresh)
        memset((void *)b, 0, bs);
    return (void *)b;
}

/* malloc's NULL is what the C library gives too, but programs that never
 * check it (SPLASH's OCEAN asks for 30 GB) crash far from the cause: say
 * once which variable gives the heap more room. */
static void warn_full(size_t n)
{
    static atomic_int said;
    if (atomic_exchange(&said, 1))
        return;
    fprintf(stderr,
            "sdsm: rank %d: malloc of %zu bytes: no room in this rank's part of the shared heap (%zu MiB: "
            "SDSM_OMP_HEAP split over %d ranks); it returns NULL (raise SDSM_OMP_HEAP, and SDSM_HEAP_SIZE "
            "with it)\n",
            heap.rank, n, (size_t)(heap.end - heap.mine) >> 20, heap.nprocs);
}

static void *alloc_large(size_t n, int zero)
{
    size_t pages = (n + PAGE - 1) / PAGE;
    int fresh = 0;
    pthread_mutex_lock(&heap.mu);
    uintptr_t at = take_pages(pages + 1, &fresh);
    pthread_mutex_unlock(&heap.mu);
    if (!at) {
        warn_full(n);
        return NULL;
    }
    uintptr_t data = at + PAGE;
    *(hdr_t *)(data - HDR) = (hdr_t){MAGIC, K_LARGE, (uint16_t)heap.rank, (uint64_t)pages};
    if (zero && !fresh)
        memset((void *)data, 0, pages * PAGE);
    place(data, pages * PAGE);
    return (void *)data;
}

void *sdsm_omp_heap_alloc(size_t n, int zero)
{
    void *p = n <= SMALL_MAX ? alloc_small(n, zero) : alloc_large(n, zero);
    if (!p)
        errno = ENOMEM;
    return p;
}

int sdsm_omp_heap_has(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return heap.ready && a >= heap.lo && a < heap.hi;
}

static void __attribute__((noreturn)) not_a_block(const void *p)
{
    fprintf(stderr,
            "sdsm: rank %d: free/realloc of %p, which is not a block of the shared "
            "heap (or its header was overwritten)\n",
            heap.rank, p);
    abort();
}

/* What p is: a small block (its class in *c, the rank whose part holds it
 * in *part), or the block whose header is *h (large, aligned). */
static int lookup(const void *p, int *c, int *part, hdr_t *h)
{
    uintptr_t a = (uintptr_t)p;
    if (a < heap.lo || a >= heap.lo + heap.per * (size_t)heap.nprocs)
        not_a_block(p);
    *part = (int)((a - heap.lo) / heap.per);
    uintptr_t base = heap.lo + (size_t)*part * heap.per, chunk = (a - base) / CHUNK;
    int m = chunk_map(base)[chunk];
    if (m && (a - base - chunk * CHUNK) % class_size(m - 1) == 0) {
        *c = m - 1;
        return 1;
    }
    *h = *(const hdr_t *)(a - HDR);
    if (h->magic != MAGIC || (h->kind != K_LARGE && h->kind != K_ALIGNED))
        not_a_block(p);
    return 0;
}

size_t sdsm_omp_heap_usable(const void *p)
{
    int c, part;
    hdr_t h;
    if (lookup(p, &c, &part, &h))
        return class_size(c);
    if (h.kind == K_LARGE)
        return h.v * PAGE;
    return sdsm_omp_heap_usable((const void *)((uintptr_t)p - h.v)) - h.v;
}

void sdsm_omp_heap_free(void *p)
{
    int c, part;
    hdr_t h;
    int small = lookup(p, &c, &part, &h);
    if (!small && h.kind == K_ALIGNED) {
        sdsm_omp_heap_free((void *)((uintptr_t)p - h.v));
        return;
    }
    if ((small ? part : (int)h.owner) != heap.rank) {
        __atomic_fetch_add(&heap.foreign_frees, 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&heap.mu);
    if (small)
        vec_push(&heap.free_small[c], (uintptr_t)p);
    else
        give_pages((uintptr_t)p - PAGE, h.v + 1);
    pthread_mutex_unlock(&heap.mu);
}

void *sdsm_omp_heap_aligned(size_t align, size_t n)
{
    if (align <= HDR)
        return sdsm_omp_heap_alloc(n, 0);
    if (align <= PAGE && n > SMALL_MAX)
        return sdsm_omp_heap_alloc(n, 0); /* large blocks are page-aligned */
    uint8_t *raw = sdsm_omp_heap_alloc(n + align + HDR, 0);
    if (!raw)
        return NULL;
    uintptr_t p = ((uintptr_t)raw + HDR + align - 1) & ~(uintptr_t)(align - 1);
    *(hdr_t *)(p - HDR) = (hdr_t){MAGIC, K_ALIGNED, (uint16_t)heap.rank, (uint64_t)(p - (uintptr_t)raw)};
    return (void *)p;
}

/* The SDSM_OMP_HOME policy named s that spreads the pages over several
 * homes (first-touch, cyclic, block: negative, include/sdsm.h), or 0 if s
 * names none (a rank, or nothing). */
static int spread_policy(const char *s)
{
    if (!s)
        return 0;
    if (!strcmp(s, "first-touch"))
        return SDSM_HOME_FIRST_TOUCH;
    if (!strcmp(s, "cyclic"))
        return SDSM_HOME_CYCLIC;
    if (!strcmp(s, "block"))
        return SDSM_HOME_BLOCK;
    return 0;
}

/* SDSM_OMP_HOME names a policy that spreads the pages over several homes,
 * not one rank; read before sdsm_init. */
int sdsm_omp_home_spread(void) { return spread_policy(getenv("SDSM_OMP_HOME")) < 0; }

/*
 * A program with an omp flush (sdsm_omp_program_fences) may pass data
 * behind a plain flag, which is only safe when no reader can get the flag
 * from one home and the data's old contents from another.  serve.c's
 * defer_fetch closes the case found (flagsweep at 4 ranks with homes
 * cyclic: thousands of stale words a run, none since), but with first
 * touch omp_flagsweep_n3x2 still lost words once in four runs of the whole
 * suite (136 stale words; not reproduced alone).  So such a program's heap
 * and globals stay homed at rank 0 unless SDSM_OMP_HOME is set, which rank
 * 0 warns about.
 */
static int policy_from_env(void)
{
    const char *s = getenv("SDSM_OMP_HOME");
    if (sdsm_omp_program_fences() && s && *s && sdsm_rank() == 0)
        fprintf(stderr,
                "sdsm: rank 0: warning: SDSM_OMP_HOME=%s in a program with omp flush: data passed "
                "behind plain flags is only safe when flag and data have one home (the default for "
                "such programs: rank 0)\n",
                s);
    if (!s || !*s)
        return sdsm_omp_program_fences() ? 0 : SDSM_HOME_FIRST_TOUCH;
    int spread = spread_policy(s);
    if (spread < 0)
        return spread;
    char *e;
    long r = strtol(s, &e, 10);
    if (*e || r < 0 || r >= sdsm_nprocs()) {
        fprintf(stderr,
                "sdsm: rank %d: SDSM_OMP_HOME=%s: expected first-touch, cyclic, block or a "
                "rank 0..%d\n",
                sdsm_rank(), s, sdsm_nprocs() - 1);
        exit(1);
    }
    return (int)r;
}

static size_t heap_size_from_env(void)
{
    const char *s = getenv("SDSM_OMP_HEAP");
    if (!s || !*s)
        return 8ul << 30;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (*e == 'G' || *e == 'g')
        v <<= 30, e++;
    else if (*e == 'M' || *e == 'm')
        v <<= 20, e++;
    if (*e || v < (1ull << 20)) {
        fprintf(stderr,
                "sdsm: rank %d: SDSM_OMP_HEAP=%s: expected a size of 1M or more, such as "
                "512M or 8G\n",
                sdsm_rank(), s);
        exit(1);
    }
    return (size_t)v;
}

static void report_foreign(void)
{
    const char *v = getenv("SDSM_OMP_VERBOSE");
    if (heap.foreign_frees && v && *v == '1')
        fprintf(stderr,
                "sdsm: rank %d: %lu heap blocks were freed by another rank than the one "
                "that allocated them (their memory is not reused)\n",
                heap.rank, heap.foreign_frees);
}

void sdsm_omp_heap_init(void)
{
    heap.rank = sdsm_rank();
    heap.nprocs = sdsm_nprocs();
    heap.policy = policy_from_env();
    size_t total = heap_size_from_env();
    int home = heap.policy == SDSM_HOME_BLOCK ? SDSM_HOME_FIRST_TOUCH : heap.policy;
    uint8_t *base = sdsm_alloc(total, home);
    if (!base) {
        fprintf(stderr,
                "sdsm: rank %d: cannot reserve the %zu-byte shared heap (SDSM_OMP_HEAP; "
                "SDSM_HEAP_SIZE bounds the whole region)\n",
                heap.rank, total);
        exit(1);
    }
    heap.per = total / (size_t)heap.nprocs / PAGE * PAGE;
    heap.lo = (uintptr_t)base;
    heap.hi = heap.lo + total;
    heap.mine = heap.lo + (size_t)heap.rank * heap.per;
    heap.top = heap.mine + map_bytes(); /* the chunk map, zero: no chunk yet */
    heap.end = heap.mine + heap.per;
    atexit(report_foreign);
    __atomic_store_n(&heap.ready, 1, __ATOMIC_RELEASE);
}

int sdsm_omp_heap_policy(void) { return heap.policy; }

int sdsm_omp_heap_ready(void) { return __atomic_load_n(&heap.ready, __ATOMIC_ACQUIRE); }

void *sdsm_omp_heap_realloc(void *p, size_t n)
{
    if (!n) {
        sdsm_omp_heap_free(p);
        return NULL;
    }
    size_t have = sdsm_omp_heap_usable(p);
    if (n <= have && (n > SMALL_MAX || n * 2 > have))
        return p;
    void *q = sdsm_omp_heap_alloc(n, 0);
    if (!q)
        return NULL;
    memcpy(q, p, n < have ? n : have);
    sdsm_omp_heap_free(p);
    return q;
}
