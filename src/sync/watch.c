/*
 * watch.c - the hang report: when a blocking call of some rank has waited
 * SDSM_HANG_REPORT seconds, rank 0 asks every rank what it is doing and
 * prints the answers, at most once per period, and the job goes on.
 *
 * Each rank runs a small watchdog thread that looks at its own wait records
 * (core/waits.h) a few times per period; the first time one is older than
 * the period it tells rank 0 (HANG_NOTE).  Rank 0 sends HANG_QUERY to every
 * rank, whose service thread answers with one line (HANG_STATE) built from
 * its wait records, the locks it holds and the locks and barrier it manages,
 * so the report shows who waits for what and who holds it.  The same line
 * answers the launcher's question when its --timeout fires.
 */
#include "watch.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/waits.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/net.h"
#include "sync.h"

static struct {
    pthread_t       thread;
    pthread_mutex_t mtx;
    pthread_cond_t  cv;
    int             running, stop;
    uint64_t        last_report; /* rank 0, handlers only */
    uint32_t        reports;
} W = {.mtx = PTHREAD_MUTEX_INITIALIZER};

typedef struct text {
    char  *buf;
    size_t len, off;
    int    n;
} text_t;

static void put(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_t *t, const char *fmt, ...)
{
    if (t->off >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->off, t->len - t->off, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->off += (size_t)k;
}

static void one_wait(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns)
{
    text_t *t = arg;
    char what[320];
    switch (kind) {
    case SDSM_WAIT_COLL: {
        char c[256];
        sdsm_coll_t now;
        sdsm_coll_snapshot(&now);
        sdsm_coll_describe(&now, c, sizeof c);
        snprintf(what, sizeof what, "in %s, for its manager rank %lld", c, (long long)id);
        break;
    }
    case SDSM_WAIT_LOCK:
        snprintf(what, sizeof what, "in sdsm_lock(%lld), for its manager rank %d", (long long)id,
                 sdsm_sync_manager((uint32_t)id));
        break;
    case SDSM_WAIT_COND:
        snprintf(what, sizeof what, "in sdsm_cond_wait(%lld), manager rank %d", (long long)id,
                 sdsm_sync_manager((uint32_t)id));
        break;
    case SDSM_WAIT_PAGE: {
        uint32_t pg = (uint32_t)id;
        int home = pg < sdsm_region.npages && sdsm_alloc_find(pg) ? sdsm_page_home(pg) : -1;
        snprintf(what, sizeof what, "on a page fault at %p (page %u, home rank %d)",
                 (void *)sdsm_page_app(pg), pg, home);
        break;
    }
    case SDSM_WAIT_GROUP:
        if (id == -2)
            snprintf(what, sizeof what, "in sdsm_thread_join");
        else if (id < 0)
            snprintf(what, sizeof what, "in sdsm_barrier, for the other compute threads of this rank");
        else
            snprintf(what, sizeof what, "in sdsm_group_barrier(%lld)", (long long)id);
        break;
    case SDSM_WAIT_SLOT:
        snprintf(what, sizeof what, "ready, for a run slot (SDSM_RUN_THREADS)");
        break;
    default: snprintf(what, sizeof what, "in an unknown wait"); break;
    }
    put(t, "%sthread %d waiting %.1f s %s", t->n++ ? "; " : "", thread, (double)ns * 1e-9, what);
}

size_t sdsm_watch_describe(char *buf, size_t len)
{
    text_t t = {.buf = buf, .len = len};
    char more[1024];
    buf[0] = '\0';
    put(&t, "pid %d: ", (int)getpid());
    sdsm_wait_each(one_wait, &t, sdsm_now_ns());
    if (!t.n)
        put(&t, "running, in no blocking sdsm call");
    if (sdsm_lock_held_list(more, sizeof more))
        put(&t, "; holds lock %s", more);
    if (sdsm_lock_describe_managed(more, sizeof more))
        put(&t, "; %s", more);
    if (sdsm_barrier_describe(more, sizeof more))
        put(&t, "; %s", more);
    return t.off < len ? t.off : len - 1;
}

static int on_note(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t secs;
    memcpy(&secs, p, 4);
    if (sdsm_net_rank() != 0)
        return -EPROTO;
    (void)h;
    uint64_t now = sdsm_now_ns(), period = (uint64_t)sdsm_cfg.hang_report * 1000000000ull;
    if (W.reports && now - W.last_report < period)
        return 0; /* once per period */
    W.last_report = now;
    W.reports++;
    sdsm_warn("hang report %u: rank %d has waited %u s in a blocking call; what every rank is doing "
              "(SDSM_HANG_REPORT=%ld; the job goes on):", W.reports, src, secs, sdsm_cfg.hang_report);
    for (int r = 0; r < sdsm_net_nprocs(); r++)
        sdsm_net_send(r, SDSM_MSG_HANG_QUERY, 0, W.reports, NULL, 0, NULL, 0);
    return 0;
}

static int on_query(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)p;
    if (src != 0)
        return -EPROTO;
    char text[SDSM_HANG_STATE_MAX];
    size_t n = sdsm_watch_describe(text, sizeof text);
    sdsm_net_send(0, SDSM_MSG_HANG_STATE, 0, h->seq, text, n, NULL, 0);
    return 0;
}

