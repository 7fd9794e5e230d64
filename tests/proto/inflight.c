/*
 * inflight.c - a lock released at a home while the home is still working
 * through another rank's release (a diff batch whose first page's copies it
 * has collected, but whose invalidations it has not sent yet) must not hand
 * the next holder a copy that misses the home's own writes.
 *
 * Four ranks: H (0, home of pages A and B), W (1), Z (2), R (3).  Steps are
 * SLICE apart after a barrier:
 *   0  H holds lock 1.  W reads A and B and writes a word of each under
 *      lock 2 (held on); Z and R read A.
 *   1  Z writes a word of A under lock 3 and unlocks: the home invalidates
 *      W's copy (W sends its writes early, so W's release will announce A
 *      with no bytes and W leaves A's copyset) and R's.
 *   2  R reads A again (a copy without H's write to come) and asks for lock 1.
 *   3  A thread of H takes B's page lock (this test reaches into the runtime),
 *      so the home's service thread will stop at B.
 *   4  W unlocks lock 2: its batch [A: notice, B: diff] makes the home collect
 *      A's copy holders (Z, R) and then wait for B's lock.
 *   5  H writes A's counter and unlocks lock 1, which goes to R.
 *   7  H's thread lets B go.
 * R must read the counter H wrote.  Before the fix the home marked A in
 * flight only after the whole batch: its release at step 5 found A held by
 * nobody, announced nothing, and R got lock 1 and read its old copy.
 */
#define PT_NAME "inflight"
#include "pt.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "mem/page.h"

#define SLICE_MS 250
#define WORDS    512 /* longs per 4 KiB page */

static volatile long *a, *b;
static uint32_t pg_b;

static void sleep_until(const struct timespec *t0, int slices)
{
    struct timespec t = *t0;
    long ns = t.tv_nsec + (long)slices * SLICE_MS * 1000000L;
    t.tv_sec += ns / 1000000000L;
    t.tv_nsec = ns % 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
        ;
}

static struct timespec t0;

static void *hold_b(void *arg)
{
    (void)arg;
    sleep_until(&t0, 3);
    sdsm_page_lock(pg_b);
    sleep_until(&t0, 7);
    sdsm_page_unlock(pg_b);
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank();
    if (sdsm_nprocs() != 4)
        sdsm_abort(2, "inflight: run with -n 4");
    long *base = sdsm_calloc(2 * WORDS, sizeof(long), 0);
    if (!base)
        sdsm_abort(1, "inflight: sdsm_calloc failed");
    a = base;
    b = base + WORDS;
    if (!sdsm_region_page_of((const void *)b, &pg_b))
        sdsm_abort(1, "inflight: B is not a shared page");
    if (me == 0)
        sdsm_lock(1);
    sdsm_barrier();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile long sink = 0;
    pthread_t th;
    switch (me) {
    case 0: /* H */
        if (pthread_create(&th, NULL, hold_b, NULL))
            sdsm_abort(1, "inflight: pthread_create");
        sleep_until(&t0, 5);
        a[0] = 1; /* the counter */
        sdsm_unlock(1);
        pthread_join(th, NULL);
        break;
    case 1: /* W */
        sdsm_lock(2);
        sink += a[0] + b[0];
        a[64] = 11;
        b[64] = 12;
        sleep_until(&t0, 4);
        sdsm_unlock(2);
        break;
    case 2: /* Z */
        sink += a[0];
        sleep_until(&t0, 1);
        sdsm_lock(3);
        a[128] = 21;
        sdsm_unlock(3);
        break;
    case 3: /* R */
        sink += a[0];
        sleep_until(&t0, 2);
        sink += a[0];
        sdsm_lock(1);
        PT_CHECK("the counter its home wrote before passing the lock", 1, a[0]);
        sdsm_unlock(1);
        break;
    }
    (void)sink;
    sdsm_barrier();
    PT_CHECK("A's counter", 1, a[0]);
    PT_CHECK("W's word of A", 11, a[64]);
    PT_CHECK("W's word of B", 12, b[64]);
    PT_CHECK("Z's word of A", 21, a[128]);
    sdsm_barrier();
    sdsm_free(base);
    pt_ok();
    return 0;
}
