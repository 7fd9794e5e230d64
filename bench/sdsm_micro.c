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
 *   sdsm_micro xchg    PAGES BATCHES   run with sdsmrun -n 2 --threads T: both
 *                                      ranks read PAGES pages homed at the
 *                                      other at once, the T compute threads
 *                                      of each taking the next page in turn
 *                                      (T faults in flight each way, as
 *                                      cg_sdsmt --touch 3); each home writes
 *                                      its pages whole between batches.
 *                                      Both ranks print ns per page fetched;
 *                                      ref_micro xchg-to is the same exchange
 *                                      on plain TCP
 *
 *   sdsm_micro randlock PAIRS BATCHES  every rank makes PAIRS lock/unlock
 *                                      pairs per batch, each of one of 1,000
 *                                      locks chosen at random (its own
 *                                      generator per rank), adding 1 to that
 *                                      lock's counter (64 bytes apart: 16
 *                                      shared pages) inside; rank 0 prints the
 *                                      batch's time (to the barrier after it)
 *                                      per pair of a rank, and every counter
 *                                      must hold at the end what was added to it
 *
 * sdsm_micro --paired fault|barrier|lock|randlock ...
 *                                      the same, and after every batch
 *                                      ranks 0 and 1 play a TCP loopback
 *                                      ping-pong of as many round trips
 *                                      (blocking sockets, TCP_NODELAY,
 *                                      between the application threads of
 *                                      these two processes): fault 8 B ->
 *                                      4096 B with rank 1 asking, as in the
 *                                      fault; barrier and lock 8 B -> 8 B
 *                                      with rank 0 asking.  The asking rank
 *                                      prints "sample pair <ns per round
 *                                      trip>" after each batch's sample: a
 *                                      reference measured by the same
 *                                      processes on the same CPUs under the
 *                                      same load, moments apart.
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

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "loopback.h"

#define MARK_BEGIN "/sdsm-micro-mark-begin"
#define MARK_END   "/sdsm-micro-mark-end"

/* A system call that strace shows with its argument, and that does nothing. */
static void mark(const char *name) { (void)access(name, F_OK); }

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

static int g_argc;
static char **g_argv;

static long arg(int i, long def) { return i < g_argc ? strtol(g_argv[i], NULL, 0) : def; }

static void need_two(const char *what)
{
    if (sdsm_nprocs() < 2)
        sdsm_abort(2, "%s needs at least 2 ranks", what);
}

/* --paired: the ping-pong socket between ranks 0 and 1 (-1: none). */
static int g_pair = -1;

static void pair_fail(const char *what) { sdsm_abort(1, "--paired: %s: %s", what, strerror(errno)); }

/* Ranks 0 and 1 connect over loopback: rank 1 listens on a port the kernel
 * picks and passes it to rank 0 through shared memory. */
static void pair_open(void)
{
    int me = sdsm_rank();
    volatile int *port = sdsm_alloc(sizeof(int), 0);
    struct sockaddr_in a;
    int ls = -1;
    if (me == 1) {
        if ((ls = lb_listen(&a)) < 0)
            pair_fail("listen");
        *port = ntohs(a.sin_port);
    }
    sdsm_barrier();
    if (me == 0) {
        a = (struct sockaddr_in){.sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                 .sin_port = htons((uint16_t)*port)};
        g_pair = socket(AF_INET, SOCK_STREAM, 0);
        if (g_pair < 0 || connect(g_pair, (struct sockaddr *)&a, sizeof a))
            pair_fail("connect");
    } else if (me == 1) {
        g_pair = accept(ls, NULL, NULL);
        if (g_pair < 0)
            pair_fail("accept");
        close(ls);
    }
    if (g_pair >= 0 && lb_nodelay(g_pair))
        pair_fail("TCP_NODELAY");
    sdsm_barrier();
}

static void pair_io(int wr, char *buf, size_t len)
{
    int r = lb_io_full(g_pair, wr, buf, len);
    if (r > 0)
        sdsm_abort(1, "--paired: the other rank closed the connection");
    if (r < 0)
        pair_fail(wr ? "write" : "read");
}

