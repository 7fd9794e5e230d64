/*
 * cthreads.c - compute threads (sdsm_thread_create, seed 001).
 *
 *   mp_cthreads MODE [ARG]    (run with SDSM_THREADS=T, sdsmrun --threads T)
 *
 * Modes (every thread of every rank takes part; exact values checked):
 *   counter K      every compute thread adds 1, K times, to one counter under
 *                  one lock (handed between local threads and across ranks)
 *                  and to a counter of its own rank under a per-rank lock;
 *                  after sdsm_barrier every thread checks count x K and T x K.
 *   stencil ITERS  1-D three-point stencil over a shared array, each thread
 *                  owns a block; two arrays and a barrier per step; the
 *                  result equals a private sequential run bit for bit.
 *   multiwriter R  threads of all ranks write interleaved words of the same
 *                  pages between barriers, R rounds; all writes survive.
 *   groups R       threads in two groups per rank (id parity); each round a
 *                  thread writes its slot, sdsm_group_barrier, then checks
 *                  that every member of its group (on its rank) wrote it.
 *   ring R         a token passed through every compute thread in id order
 *                  by sdsm_cond_wait/sdsm_cond_broadcast, R times around:
 *                  threads on the same and on different ranks wake each other.
 *   poll R         a token per rank passed through the rank's threads in
 *                  order, R times around; each thread waits for its turn by
 *                  polling the token under the rank's lock (no condition);
 *                  each round the rank's last thread, whose turn comes
 *                  last, polls while the others sit in sdsm_comp_wait.  A
 *                  thread polling under a lock kept at its rank never
 *                  waits, so it must let the others have the run slot
 *                  (SDSM_RUN_THREADS=1).
 *   compwait       thread k < T-1 of each rank call sdsm_comp_wait first and
 *                  are created before thread T-1, which does not: with
 *                  SDSM_RUN_THREADS=1 thread T-1 must run first, and the
 *                  others only once it waits (in sdsm_barrier).
 *   spin           every thread of a rank counts itself in a plain atomic of
 *                  the rank's memory, then spins on it, making no sdsm call,
 *                  until all T did: with fewer run slots than threads the
 *                  spinners hold every slot, and the last threads get one
 *                  only because a slot held a time slice (SDSM_RUN_SLICE) by
 *                  a thread that makes no runtime call is lent to them.
 *   faults PAGES   every thread reads PAGES pages homed on other ranks
 *                  (for the run-slot bound, checked from the statistics).
 * Threads of one rank holding different locks at once (T locks; thread t
 * of rank r uses lock (r + t) % T, so each lock has one thread on every
 * rank; ibec must tell the threads' critical sections apart):
 *   locks K        each thread adds 1, K times, to its lock's counter on a
 *                  page all the locks' counters share and to one on a page
 *                  of the lock's own; in every critical section both must
 *                  be equal (a lost update shows at once); P x K at the end.
 *   mwlocks R      R rounds: under its lock each thread checks that every
 *                  word of its lock (interleaved with the other locks' words
 *                  on the same pages) holds the count of holders so far,
 *                  and writes the next count; barrier; all checked.
 *   prodcons K     queue q (a lock, a condition, a ring on pages all queues
 *                  share) is used by thread q of every rank: each puts K
 *                  numbered items and takes K; every item is taken once,
 *                  with the value put.
 * Misuse, which must stop the job with a message instead of hanging:
 *   toomany        each rank creates T + 1 threads
 *   toofew         each rank creates T - 1 threads, which call sdsm_barrier,
 *                  and joins them
 *   leave          thread 0 of each rank returns at once; the others call
 *                  sdsm_barrier
 *   mixed          the main thread calls sdsm_barrier while the threads run
 */
#define MP_NAME "cthreads"
#include "mp.h"

#include <sched.h>
#include <stdatomic.h>

static const char *mode;
static long arg;
static int T, count;

