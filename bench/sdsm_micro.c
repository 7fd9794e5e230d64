/*
 * sdsm_micro.c - the sdsm side of bench/micro.  Run under sdsmrun:
 *
 *   sdsm_micro fault   PAGES BATCHES [FULL]
 *                                      rank 1 read-faults PAGES pages homed
 *                                      at rank 0, per batch; rank 0 writes one
 *                                      byte of each page between batches so
 *                                      the next batch faults again.  FULL=1:
 *                                      rank 0 writes every byte instead, so
 *                                      each page travels whole (a mostly-zero
 *                                      page travels as a short diff), as in
 *                                      a ping-pong of one page
 *   sdsm_micro barrier COUNT BATCHES   COUNT barriers per batch
 *   sdsm_micro lock    COUNT BATCHES   rank 0 does one lock/unlock pair of
 *                                      each of COUNT locks per batch, each
 *                                      managed by rank 1 and last held there
 *                                      (rank 1 takes them all first): every
 *                                      pair moves a lock from rank to rank
 *   sdsm_micro relock  COUNT BATCHES   rank 0 does COUNT lock/unlock pairs of
 *                                      one lock managed by rank 1 per batch:
 *                                      after the first the lock stays at
 *                                      rank 0, which takes it again
 *   sdsm_micro seqread MBYTES REPS     rank 1 sums a block of MBYTES homed at
 *                                      rank 0, 8 bytes at a time
 *
 * One warm-up batch is run first and not reported.  The measuring rank
 * prints one line per batch on stdout:
 *   sample <figure> <value>
 * (nanoseconds per operation, or MB/s for seqread); bench/micro takes the
 * medians.  fault also prints "fault_p50" samples: the median of the
 * individual fault times of each batch.
 *
 * For the counting pass of bench/micro, every rank prints at exit
 *   rusage <rank> <voluntary> <involuntary>
 * (context switches of all its threads, getrusage), and the measuring rank
 * brackets each measured loop with access(2) of two names that exist
 * nowhere (MARK_BEGIN, MARK_END), so that the system calls of the loops can
 * be picked out of an strace -f log.
 */
#include <sdsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MARK_BEGIN "/sdsm-micro-mark-begin"
#define MARK_END   "/sdsm-micro-mark-end"

/* A system call that strace shows with its argument, and that does nothing. */
static void mark(const char *name)
{
    (void)access(name, F_OK);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int    g_argc;
static char **g_argv;

static long arg(int i, long def)
{
    return i < g_argc ? strtol(g_argv[i], NULL, 0) : def;
}

static void need_two(const char *what)
{
    if (sdsm_nprocs() < 2)
        sdsm_abort(2, "%s needs at least 2 ranks", what);
}

/* Rank 0 dirties one byte of every page so that rank 1's copies are dropped
 * at the next barrier. */
static void touch_pages(volatile char *p, long pages, long ps, char v, int full)
{
    for (long i = 0; i < pages; i++) {
        if (full)
            memset((char *)p + i * ps, v, (size_t)ps);
        else
            p[i * ps] = v;
    }
}

static void bench_fault(long pages, long batches, int full)
{
    need_two("fault");
    long ps = sysconf(_SC_PAGESIZE);
    int me = sdsm_rank();
    volatile char *blk = sdsm_alloc((size_t)(pages * ps), 0);
    uint64_t *t = malloc((size_t)pages * sizeof *t);
    if (!t)
        sdsm_abort(1, "out of memory");
    for (long b = 0; b <= batches; b++) {
        if (me == 0)
            touch_pages(blk, pages, ps, (char)(b + 1), full);
        sdsm_barrier();
        if (me == 1) {
            mark(MARK_BEGIN);
            uint64_t t0 = now_ns(), prev = t0;
            long sum = 0;
            for (long i = 0; i < pages; i++) {
                sum += blk[i * ps];
                uint64_t x = now_ns();
                t[i] = x - prev;
                prev = x;
            }
            uint64_t t1 = prev;
            mark(MARK_END);
            if (sum != (long)(char)(b + 1) * pages)
                sdsm_abort(1, "fault: read %ld, expected %ld", sum, (long)(char)(b + 1) * pages);
            if (b > 0) {
                qsort(t, (size_t)pages, sizeof *t, cmp_u64);
                printf("sample fault %.1f\n", (double)(t1 - t0) / (double)pages);
                printf("sample fault_p50 %llu\n", (unsigned long long)t[pages / 2]);
                fflush(stdout);
            }
        }
        sdsm_barrier();
    }
    free(t);
}

static void bench_barrier(long count, long batches)
{
    for (long b = 0; b <= batches; b++) {
        sdsm_barrier();
        if (sdsm_rank() == 0)
            mark(MARK_BEGIN);
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++)
            sdsm_barrier();
        uint64_t t1 = now_ns();
        if (sdsm_rank() == 0)
            mark(MARK_END);
        if (b > 0 && sdsm_rank() == 0) {
            printf("sample barrier %.1f\n", (double)(t1 - t0) / (double)count);
            fflush(stdout);
        }
    }
}