static int on_state(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (sdsm_net_rank() != 0)
        return -EPROTO;
    char text[SDSM_HANG_STATE_MAX + 1];
    for (uint32_t i = 0; i < h->len; i++) /* one line of printable text, whatever arrived */
        text[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    text[h->len] = '\0';
    sdsm_warn("hang report %u: rank %d: %s", h->seq, src, text);
    return 0;
}

static void *watch_main(void *arg)
{
    (void)arg;
    uint64_t period = (uint64_t)sdsm_cfg.hang_report * 1000000000ull, noted = 0;
    uint64_t tick = period / 4;
    if (tick > 2000000000ull)
        tick = 2000000000ull;
    pthread_mutex_lock(&W.mtx);
    while (!W.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = (uint64_t)ts.tv_nsec + tick;
        ts.tv_sec += (time_t)(t / 1000000000ull);
        ts.tv_nsec = (long)(t % 1000000000ull);
        pthread_cond_timedwait(&W.cv, &W.mtx, &ts);
        if (W.stop)
            break;
        uint64_t now = sdsm_now_ns(), waited = sdsm_wait_longest_ns(now);
        if (waited >= period && (!noted || now - noted >= period)) {
            noted = now;
            uint32_t secs = (uint32_t)(waited / 1000000000ull);
            sdsm_net_send(0, SDSM_MSG_HANG_NOTE, 0, 0, &secs, 4, NULL, 0);
        }
    }
    pthread_mutex_unlock(&W.mtx);
    return NULL;
}

static void on_ctrl_query(void)
{
    char text[SDSM_HANG_STATE_MAX];
    size_t n = sdsm_watch_describe(text, sizeof text);
    sdsm_boot_state(text, n);
}

int sdsm_watch_init(void)
{
    sdsm_net_on_ctrl_query = on_ctrl_query;
    sdsm_msg_set_handler(SDSM_MSG_HANG_NOTE, on_note);
    sdsm_msg_set_handler(SDSM_MSG_HANG_QUERY, on_query);
    sdsm_msg_set_handler(SDSM_MSG_HANG_STATE, on_state);
    W.reports = 0;
    W.last_report = 0;
    return 0;
}

int sdsm_watch_start(void)
{
    if (sdsm_cfg.hang_report <= 0)
        return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&W.cv, &ca);
    pthread_condattr_destroy(&ca);
    W.stop = 0;
    int rc = pthread_create(&W.thread, NULL, watch_main, NULL);
    if (rc) {
        errno = rc;
        sdsm_warn("cannot start the hang watchdog (no SDSM_HANG_REPORT): %m");
        return 0;
    }
    W.running = 1;
    return 0;
}

void sdsm_watch_stop(void)
{
    if (!W.running)
        return;
    pthread_mutex_lock(&W.mtx);
    W.stop = 1;
    pthread_cond_signal(&W.cv);
    pthread_mutex_unlock(&W.mtx);
    pthread_join(W.thread, NULL);
    pthread_cond_destroy(&W.cv);
    W.running = 0;
}
