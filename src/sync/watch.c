/*
 * watch.c - the hang report: when a blocking call of some rank has waited
 * SDSM_HANG_REPORT seconds, rank 0 asks every rank what it is doing and
 * prints the answers, at most once per period, and the job goes on.
 *
 * Each rank runs a small watchdog thread that looks at its own wait records
 * (core/blocked.h) a few times per period; the first time one is older than
 * the period it tells rank 0 (HANG_NOTE).  Rank 0 sends HANG_QUERY to every
 * rank, whose service thread answers with one line (HANG_STATE) built from
 * its wait records, the locks it holds and the locks and barrier it manages,
 * so the report shows who waits for what and who holds it.  The same line
 * answers the launcher's question when its --timeout fires.
 *
 * A long wait is not a hang while the threads it waits for compute: the
 * main threads of an OpenMP program sit in sdsm_thread_join for the whole
 * run, and a serial part or an imbalance keeps threads in a barrier for as
 * long as one thread computes.  Who waits for whom is not known in general
 * (a barrier, a condition), so the job decides: each answer says whether
 * its rank is busy (a thread of the program computes, state R outside any
 * wait, or made a runtime call within the last two looks of the watchdog),
 * and rank 0 prints the round only if no rank is, or a page fault waited
 * the period (a page comes from a service thread, never from computation).
 */
#include "watch.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "core/coll.h"
#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/blocked.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/net.h"
#include "quiet.h"
#include "sync.h"

/* First byte of a HANG_STATE: what the rank's answer says beside its text. */
#define STATE_BUSY 1 /* a thread of the program computes or made a runtime call lately */
#define STATE_PAGE 2 /* a page fault has waited the period */

static struct {
    pthread_t thread;
    pthread_mutex_t mtx;
    pthread_cond_t cv;
    int running, stop;
    uint32_t reports;
    /* rank 0, handlers only: the round of questions asked last */
    uint32_t round;
    int open, answers, from, flags;
    uint32_t secs;
    uint64_t started, last_report;
    char *lines; /* one per rank, SDSM_HANG_STATE_MAX + 1 bytes each; "" none yet */
} watcher = {.mtx = PTHREAD_MUTEX_INITIALIZER};

static uint64_t period_ns(void) { return (uint64_t)sdsm_cfg.hang_report * 1000000000ull; }

/* How often the watchdog looks: a quarter of the period, at most 2 s. */
static uint64_t tick_ns(void)
{
    uint64_t tick = period_ns() / 4;
    return tick > 2000000000ull ? 2000000000ull : tick;
}

typedef struct text {
    char *buf;
    size_t len, off;
    int n;
    uint64_t quiet_max; /* the longest a computing thread has made no runtime call */
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

/* Compute threads by their id (sdsm_thread_id, omp_get_thread_num), the
 * main thread by name. */
static void label_name(int label, char *buf, size_t len)
{
    if (label < 0)
        snprintf(buf, len, "main thread");
    else
        snprintf(buf, len, "thread %d", label);
}

static void name(int rec, char *buf, size_t len)
{
    int label;
    if (sdsm_wait_label(rec, &label))
        label_name(label, buf, len);
    else
        snprintf(buf, len, "thread #%d", rec);
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
    case SDSM_WAIT_SLOT: snprintf(what, sizeof what, "ready, for a run slot (SDSM_RUN_THREADS)"); break;
    default: snprintf(what, sizeof what, "in an unknown wait"); break;
    }
    char who[32];
    name(thread, who, sizeof who);
    put(t, "%s%s waiting %.1f s %s", t->n++ ? "; " : "", who, (double)ns * 1e-9, what);
}

/* A thread of the program computing outside the runtime. */
static void one_app(void *arg, int label, int computing, int waiting, uint64_t quiet)
{
    text_t *t = arg;
    (void)waiting;
    if (!computing)
        return;
    char who[32];
    label_name(label, who, sizeof who);
    if (quiet == UINT64_MAX)
        put(t, "%s%s running", t->n++ ? "; " : "", who);
    else
        put(t, "%s%s running, no runtime call for %.1f s", t->n++ ? "; " : "", who, (double)quiet * 1e-9);
    if (quiet != UINT64_MAX && quiet > t->quiet_max)
        t->quiet_max = quiet;
}

