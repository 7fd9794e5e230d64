/*
 * hang.c - programs that used to hang forever without a word.  Each must
 * now end within seconds with a message naming the ranks and the calls, or
 * (stuck, timeout) be reported while it waits.
 *
 *   mp_hang partial_barrier   rank 0 makes one more sdsm_barrier than the others
 *   mp_hang partial_alloc     rank 0 makes an sdsm_alloc the others skip
 *   mp_hang barrier_alloc     rank 0 in sdsm_barrier while the others are in sdsm_alloc
 *   mp_hang barrier_at        rank 0 names manager 0, the others manager 1
 *   mp_hang bcast_root        rank 0 says root 0, the others root 1
 *   mp_hang lock_finalize     rank 1 enters sdsm_finalize holding lock 5, which
 *                             rank 0 then waits for
 *   mp_hang stuck [MS]        rank 1 holds lock 3 for MS ms (default 3000) while the
 *                             others wait for it; then all goes well ("OK hang_stuck")
 *   mp_hang forever           rank 1 holds lock 3 and sleeps for an hour; the
 *                             others wait for it (for sdsmrun --timeout)
 *   mp_hang late              rank 1 sleeps for an hour before a barrier the
 *                             others are in (for sdsmrun --timeout)
 * With compute threads (sdsmrun --threads T), the main threads waiting in
 * sdsm_thread_join all along, as an OpenMP program's do:
 *   mp_hang compute MS        every compute thread computes for MS ms without
 *                             a runtime call (-1: for ever), then sdsm_barrier;
 *                             a healthy run, which no hang report may name
 *   mp_hang threads_stuck MS  thread 0 of rank 1 holds lock 3 and sleeps MS ms
 *                             while every other thread waits for it: nobody
 *                             computes, a hang report must be made
 */
#define MP_NAME "hang"
#include "mp.h"

static void stuck(long ms)
{
    int me = sdsm_rank();
    volatile long *x = sdsm_alloc(4096, 0);
    MP_NONNULL(x);
    if (me == 1) {
        MP_OK(sdsm_lock(3));
        printf("hang: rank 1 holds lock 3\n");
        fflush(stdout);
    }
    MP_OK(sdsm_barrier());
    if (me == 1) {
        mp_sleep_ms(ms);
        x[0] += 1;
        MP_OK(sdsm_unlock(3));
    } else {
        MP_OK(sdsm_lock(3));
        x[0] += 1;
        MP_OK(sdsm_unlock(3));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("lock-protected counter", 0, sdsm_nprocs(), x[0]);
    MP_OK(sdsm_barrier());
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long opt_ms;
static volatile long *shared;

static void *compute_body(void *p)
{
    (void)p;
    double until = now_s() + (double)opt_ms * 1e-3;
    volatile unsigned long spins = 0;
    while (opt_ms < 0 || now_s() < until) /* no sdsm call, no fault */
        spins++;
    MP_OK(sdsm_barrier());
    return NULL;
}

static void *stuck_body(void *p)
{
    int local = (int)(intptr_t)p;
    int holder = sdsm_rank() == 1 && local == 0;
    if (holder)
        MP_OK(sdsm_lock(3));
    MP_OK(sdsm_barrier());
    if (holder) {
        mp_sleep_ms(opt_ms);
        shared[0] += 1;
        MP_OK(sdsm_unlock(3));
    } else {
        MP_OK(sdsm_lock(3));
        shared[0] += 1;
        MP_OK(sdsm_unlock(3));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("lock-protected counter", 0, sdsm_thread_count(), shared[0]);
    return NULL;
}

/* T compute threads of fn on every rank, joined by the main thread. */
static void threads(void *(*fn)(void *))
{
    int t = sdsm_thread_count() / sdsm_nprocs();
    sdsm_thread_t th[64];
    MP_ASSERT(t >= 1 && t <= 64, "%d threads per rank", t);
    for (int k = 0; k < t; k++)
        MP_OK(sdsm_thread_create(&th[k], 0, fn, (void *)(intptr_t)k));
    for (int k = 0; k < t; k++)
        MP_OK(sdsm_thread_join(th[k], NULL));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    const char *what = argc > 1 ? argv[1] : "";
    int me = sdsm_rank();
    size_t ps = mp_page_size();
    void *blk = sdsm_alloc(4 * ps, 0); /* a first collective, so the faulty one is not #1 */
    MP_NONNULL(blk);
    MP_OK(sdsm_barrier());

    if (strcmp(what, "partial_barrier") == 0) {
        if (me == 0)
            MP_OK(sdsm_barrier());
    } else if (strcmp(what, "partial_alloc") == 0) {
        if (me == 0)
            MP_NONNULL(sdsm_alloc(ps, 0));
    } else if (strcmp(what, "barrier_alloc") == 0) {
        if (me == 0)
            MP_OK(sdsm_barrier());
        else
            MP_NONNULL(sdsm_alloc(ps, 0));
    } else if (strcmp(what, "barrier_at") == 0) {
        MP_OK(sdsm_barrier_at(me == 0 ? 0 : 1));
    } else if (strcmp(what, "bcast_root") == 0) {
        MP_OK(sdsm_bcast(blk, ps, me == 0 ? 0 : 1));
    } else if (strcmp(what, "lock_finalize") == 0) {
        if (me == 1)
            MP_OK(sdsm_lock(5));
        MP_OK(sdsm_barrier());
        if (me == 0) {
            mp_sleep_ms(200); /* rank 1 is in sdsm_finalize by now */
            MP_OK(sdsm_lock(5));
            MP_OK(sdsm_unlock(5));
        }
    } else if (strcmp(what, "stuck") == 0) {
        stuck(argc > 2 ? atol(argv[2]) : 3000);
        return mp_finish("hang_stuck");
    } else if (strcmp(what, "forever") == 0) {
        stuck(3600 * 1000L);
    } else if (strcmp(what, "compute") == 0) {
        opt_ms = argc > 2 ? atol(argv[2]) : 3000;
        threads(compute_body);
        return mp_finish("hang_compute");
    } else if (strcmp(what, "threads_stuck") == 0) {
        opt_ms = argc > 2 ? atol(argv[2]) : 3000;
        shared = sdsm_calloc(1, sizeof(long), 0);
        MP_NONNULL(shared);
        MP_OK(sdsm_barrier());
        threads(stuck_body);
        return mp_finish("hang_threads_stuck");
    } else if (strcmp(what, "late") == 0) {
        if (me == 1)
            mp_sleep_ms(3600 * 1000L);
        MP_OK(sdsm_barrier());
    } else {
        sdsm_abort(2, "hang: unknown scenario '%s'", what);
    }
    return mp_finish("hang");
}