/* COUNT round trips of 8 B -> REP B, ASKER asking; the asker prints its
 * time per round trip as "sample pair".  Nothing without --paired, nor at
 * ranks other than 0 and 1 (no socket). */
static void pair_pingpong(int asker, long count, size_t rep)
{
    static char buf[4096];
    int me = sdsm_rank();
    if (g_pair < 0)
        return;
    uint64_t t0 = now_ns();
    for (long i = 0; i < count; i++) {
        if (me == asker) {
            pair_io(1, buf, 8);
            pair_io(0, buf, rep);
        } else {
            pair_io(0, buf, 8);
            pair_io(1, buf, rep);
        }
    }
    uint64_t t1 = now_ns();
    if (me == asker) {
        printf("sample pair %.1f\n", (double)(t1 - t0) / (double)count);
        fflush(stdout);
    }
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
        if (b > 0)
            pair_pingpong(1, pages, 4096);
    }
    free(t);
}

/* xchg: what every compute thread shares. */
static struct {
    long pages, batches, ps;
    char *blk;         /* 2 x pages, the first half homed at rank 0 */
    _Atomic long next; /* pages taken, over all batches */
    uint64_t t0;
} X;

static void *xchg_thread(void *arg)
{
    (void)arg;
    int me = sdsm_rank(), lt = sdsm_thread_id() % (sdsm_thread_count() / sdsm_nprocs());
    int nt = sdsm_thread_count() / sdsm_nprocs();
    long ps = X.ps, pages = X.pages;
    char *mine = X.blk + (long)me * pages * ps, *other = X.blk + (long)(1 - me) * pages * ps;
    for (long b = 0; b <= X.batches; b++) {
        long lo = lt * pages / nt, hi = (lt + 1) * pages / nt;
        memset(mine + lo * ps, (char)(b + 1), (size_t)((hi - lo) * ps));
        sdsm_barrier();
        if (lt == 0)
            X.t0 = now_ns();
        long bad = 0, end = (b + 1) * pages;
        for (long k = atomic_load(&X.next); k < end;)
            if (atomic_compare_exchange_weak(&X.next, &k, k + 1)) {
                long i = k - b * pages;
                bad += other[i * ps + (i % ps)] != (char)(b + 1);
                k = atomic_load(&X.next);
            }
        if (bad)
            sdsm_abort(1, "xchg: %ld pages read stale in batch %ld", bad, b);
        sdsm_group_barrier(0);
        if (lt == 0 && b > 0) {
            printf("sample xchg %.1f\n", (double)(now_ns() - X.t0) / (double)pages);
            fflush(stdout);
        }
        sdsm_barrier(); /* nobody writes a page before the other rank has read it */
    }
    return NULL;
}

