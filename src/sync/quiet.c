/*
 * quiet.c - bounded visibility for threads that wait without a call.
 *
 * OpenMP programs may synchronize threads through a shared flag read and
 * written with plain accesses plus `#pragma omp flush` (NPB LU's pipelined
 * SSOR: `while (flag[i-1] == 0) { #pragma omp flush(flag) }`).  gcc emits a
 * fence for the flush, no call, so under release consistency the flag's
 * new value would stay in the writer's copy until its next release, and
 * the reader would spin on its own old copy for ever.
 *
 * A rank whose threads wait like that make no runtime call at all: no
 * fault (the pages they poll are valid), no synchronization, no atomic.
 * So a small thread of each rank looks at the counters of those calls
 * every SDSM_QUIET_US microseconds; if none moved for a whole period while
 * the rank holds writes it has not released, it publishes them as an
 * unlock does (sdsm_proto->publish): diffs go to the homes, which
 * invalidate every other copy before they answer, and a home's own writes
 * invalidate the copies of its pages.  The spinning reader then faults on
 * the flag's page and fetches the new value: visible about SDSM_QUIET_US
 * plus a round trip after the writer's rank went quiet.  A reader needs
 * nothing of its own: the writer's home removes its stale copy.
 *
 * Cost for programs that do not spin: one wake-up per period and a few
 * counter reads; a publish only when a rank computes for a whole period
 * without a fault while holding unreleased writes.  Those are published
 * early (the next release has less to do), and rewriting them costs a
 * write fault again; a rank that keeps rewriting the pages it published
 * last time (at least 16, half of them) doubles its period, up to 64
 * times, until its next lock or barrier - unless other ranks' writes took
 * copies away from it since its last publish: then it is one side of an
 * exchange through flags (a pipeline: NPB LU's downstream rank rewrites
 * its whole slab of rows for every plane, and each of its publishes
 * carries the flag its upstream waits for), and a longer period would
 * only slow both down (LU.S at 2 ranks: 19.6 s with the back-off, 5.6 s
 * without).  ibec binds writes to locks: it
 * has no publish, and this thread does not run.
 */
#include "sync/quiet.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "mem/page.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/proto.h"

#define BACKOFF_MAX  64u
#define REWRITES_MIN 16u

static struct {
    pthread_t thread;
    pthread_mutex_t mtx;
    pthread_cond_t cv;
    int running, stop, soon;
} publisher = {.mtx = PTHREAD_MUTEX_INITIALIZER};

static uint64_t stat(sdsm_stat_t s) { return atomic_load_explicit(&sdsm_stats.v[s], memory_order_relaxed); }

/* The runtime calls of the rank's threads so far: any of them moves it. */
static uint64_t calls(void)
{
    return stat(SDSM_ST_READ_FAULTS) + stat(SDSM_ST_WRITE_FAULTS) + stat(SDSM_ST_LOCK_ACQUIRES) +
           stat(SDSM_ST_BARRIERS) + stat(SDSM_ST_COND_WAITS) + stat(SDSM_ST_ATOMICS_HOME);
}

/* The program's own synchronizations so far (they end a back-off). */
static uint64_t syncs(void) { return stat(SDSM_ST_LOCK_ACQUIRES) + stat(SDSM_ST_BARRIERS); }

/* Copies other ranks' writes took from this one so far. */
static uint64_t taken(void) { return stat(SDSM_ST_INVALIDATIONS); }

/* Publish now (sdsm_home_publish_soon): any thread, a handler too. */
static void soon(void)
{
    pthread_mutex_lock(&publisher.mtx);
    publisher.soon = 1;
    pthread_cond_signal(&publisher.cv);
    pthread_mutex_unlock(&publisher.mtx);
}

/* Sleep for ns unless stopped or asked to publish now; returns 1 once
 * stopped, 2 when asked. */
static int nap(uint64_t ns)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec += (long)(ns % 1000000000u);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&publisher.mtx);
    while (!publisher.stop && !publisher.soon &&
           pthread_cond_timedwait(&publisher.cv, &publisher.mtx, &until) != ETIMEDOUT)
        ;
    int rc = publisher.stop ? 1 : publisher.soon ? 2 : 0;
    publisher.soon = 0;
    pthread_mutex_unlock(&publisher.mtx);
    return rc;
}

/* SDSM_QUIET_US; -1: on for OpenMP programs whose code holds a flush
 * (which makes plain flags correct: omp/fences.c), also where the flush
 * is a call that publishes (SDSM_FLUSH_PUBLISH): a thread may write a flag
 * and go into a barrier with no flush of its own (the barrier implies
 * one), and only this thread then publishes its rank's arrival to the
 * thread spinning on that flag; off for the others
 * (OpenMP programs without one synchronize only through runtime calls;
 * for the rest the model is release consistency: a flag read without a
 * lock is a race), which then pay no wake-up. */
static long period_us(void)
{
    if (sdsm_cfg.quiet_us >= 0)
        return sdsm_cfg.quiet_us;
    return sdsm_region_adopt.fences ? 1000 : 0;
}

static void *quiet_main(void *arg)
{
    (void)arg;
    uint64_t period = (uint64_t)period_us() * 1000u, last = calls(), synced = syncs(), lost = taken();
    unsigned backoff = 1;
    for (int rc; (rc = nap(period * backoff)) != 1;) {
        uint64_t now = calls();
        if (now != last && rc != 2) {
            last = now;
            continue;
        }
        if (syncs() != synced) {
            synced = syncs();
            backoff = 1;
        }
        uint32_t written = 0, again = 0;
        if (sdsm_proto->publish(&written, &again))
            break;
        sdsm_stat_add(SDSM_ST_QUIET_PUBLISHES, written > 0);
        sdsm_stat_add(SDSM_ST_QUIET_PAGES, written);
        int exchange = taken() != lost;
        lost = taken();
        if (exchange || again < REWRITES_MIN)
            backoff = 1;
        else if (2 * again >= written)
            backoff = backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : backoff * 2;
        last = calls();
    }
    return NULL;
}

int sdsm_quiet_start(void)
{
    if (period_us() <= 0 || !sdsm_proto->publish || sdsm_net_nprocs() < 2)
        return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&publisher.cv, &ca);
    pthread_condattr_destroy(&ca);
    publisher.stop = 0;
    int rc = pthread_create(&publisher.thread, NULL, quiet_main, NULL);
    if (rc) {
        errno = rc;
        sdsm_warn("cannot start the quiet-rank publisher (SDSM_QUIET_US is off): %m");
        return 0;
    }
    publisher.running = 1;
    sdsm_home_publish_soon = soon;
    sdsm_stat_add(SDSM_ST_FLAGS_ON, 1);
    return 0;
}

int sdsm_quiet_running(void) { return publisher.running; }

void sdsm_quiet_stop(void)
{
    if (!publisher.running)
        return;
    sdsm_home_publish_soon = NULL;
    pthread_mutex_lock(&publisher.mtx);
    publisher.stop = 1;
    pthread_cond_signal(&publisher.cv);
    pthread_mutex_unlock(&publisher.mtx);
    pthread_join(publisher.thread, NULL);
    /* Early diffs still held for a publish (proto/home.h) are lifted now. */
    uint32_t written, again;
    sdsm_proto->publish(&written, &again);
    pthread_cond_destroy(&publisher.cv);
    publisher.running = 0;
}