/* shared */
static volatile long *sh_total, *sh_rank; /* counter */
static double *sa, *sb;                   /* stencil */
static volatile long *mw;                 /* multiwriter */
static volatile long *tok;                /* ring */
static volatile long *poll_tok;           /* poll */
static volatile char *pages;              /* faults */
static volatile long *lk_shared, *lk_own; /* locks, mwlocks */
static volatile long *q_ring, *q_ctl;     /* prodcons */
/* per rank */
static long group_slot[4096];
static _Atomic int order_seq;
static _Atomic int spinners;
static int order_of[4096];

#define LOCK_TOTAL   11
#define LOCK_RANK    (100 + sdsm_rank())
#define STENCIL_B    512
#define MW_WORDS     (3 * 512)
#define COND_RING    5
#define LOCK_RING    77
#define LOCK_POLL    (500 + sdsm_rank())
#define LOCK_OF(l)   (200 + (l))
#define OWN_STRIDE   512 /* longs: a page of 4 KiB per lock */
#define MWL_WORDS    (4 * 512)
#define Q_SLOTS      16
#define Q_LOCK(q)    (300 + (q))
#define Q_COND(q)    (400 + (q))
#define ITEM(gid, k) ((long)(gid)*1000000 + (k) + 1)

static void do_counter(int id)
{
    for (long k = 0; k < arg; k++) {
        MP_OK(sdsm_lock(LOCK_TOTAL));
        long v = *sh_total;
        sched_yield(); /* let another local thread try to slip in */
        *sh_total = v + 1;
        MP_OK(sdsm_unlock(LOCK_TOTAL));
        MP_OK(sdsm_lock(LOCK_RANK));
        sh_rank[sdsm_rank() * 8] += 1;
        MP_OK(sdsm_unlock(LOCK_RANK));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("total", id, (long)count * arg, *sh_total);
    for (int r = 0; r < sdsm_nprocs(); r++)
        MP_CHECK("per-rank", r, (long)T * arg, sh_rank[r * 8]);
}

static double f3(double l, double c, double r) { return 0.25 * l + 0.5 * c + 0.25 * r + 1.0; }

static void do_stencil(int id)
{
    long n = (long)count * STENCIL_B, lo = (long)id * STENCIL_B, hi = lo + STENCIL_B;
    for (long i = lo; i < hi; i++)
        sa[i] = (double)(i % 17);
    MP_OK(sdsm_barrier());
    for (long it = 0; it < arg; it++) {
        double *src = it % 2 ? sb : sa, *dst = it % 2 ? sa : sb;
        for (long i = lo; i < hi; i++)
            dst[i] = f3(i ? src[i - 1] : 0.0, src[i], i + 1 < n ? src[i + 1] : 0.0);
        MP_OK(sdsm_barrier());
    }
    /* Thread 0 of every rank checks the whole array against a private run. */
    if (id % T)
        return;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    MP_NONNULL(a);
    MP_NONNULL(b);
    for (long i = 0; i < n; i++)
        a[i] = (double)(i % 17);
    for (long it = 0; it < arg; it++) {
        double *src = it % 2 ? b : a, *dst = it % 2 ? a : b;
        for (long i = 0; i < n; i++)
            dst[i] = f3(i ? src[i - 1] : 0.0, src[i], i + 1 < n ? src[i + 1] : 0.0);
    }
    const double *want = arg % 2 ? b : a, *got = arg % 2 ? sb : sa;
    for (long i = 0; i < n; i++)
        if (memcmp(&want[i], &got[i], sizeof want[i]))
            sdsm_abort(1, "cthreads: rank %d: stencil[%ld] = %.17g, sequential %.17g", sdsm_rank(), i, got[i],
                       want[i]);
    free(a);
    free(b);
}

static void do_multiwriter(int id)
{
    for (long r = 0; r < arg; r++) {
        for (long w = id; w < MW_WORDS; w += count)
            mw[w] = r * 100000 + w;
        MP_OK(sdsm_barrier());
        for (long w = 0; w < MW_WORDS; w++)
            MP_CHECK("mw", w, r * 100000 + w, mw[w]);
        MP_OK(sdsm_barrier());
    }
}

static void do_groups(int id)
{
    int local = id % T, g = local % 2;
    for (long r = 1; r <= arg; r++) {
        group_slot[local] = r;
        MP_OK(sdsm_group_barrier(g));
        for (int k = g; k < T; k += 2)
            MP_CHECK("group slot", k, r, group_slot[k]);
        MP_OK(sdsm_group_barrier(g));
    }
    MP_OK(sdsm_barrier());
}

static void do_ring(int id)
{
    for (long r = 0; r < arg; r++) {
        long want = r * count + id;
        MP_OK(sdsm_lock(LOCK_RING));
        while (*tok != want) {
            MP_ASSERT(*tok < want, "token %ld passed %ld before thread %d took it", *tok, want, id);
            MP_OK(sdsm_cond_wait(COND_RING, LOCK_RING));
        }
        *tok = want + 1;
        MP_OK(sdsm_cond_broadcast(COND_RING));
        MP_OK(sdsm_unlock(LOCK_RING));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("token", id, arg * count, *tok);
}

static void do_poll(int id)
{
    int rank = sdsm_rank(), local = id % T;
    volatile long *t = &poll_tok[rank * 8];
    for (long r = 0; r < arg; r++) {
        long want = r * T + local;
        if (local != T - 1) /* the last thread, whose turn comes last, polls first */
            MP_OK(sdsm_comp_wait());
        for (;;) {
            MP_OK(sdsm_lock(LOCK_POLL));
            long v = *t;
            MP_ASSERT(v <= want, "token %ld passed %ld before thread %d took it", v, want, id);
            if (v == want)
                *t = want + 1;
            MP_OK(sdsm_unlock(LOCK_POLL));
            if (v == want)
                break;
        }
    }
    MP_OK(sdsm_barrier());
    for (int k = 0; k < sdsm_nprocs(); k++)
        MP_CHECK("rank's token", k, arg * T, poll_tok[k * 8]);
}

static void do_compwait(int id)
{
    int local = id % T;
    if (local != T - 1)
        MP_OK(sdsm_comp_wait());
    order_of[local] = atomic_fetch_add(&order_seq, 1);
    MP_OK(sdsm_barrier());
    if (local == 0) {
        MP_CHECK("first to run", T - 1, 0, order_of[T - 1]);
        for (int k = 0; k < T - 1; k++)
            MP_ASSERT(order_of[k] > 0, "thread %d ran at %d, before the thread that does not wait", k,
                      order_of[k]);
    }
}

static void do_spin(int id)
{
    atomic_fetch_add(&spinners, 1);
    while (atomic_load(&spinners) < T)
        ; /* no sdsm call, no fault: only the run-slot scheduler can end this */
    MP_OK(sdsm_barrier());
    MP_CHECK("spinners", id, T, atomic_load(&spinners));
}

static void do_faults(int id)
{
    long sum = 0, n = sdsm_nprocs();
    /* Cyclic homes: page i is homed at rank i % n. */
    for (long p = id % T; p < n * arg; p += T)
        if (p % n != sdsm_rank())
            sum += pages[p * 4096];
    MP_CHECK("sum", id, 0, sum);
    MP_OK(sdsm_barrier());
}

/* The lock thread id uses, and so which data it writes. */
static int lock_of(int id) { return (id / T + id % T) % T; }

static void do_locks(int id)
{
    int l = lock_of(id);
    for (long k = 0; k < arg; k++) {
        MP_OK(sdsm_lock(LOCK_OF(l)));
        long a = lk_shared[l * 8], b = lk_own[(long)l * OWN_STRIDE];
        MP_ASSERT(a == b, "lock %d: counter on the shared page %ld, on the lock's page %ld", l, a, b);
        lk_shared[l * 8] = a + 1;
        sched_yield(); /* the other threads' critical sections write the shared page meanwhile */
        lk_own[(long)l * OWN_STRIDE] = b + 1;
        MP_OK(sdsm_unlock(LOCK_OF(l)));
    }
    MP_OK(sdsm_barrier());
    for (int m = 0; m < T; m++) {
        MP_CHECK("lock counter (shared page)", m, (long)sdsm_nprocs() * arg, lk_shared[m * 8]);
        MP_CHECK("lock counter (own page)", m, (long)sdsm_nprocs() * arg, lk_own[(long)m * OWN_STRIDE]);
    }
}

/* Word w belongs to lock w % T: each holder checks that every word of its
 * lock has the holder count its predecessor left, and writes the next. */
static void do_mwlocks(int id)
{
    int l = lock_of(id), P = sdsm_nprocs();
    for (long round = 0; round < arg; round++) {
        MP_OK(sdsm_lock(LOCK_OF(l)));
        long seq = lk_shared[l * 8];
        for (long w = l; w < MWL_WORDS; w += T)
            MP_CHECK("mwlocks word left by the lock's last holder", w, seq, mw[w]);
        for (long w = l; w < MWL_WORDS; w += T)
            mw[w] = seq + 1;
        lk_shared[l * 8] = seq + 1;
        MP_OK(sdsm_unlock(LOCK_OF(l)));
        MP_OK(sdsm_barrier());
        for (long w = 0; w < MWL_WORDS; w++)
            MP_CHECK("mwlocks word", w, (long)P * (round + 1), mw[w]);
        MP_OK(sdsm_barrier());
    }
}

/* Queue q: q_ctl[q * 8 + 0] items put, + 1 items taken, + 2 sum of the
 * values taken; q_ring[q * Q_SLOTS + i] the slots (all queues' on the same pages). */
static void do_prodcons(int id)
{
    int q = id % T, P = sdsm_nprocs();
    volatile long *c = &q_ctl[q * 8];
    for (long k = 0; k < arg; k++) {
        MP_OK(sdsm_lock(Q_LOCK(q)));
        MP_ASSERT(c[0] - c[1] < Q_SLOTS, "queue %d full: %ld put, %ld taken", q, c[0], c[1]);
        q_ring[q * Q_SLOTS + c[0] % Q_SLOTS] = ITEM(id, k);
        c[0] += 1;
        MP_OK(sdsm_cond_broadcast(Q_COND(q)));
        MP_OK(sdsm_unlock(Q_LOCK(q)));
        sched_yield();
        MP_OK(sdsm_lock(Q_LOCK(q)));
        while (c[1] == c[0]) /* never for long: this thread put one more than it took */
            MP_OK(sdsm_cond_wait(Q_COND(q), Q_LOCK(q)));
        long v = q_ring[q * Q_SLOTS + c[1] % Q_SLOTS];
        long from = v / 1000000, n = v % 1000000;
        MP_ASSERT(v > 0 && from < count && from % T == q && n >= 1 && n <= arg,
                  "queue %d: item %ld taken is none that was put", q, v);
        c[1] += 1;
        c[2] += v;
        MP_OK(sdsm_unlock(Q_LOCK(q)));
    }
    MP_OK(sdsm_barrier());
    long want = 0;
    for (int r = 0; r < P; r++)
        for (long k = 0; k < arg; k++)
            want += ITEM(r * T + q, k);
    MP_CHECK("items put", q, (long)P * arg, c[0]);
    MP_CHECK("items taken", q, (long)P * arg, c[1]);
    MP_CHECK("sum of the items taken", q, want, c[2]);
}

static void *body(void *p)
{
    int id = sdsm_thread_id();
    MP_ASSERT(id >= 0 && id < count, "id %d outside [0, %d)", id, count);
    MP_CHECK("id of thread", (long)(intptr_t)p, sdsm_rank() * T + (int)(intptr_t)p, id);
    if (!strcmp(mode, "toomany"))
        return NULL;
    if (!strcmp(mode, "counter"))
        do_counter(id);
    else if (!strcmp(mode, "stencil"))
        do_stencil(id);
    else if (!strcmp(mode, "multiwriter"))
        do_multiwriter(id);
    else if (!strcmp(mode, "groups"))
        do_groups(id);
    else if (!strcmp(mode, "ring"))
        do_ring(id);
    else if (!strcmp(mode, "poll"))
        do_poll(id);
    else if (!strcmp(mode, "compwait"))
        do_compwait(id);
    else if (!strcmp(mode, "spin"))
        do_spin(id);
    else if (!strcmp(mode, "faults"))
        do_faults(id);
    else if (!strcmp(mode, "locks"))
        do_locks(id);
    else if (!strcmp(mode, "mwlocks"))
        do_mwlocks(id);
    else if (!strcmp(mode, "prodcons"))
        do_prodcons(id);
    else if (strcmp(mode, "leave") || id % T)
        MP_OK(sdsm_barrier());
    return (void *)(intptr_t)(id + 1);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    mode = argc > 1 ? argv[1] : "counter";
    arg = argc > 2 ? atol(argv[2]) : 50;
    count = sdsm_thread_count();
    T = count / sdsm_nprocs();
    MP_ASSERT(T >= 1 && T <= 4096 && count == T * sdsm_nprocs(), "thread count %d", count);
    int n = sdsm_nprocs();
    sh_total = sdsm_calloc(1, sizeof(long), 0);
    sh_rank = sdsm_calloc((size_t)n * 8, sizeof(long), n - 1);
    sa = sdsm_calloc((size_t)count * STENCIL_B, sizeof(double), SDSM_HOME_CYCLIC);
    sb = sdsm_calloc((size_t)count * STENCIL_B, sizeof(double), SDSM_HOME_CYCLIC);
    mw = sdsm_calloc(MWL_WORDS, sizeof(long), SDSM_HOME_CYCLIC);
    tok = sdsm_calloc(1, sizeof(long), n / 2);
    poll_tok = sdsm_calloc((size_t)n * 8, sizeof(long), 0);
    long np = !strcmp(mode, "faults") ? arg : 1;
    pages = sdsm_calloc((size_t)n * (size_t)np, 4096, SDSM_HOME_CYCLIC);
    MP_NONNULL(sh_total);
    MP_NONNULL(sh_rank);
    MP_NONNULL(sa);
    MP_NONNULL(sb);
    MP_NONNULL(mw);
    MP_NONNULL(tok);
    MP_NONNULL(poll_tok);
    MP_NONNULL(pages);
    lk_shared = sdsm_calloc((size_t)T * 8, sizeof(long), 0);
    lk_own = sdsm_calloc((size_t)T * OWN_STRIDE, sizeof(long), SDSM_HOME_CYCLIC);
    q_ring = sdsm_calloc((size_t)T * Q_SLOTS, sizeof(long), n - 1);
    q_ctl = sdsm_calloc((size_t)T * 8, sizeof(long), n / 2);
    MP_NONNULL(lk_shared);
    MP_NONNULL(lk_own);
    MP_NONNULL(q_ring);
    MP_NONNULL(q_ctl);
    MP_OK(sdsm_barrier());

    sdsm_thread_t t[4097];
    int make = !strcmp(mode, "toomany") ? T + 1 : !strcmp(mode, "toofew") ? T - 1 : T;
    /* compwait: the thread that does not wait is created last. */
    for (int k = 0; k < make; k++)
        MP_OK(sdsm_thread_create(&t[k], strcmp(mode, "groups") ? 0 : k % 2, body, (void *)(intptr_t)k));
    if (!strcmp(mode, "mixed"))
        MP_OK(sdsm_barrier());
    for (int k = 0; k < make; k++) {
        void *ret = NULL;
        MP_OK(sdsm_thread_join(t[k], &ret));
        MP_CHECK("join value", k, sdsm_rank() * T + k + 1, (long)(intptr_t)ret);
    }
    return mp_finish(mode);
}