/* An OpenMP program without a flush runs without the flag support
 * (omp/fences.c): a thread spinning on a plain flag another rank writes
 * would spin forever.  Say so where a thread computes that long. */
#define FLAG_HINT_NS (5ull * 1000000000ull)

static void flag_hint(text_t *t)
{
    /* (Not for a program with a flush whose support was turned off by hand:
     * it has the flush the text says it lacks.) */
    if (t->quiet_max >= FLAG_HINT_NS && sdsm_region_adopt.len && !sdsm_region_adopt.fences &&
        !sdsm_quiet_running())
        put(t, " (if it waits for a flag another rank writes: this program has no omp flush, so "
               "plain flags are not published; add the flush, or set SDSM_QUIET_US=1000 "
               "SDSM_HOME_TWINS=1)");
}

size_t sdsm_watch_describe(char *buf, size_t len)
{
    text_t t = {.buf = buf, .len = len};
    char more[1024];
    buf[0] = '\0';
    put(&t, "pid %d: ", (int)getpid());
    uint64_t now = sdsm_now_ns();
    sdsm_wait_each(one_wait, &t, now);
    sdsm_wait_each_app(one_app, &t, now);
    flag_hint(&t);
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

typedef struct busy {
    uint64_t recent, period;
    int flags;
} busy_t;

static void app_busy(void *arg, int label, int computing, int waiting, uint64_t quiet)
{
    busy_t *b = arg;
    (void)waiting;
    if (!computing && quiet >= b->recent)
        return;
    if (!(b->flags & STATE_BUSY)) { /* says why a round printed nothing (SDSM_LOG=debug) */
        char who[32];
        label_name(label, who, sizeof who);
        sdsm_debug("hang check: %s %s", who, computing ? "computes" : "called the runtime lately");
    }
    b->flags |= STATE_BUSY;
}

static void page_long(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns)
{
    busy_t *b = arg;
    (void)thread, (void)id;
    if (kind == SDSM_WAIT_PAGE && ns >= b->period)
        b->flags |= STATE_PAGE;
}

/* STATE_* of this rank now. */
static int state_flags(void)
{
    busy_t b = {.recent = 2 * tick_ns(), .period = period_ns()};
    uint64_t now = sdsm_now_ns();
    sdsm_wait_each_app(app_busy, &b, now);
    sdsm_wait_each(page_long, &b, now);
    return b.flags;
}

/* Rank 0: every answer of the round is in (or a new round starts before
 * they are): print them, unless the waits are for threads that compute. */
static void finish_round(void)
{
    int n = sdsm_net_nprocs();
    watcher.open = 0;
    if ((watcher.flags & STATE_BUSY) && !(watcher.flags & STATE_PAGE)) {
        sdsm_debug("hang check %u: rank %d has waited %u s, but threads compute: no report", watcher.round,
                   watcher.from, watcher.secs);
        return;
    }
    watcher.reports++;
    watcher.last_report = sdsm_now_ns();
    sdsm_warn("hang report %u: rank %d has waited %u s in a blocking call; what every rank is doing "
              "(SDSM_HANG_REPORT=%ld; the job goes on):",
              watcher.reports, watcher.from, watcher.secs, sdsm_cfg.hang_report);
    for (int r = 0; r < n; r++) {
        const char *line = watcher.lines + (size_t)r * (SDSM_HANG_STATE_MAX + 1);
        sdsm_warn("hang report %u: rank %d: %s", watcher.reports, r, line[0] ? line : "(no answer)");
    }
}

static int on_note(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t secs;
    memcpy(&secs, p, 4);
    if (sdsm_net_rank() != 0)
        return SDSM_EPROTO;
    (void)h;
    int n = sdsm_net_nprocs();
    uint64_t now = sdsm_now_ns();
    /* One report per period; a round that printed nothing does not hold the
     * next one back (the ranks note at most once per period each). */
    if ((watcher.open && now - watcher.started < period_ns()) ||
        (watcher.reports && now - watcher.last_report < period_ns()))
        return 0;
    if (!watcher.lines && !(watcher.lines = malloc((size_t)n * (SDSM_HANG_STATE_MAX + 1)))) {
        sdsm_warn("hang report: rank %d has waited %u s in a blocking call (no memory to ask "
                  "the ranks what they are doing)",
                  src, secs);
        return 0;
    }
    if (watcher.open)
        finish_round(); /* a rank that did not answer in a whole period */
    watcher.round++;
    watcher.open = 1;
    watcher.started = now;
    watcher.answers = 0;
    watcher.flags = 0;
    watcher.from = src;
    watcher.secs = secs;
    for (int r = 0; r < n; r++)
        watcher.lines[(size_t)r * (SDSM_HANG_STATE_MAX + 1)] = '\0';
    for (int r = 0; r < n; r++)
        sdsm_net_send(r, SDSM_MSG_HANG_QUERY, 0, watcher.round, NULL, 0, NULL, 0);
    return 0;
}

static int on_query(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)p;
    if (src != 0)
        return SDSM_EPROTO;
    char text[SDSM_HANG_STATE_MAX];
    text[0] = (char)state_flags();
    size_t n = sdsm_watch_describe(text + 1, sizeof text - 1);
    sdsm_net_send(0, SDSM_MSG_HANG_STATE, 0, h->seq, text, n + 1, NULL, 0);
    return 0;
}