/* Rank 0's measured loop: lock+unlock of first, first + stride, ... */
static void timed_locks(const char *fig, int first, int stride, long count, int report)
{
    mark(MARK_BEGIN);
    uint64_t t0 = now_ns();
    for (long i = 0; i < count; i++) {
        sdsm_lock(first + stride * (int)i);
        sdsm_unlock(first + stride * (int)i);
    }
    uint64_t t1 = now_ns();
    mark(MARK_END);
    if (report) {
        printf("sample %s %.1f\n", fig, (double)(t1 - t0) / (double)count);
        fflush(stdout);
    }
}

static void bench_lock(long count, long batches)
{
    need_two("lock");
    /* Lock managers avoid the barrier manager (rank 0): with 2 ranks every
     * lock lives at rank 1.  A released lock stays with its last holder
     * until another rank asks, so rank 1 takes each lock of the batch first
     * and rank 0's lock then has to come from rank 1. */
    for (long b = 0; b <= batches; b++) {
        int base = 1000 + (int)(b * count);
        if (sdsm_rank() == 1)
            for (long i = 0; i < count; i++) {
                sdsm_lock(base + (int)i);
                sdsm_unlock(base + (int)i);
            }
        sdsm_barrier();
        if (sdsm_rank() == 0)
            timed_locks("lock", base, 1, count, b > 0);
        sdsm_barrier();
    }
}

static void bench_relock(long count, long batches)
{
    need_two("relock");
    if (sdsm_rank() == 0)
        for (long b = 0; b <= batches; b++)
            timed_locks("relock", 1000, 0, count, b > 0);
    sdsm_barrier();
}

static void bench_seqread(long mbytes, long reps)
{
    need_two("seqread");
    long ps = sysconf(_SC_PAGESIZE);
    size_t size = (size_t)mbytes << 20;
    long pages = (long)(size / (size_t)ps);
    int me = sdsm_rank();
    char *blk = sdsm_alloc(size, 0);
    if (me == 0) /* make every page real at the home */
        memset(blk, 1, size);
    for (long r = 0; r <= reps; r++) {
        if (me == 0 && r > 0)
            touch_pages(blk, pages, ps, 1, 0);
        sdsm_barrier();
        if (me == 1) {
            const volatile uint64_t *w = (const uint64_t *)blk;
            size_t nw = size / 8;
            uint64_t sum = 0, t0 = now_ns();
            for (size_t i = 0; i < nw; i++)
                sum += w[i];
            uint64_t t1 = now_ns();
            if (sum != (uint64_t)nw * 0x0101010101010101ull)
                sdsm_abort(1, "seqread: bad sum");
            if (r > 0) {
                printf("sample seqread %.2f\n", (double)size / 1e6 / ((double)(t1 - t0) * 1e-9));
                fflush(stdout);
            }
        }
        sdsm_barrier();
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    g_argc = argc;
    g_argv = argv;
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "fault") == 0)
        bench_fault(arg(2, 2000), arg(3, 5), arg(4, 0) != 0);
    else if (strcmp(what, "barrier") == 0)
        bench_barrier(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "lock") == 0)
        bench_lock(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "relock") == 0)
        bench_relock(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "seqread") == 0)
        bench_seqread(arg(2, 64), arg(3, 3));
    else
        sdsm_abort(2, "usage: sdsm_micro fault N BATCHES [FULL] | barrier|lock|relock|seqread N BATCHES");
    int me = sdsm_rank();
    sdsm_finalize();
    /* After finalize: the service thread has been joined, so its switches count. */
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("rusage %d %ld %ld\n", me, ru.ru_nvcsw, ru.ru_nivcsw);
    return 0;
}