static void bench_xchg(long pages, long batches)
{
    need_two("xchg");
    if (sdsm_nprocs() != 2)
        sdsm_abort(2, "xchg: run it with 2 ranks");
    if (pages < 1 || pages > (1L << 20) || batches < 0)
        sdsm_abort(2, "xchg: PAGES 1..%ld, BATCHES 0 or more", 1L << 20);
    X.pages = pages;
    X.batches = batches;
    X.ps = sysconf(_SC_PAGESIZE);
    X.blk = sdsm_alloc((size_t)(2 * pages * X.ps), SDSM_HOME_BLOCK);
    if (sdsm_home_of(X.blk) != 0 || sdsm_home_of(X.blk + pages * X.ps) != 1)
        sdsm_abort(1, "xchg: the halves are not homed at ranks 0 and 1");
    int nt = sdsm_thread_count() / sdsm_nprocs();
    sdsm_thread_t *t = calloc((size_t)nt, sizeof *t);
    if (!t)
        sdsm_abort(1, "out of memory");
    for (int k = 0; k < nt; k++)
        if (sdsm_thread_create(&t[k], 0, xchg_thread, NULL))
            sdsm_abort(1, "xchg: sdsm_thread_create failed");
    for (int k = 0; k < nt; k++)
        sdsm_thread_join(t[k], NULL);
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
        if (b > 0)
            pair_pingpong(0, count, 8);
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
        if (b > 0)
            pair_pingpong(0, count, 8);
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

#define RL_LOCKS 1000
#define RL_GAP   8 /* longs between two counters: 64 bytes */

static void bench_randlock(long pairs, long batches)
{
    long *ctr = sdsm_alloc(RL_LOCKS * RL_GAP * sizeof(long), 0);
    long *added = sdsm_alloc(RL_LOCKS * sizeof(long) * (size_t)sdsm_nprocs(), 0);
    if (!ctr || !added)
        sdsm_abort(1, "randlock: sdsm_alloc failed");
    long mine[RL_LOCKS] = {0};
    uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(sdsm_rank() + 1);
    for (long b = 0; b <= batches; b++) {
        sdsm_barrier();
        if (sdsm_rank() == 0)
            mark(MARK_BEGIN);
        uint64_t t0 = now_ns();
        for (long i = 0; i < pairs; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int k = (int)(x % RL_LOCKS);
            sdsm_lock(5000 + k);
            ctr[k * RL_GAP]++;
            sdsm_unlock(5000 + k);
            mine[k]++;
        }
        sdsm_barrier(); /* the batch ends with the slowest rank's last pair */
        uint64_t t1 = now_ns();
        if (sdsm_rank() == 0)
            mark(MARK_END);
        if (b > 0 && sdsm_rank() == 0) {
            printf("sample randlock %.1f\n", (double)(t1 - t0) / (double)pairs);
            fflush(stdout);
        }
        if (b > 0)
            pair_pingpong(0, pairs, 8);
    }
    memcpy(added + sdsm_rank() * RL_LOCKS, mine, sizeof mine);
    sdsm_barrier();
    if (sdsm_rank() == 0)
        for (int k = 0; k < RL_LOCKS; k++) {
            long want = 0;
            for (int r = 0; r < sdsm_nprocs(); r++)
                want += added[r * RL_LOCKS + k];
            if (ctr[k * RL_GAP] != want)
                sdsm_abort(1, "randlock: counter %d holds %ld, %ld were added", k, ctr[k * RL_GAP], want);
        }
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
    int paired = argc > 1 && strcmp(argv[1], "--paired") == 0;
    if (paired) {
        argc--;
        argv++;
    }
    g_argc = argc;
    g_argv = argv;
    const char *what = argc > 1 ? argv[1] : "";
    if (paired) {
        if (strcmp(what, "fault") && strcmp(what, "barrier") && strcmp(what, "lock") &&
            strcmp(what, "randlock"))
            sdsm_abort(2, "--paired goes with fault, barrier, lock or randlock");
        need_two("--paired");
        pair_open();
    }
    if (strcmp(what, "fault") == 0)
        bench_fault(arg(2, 2000), arg(3, 5), arg(4, 0) != 0);
    else if (strcmp(what, "barrier") == 0)
        bench_barrier(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "lock") == 0)
        bench_lock(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "randlock") == 0)
        bench_randlock(arg(2, 50000), arg(3, 3));
    else if (strcmp(what, "relock") == 0)
        bench_relock(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "xchg") == 0)
        bench_xchg(arg(2, 500), arg(3, 5));
    else if (strcmp(what, "seqread") == 0)
        bench_seqread(arg(2, 64), arg(3, 3));
    else
        sdsm_abort(2,
                   "usage: sdsm_micro [--paired] fault N BATCHES [FULL] | [--paired] barrier|lock|randlock N "
                   "BATCHES | relock|seqread|xchg N BATCHES");
    int me = sdsm_rank();
    if (g_pair >= 0)
        close(g_pair);
    sdsm_finalize();
    /* After finalize: the service thread has been joined, so its switches count. */
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("rusage %d %ld %ld\n", me, ru.ru_nvcsw, ru.ru_nivcsw);
    return 0;
}