static int on_state(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (sdsm_net_rank() != 0)
        return SDSM_EPROTO;
    if (!watcher.open || h->seq != watcher.round || h->len < 1 || src < 0 || src >= sdsm_net_nprocs())
        return 0; /* a round already printed, or never asked */
    char *text = watcher.lines + (size_t)src * (SDSM_HANG_STATE_MAX + 1);
    if (text[0])
        return 0;
    uint32_t len = h->len - 1;
    for (uint32_t i = 0; i < len; i++) /* one line of printable text, whatever arrived */
        text[i] = p[i + 1] >= 0x20 && p[i + 1] < 0x7f ? (char)p[i + 1] : '?';
    text[len] = '\0';
    if (!len) /* an empty line still counts as the rank's answer */
        snprintf(text, SDSM_HANG_STATE_MAX + 1, "?");
    watcher.flags |= p[0] & (STATE_BUSY | STATE_PAGE);
    if (++watcher.answers == sdsm_net_nprocs())
        finish_round();
    return 0;
}

static void *watch_main(void *arg)
{
    (void)arg;
    uint64_t period = period_ns(), tick = tick_ns(), noted = 0;
    pthread_mutex_lock(&watcher.mtx);
    while (!watcher.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = (uint64_t)ts.tv_nsec + tick;
        ts.tv_sec += (time_t)(t / 1000000000ull);
        ts.tv_nsec = (long)(t % 1000000000ull);
        pthread_cond_timedwait(&watcher.cv, &watcher.mtx, &ts);
        if (watcher.stop)
            break;
        uint64_t now = sdsm_now_ns(), waited = sdsm_wait_longest_ns(now);
        sdsm_wait_look(now);
        if (waited >= period && (!noted || now - noted >= period)) {
            noted = now;
            uint32_t secs = (uint32_t)(waited / 1000000000ull);
            sdsm_net_send(0, SDSM_MSG_HANG_NOTE, 0, 0, &secs, 4, NULL, 0);
        }
    }
    pthread_mutex_unlock(&watcher.mtx);
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
    watcher.reports = 0;
    watcher.open = 0;
    watcher.last_report = 0;
    return 0;
}

int sdsm_watch_start(void)
{
    if (sdsm_cfg.hang_report <= 0)
        return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&watcher.cv, &ca);
    pthread_condattr_destroy(&ca);
    watcher.stop = 0;
    int rc = pthread_create(&watcher.thread, NULL, watch_main, NULL);
    if (rc) {
        errno = rc;
        sdsm_warn("cannot start the hang watchdog (no SDSM_HANG_REPORT): %m");
        return 0;
    }
    watcher.running = 1;
    return 0;
}

void sdsm_watch_stop(void)
{
    if (!watcher.running)
        return;
    pthread_mutex_lock(&watcher.mtx);
    watcher.stop = 1;
    pthread_cond_signal(&watcher.cv);
    pthread_mutex_unlock(&watcher.mtx);
    pthread_join(watcher.thread, NULL);
    pthread_cond_destroy(&watcher.cv);
    watcher.running = 0;
}
