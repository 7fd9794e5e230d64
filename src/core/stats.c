/*
 * stats.c - counters and the end-of-run report.  A line per rank says where
 * its time went first (faults, barriers, locks, traffic); then the counters
 * by group, one column per rank so that 8 or 16 ranks still fit a terminal.
 * Rows that are zero on every rank are left out unless SDSM_STATS=all;
 * SDSM_STATS=json prints every counter in its raw unit for scripts.
 */
#include "stats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

sdsm_stats_t sdsm_stats;

uint64_t sdsm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sdsm_stats_snapshot(sdsm_stats_snap_t *out)
{
    for (int i = 0; i < SDSM_ST_COUNT; i++)
        out->v[i] = atomic_load_explicit(&sdsm_stats.v[i], memory_order_relaxed);
    for (int i = 0; i < SDSM_STATS_MAX_TYPES; i++) {
        out->msgs_sent[i] = atomic_load_explicit(&sdsm_stats.msgs_sent[i], memory_order_relaxed);
        out->bytes_sent[i] = atomic_load_explicit(&sdsm_stats.bytes_sent[i], memory_order_relaxed);
        out->msgs_recv[i] = atomic_load_explicit(&sdsm_stats.msgs_recv[i], memory_order_relaxed);
        out->bytes_recv[i] = atomic_load_explicit(&sdsm_stats.bytes_recv[i], memory_order_relaxed);
    }
}

/* How a row's values read: its unit, and what its total is. */
typedef enum { U_COUNT, U_BYTES, U_NS, U_MAX, U_FLAG } unit_t;

static const char *const unit_names[] = {"count", "bytes", "ns", "max", "flag"};

enum { G_FAULTS, G_PAGES, G_SYNC, G_THREADS, G_MSGS, G_SETUP, G_COUNT };

static const char *const group_names[G_COUNT] = {
    "page faults and fetches", "pages and diffs (coherence)", "synchronization",
    "threads and waiting",     "messages (header included)",  "set-up"};

static const struct {
    const char *name; /* the row's label; a unit is added to bytes and times */
    const char *key;  /* JSON */
    unit_t unit;
    int group;
} rows[SDSM_ST_COUNT] = {
    [SDSM_ST_READ_FAULTS] = {"read faults", "read_faults", U_COUNT, G_FAULTS},
    [SDSM_ST_WRITE_FAULTS] = {"write faults", "write_faults", U_COUNT, G_FAULTS},
    [SDSM_ST_FAULT_WAIT_NS] = {"time in faults", "fault_time_ns", U_NS, G_FAULTS},
    [SDSM_ST_PAGES_FETCHED] = {"pages fetched", "pages_fetched", U_COUNT, G_FAULTS},
    [SDSM_ST_BYTES_FETCHED] = {"bytes fetched", "bytes_fetched", U_BYTES, G_FAULTS},
    [SDSM_ST_ZC_PAGES] = {"pages read zero-copy", "pages_zerocopy", U_COUNT, G_FAULTS},
    [SDSM_ST_ZC_DECLINED] = {"zero-copy declined (written at home)", "zerocopy_declined", U_COUNT, G_FAULTS},
    [SDSM_ST_PREFETCH_PAGES] = {"pages prefetched (call)", "prefetch_pages", U_COUNT, G_FAULTS},
    [SDSM_ST_PREFETCH_REQS] = {"prefetch requests", "prefetch_requests", U_COUNT, G_FAULTS},
    [SDSM_ST_AHEAD_PAGES] = {"pages prefetched (auto)", "ahead_pages", U_COUNT, G_FAULTS},
    [SDSM_ST_AHEAD_USED] = {"prefetched (auto) used", "ahead_used", U_COUNT, G_FAULTS},
    [SDSM_ST_AHEAD_WASTED] = {"prefetched (auto) unused", "ahead_wasted", U_COUNT, G_FAULTS},
    [SDSM_ST_WRITE_AHEAD] = {"pages opened ahead (write)", "write_ahead_pages", U_COUNT, G_FAULTS},
    [SDSM_ST_ATOMICS_HOME] = {"atomics done at a remote home", "atomics_remote", U_COUNT, G_FAULTS},
    [SDSM_ST_PAGES_SERVED] = {"pages served (home)", "pages_served", U_COUNT, G_PAGES},
    [SDSM_ST_PAGES_UPDATED] = {"pages pushed in (update)", "pages_updated", U_COUNT, G_PAGES},
    [SDSM_ST_PAGES_UNMAPPED] = {"pages unmapped (ibec)", "pages_unmapped", U_COUNT, G_PAGES},
    [SDSM_ST_INVALIDATIONS] = {"pages invalidated", "pages_invalidated", U_COUNT, G_PAGES},
    [SDSM_ST_TWINS] = {"twins made", "twins", U_COUNT, G_PAGES},
    [SDSM_ST_TWIN_GUARDS] = {"invalidations ahead of home writes", "twin_guards", U_COUNT, G_PAGES},
    [SDSM_ST_DIFFS_MADE] = {"diffs made", "diffs_made", U_COUNT, G_PAGES},
    [SDSM_ST_DIFF_BYTES_MADE] = {"diff bytes made", "diff_bytes_made", U_BYTES, G_PAGES},
    [SDSM_ST_DIFF_RUNS_MADE] = {"diff runs made", "diff_runs_made", U_COUNT, G_PAGES},
    [SDSM_ST_DIFF_WIRE_BYTES] = {"diff bytes encoded", "diff_bytes_encoded", U_BYTES, G_PAGES},
    [SDSM_ST_DIFFS_APPLIED] = {"diffs applied (home)", "diffs_applied", U_COUNT, G_PAGES},
    [SDSM_ST_DIFF_BYTES_APPLIED] = {"diff bytes applied", "diff_bytes_applied", U_BYTES, G_PAGES},
    [SDSM_ST_DIFFS_EARLY] = {"diff batches sent early (invalidated)", "diffs_early", U_COUNT, G_PAGES},
    [SDSM_ST_WBUF_FLUSHES] = {"diffs sent early (wbuf)", "write_buffer_flushes", U_COUNT, G_PAGES},
    [SDSM_ST_HOT_KEPT] = {"home pages kept open (hot)", "hot_kept", U_COUNT, G_PAGES},
    [SDSM_ST_HOT_CLEAN] = {"hot pages seen unwritten", "hot_clean", U_COUNT, G_PAGES},
    [SDSM_ST_MIGRATIONS] = {"homes moved to their single writer", "homes_migrated", U_COUNT, G_PAGES},
    [SDSM_ST_REREAD_PAGES] = {"pages fetched again after a barrier", "reread_pages", U_COUNT, G_FAULTS},
    [SDSM_ST_REREAD_REQS] = {"...requests they took", "reread_requests", U_COUNT, G_FAULTS},
    [SDSM_ST_REREAD_USED] = {"...read before the next barrier", "reread_used", U_COUNT, G_FAULTS},
    [SDSM_ST_OMP_REGIONS] = {"OpenMP parallel regions", "omp_regions", U_COUNT, G_SYNC},
    [SDSM_ST_QUIET_PUBLISHES] = {"quiet publishes (SDSM_QUIET_US)", "quiet_publishes", U_COUNT, G_PAGES},
    [SDSM_ST_QUIET_PAGES] = {"pages published while quiet", "quiet_pages", U_COUNT, G_PAGES},
    [SDSM_ST_FLUSH_PUBLISHES] = {"flush publishes (SDSM_FLUSH_PUBLISH)", "flush_publishes", U_COUNT, G_PAGES},
    [SDSM_ST_FLUSH_PAGES] = {"pages published by a flush", "flush_pages", U_COUNT, G_PAGES},
    [SDSM_ST_BARRIERS] = {"barriers", "barriers", U_COUNT, G_SYNC},
    [SDSM_ST_BARRIER_WAIT_NS] = {"barrier wait", "barrier_wait_ns", U_NS, G_SYNC},
    [SDSM_ST_BARRIER_ROUNDS] = {"barrier rounds", "barrier_rounds", U_COUNT, G_SYNC},
    [SDSM_ST_LOCK_ACQUIRES] = {"lock acquires", "lock_acquires", U_COUNT, G_SYNC},
    [SDSM_ST_LOCK_WAIT_NS] = {"lock wait", "lock_wait_ns", U_NS, G_SYNC},
    [SDSM_ST_LOCK_HANDOFFS] = {"lock local hand-offs", "lock_handoffs", U_COUNT, G_SYNC},
    [SDSM_ST_LOCK_CACHED] = {"lock kept here, taken again", "lock_cached", U_COUNT, G_SYNC},
    [SDSM_ST_COND_WAITS] = {"cond waits", "cond_waits", U_COUNT, G_SYNC},
    [SDSM_ST_IBEC_OVERLAPS] = {"sections overlapped", "ibec_overlaps", U_COUNT, G_SYNC},
    [SDSM_ST_IBEC_HANDOVERS] = {"section page hand-overs", "ibec_handovers", U_COUNT, G_SYNC},
    [SDSM_ST_RUN_MAX] = {"threads running max", "threads_running_max", U_MAX, G_THREADS},
    [SDSM_ST_RUN_YIELDS] = {"run slots yielded", "run_yields", U_COUNT, G_THREADS},
    [SDSM_ST_READY_WAIT_NS] = {"ready wait", "ready_wait_ns", U_NS, G_THREADS},
    [SDSM_ST_READY_SLEEPS] = {"ready threads asleep for a slot", "ready_sleeps", U_COUNT, G_THREADS},
    [SDSM_ST_RUN_FORCED] = {"run slots forced (holders stalled)", "run_forced", U_COUNT, G_THREADS},
    [SDSM_ST_RUN_HANDED] = {"barrier waiters handed to run slots", "run_handed", U_COUNT, G_THREADS},
    [SDSM_ST_RUN_LENT] = {"run slots lent", "run_lent", U_COUNT, G_THREADS},
    [SDSM_ST_SPIN_WON] = {"polls answered", "polls_answered", U_COUNT, G_THREADS},
    [SDSM_ST_SPIN_LOST] = {"polls timed out", "polls_timed_out", U_COUNT, G_THREADS},
    [SDSM_ST_SPIN_SKIPPED] = {"polls skipped (not paying)", "polls_skipped", U_COUNT, G_THREADS},
    [SDSM_ST_SPIN_STOLEN] = {"polls that lost their CPU to another job", "polls_stolen", U_COUNT, G_THREADS},
    [SDSM_ST_LEAD_WAITS] = {"waits in the event loop", "event_loop_waits", U_COUNT, G_THREADS},
    [SDSM_ST_LEAD_KICKS] = {"event-loop waiters kicked", "event_loop_kicks", U_COUNT, G_THREADS},
    [SDSM_ST_SERVICE_WAKES] = {"service thread woken", "service_wakes", U_COUNT, G_THREADS},
    [SDSM_ST_SERVICE_ASIDE] = {"service thread stepped aside", "service_aside", U_COUNT, G_THREADS},
    [SDSM_ST_REQ_PINS] = {"requests pinned to their waiter", "requests_pinned", U_COUNT, G_THREADS},
    [SDSM_ST_REJECTED_MSGS] = {"messages rejected", "messages_rejected", U_COUNT, G_MSGS},
    [SDSM_ST_LOSS_PROBES] = {"loss probes", "loss_probes", U_COUNT, G_MSGS},
    [SDSM_ST_WPT_ON] = {"written-page tracking", "written_page_tracking", U_FLAG, G_SETUP},
    [SDSM_ST_FLAGS_ON] = {"flag support (quiet publisher)", "flag_support", U_FLAG, G_SETUP},
    [SDSM_ST_IBEC_KEYED] = {"ibec sections at once (keys)", "ibec_keyed_sections", U_MAX, G_SETUP},
};

/* The order rows are printed in (the enum's is the order counters were added), a row a
 * line. */
/* clang-format off */
static const unsigned char order[] = {
    SDSM_ST_READ_FAULTS,
    SDSM_ST_WRITE_FAULTS,
    SDSM_ST_FAULT_WAIT_NS,
    SDSM_ST_PAGES_FETCHED,
    SDSM_ST_BYTES_FETCHED,
    SDSM_ST_ZC_PAGES,
    SDSM_ST_ZC_DECLINED,
    SDSM_ST_PREFETCH_PAGES,
    SDSM_ST_PREFETCH_REQS,
    SDSM_ST_REREAD_PAGES,
    SDSM_ST_REREAD_REQS,
    SDSM_ST_REREAD_USED,
    SDSM_ST_AHEAD_PAGES,
    SDSM_ST_AHEAD_USED,
    SDSM_ST_AHEAD_WASTED,
    SDSM_ST_WRITE_AHEAD,
    SDSM_ST_ATOMICS_HOME,
    SDSM_ST_PAGES_SERVED,
    SDSM_ST_PAGES_UPDATED,
    SDSM_ST_PAGES_UNMAPPED,
    SDSM_ST_INVALIDATIONS,
    SDSM_ST_TWINS,
    SDSM_ST_TWIN_GUARDS,
    SDSM_ST_DIFFS_MADE,
    SDSM_ST_DIFF_BYTES_MADE,
    SDSM_ST_DIFF_RUNS_MADE,
    SDSM_ST_DIFF_WIRE_BYTES,
    SDSM_ST_DIFFS_APPLIED,
    SDSM_ST_DIFF_BYTES_APPLIED,
    SDSM_ST_DIFFS_EARLY,
    SDSM_ST_WBUF_FLUSHES,
    SDSM_ST_HOT_KEPT,
    SDSM_ST_HOT_CLEAN,
    SDSM_ST_MIGRATIONS,
    SDSM_ST_QUIET_PUBLISHES,
    SDSM_ST_QUIET_PAGES,
    SDSM_ST_FLUSH_PUBLISHES,
    SDSM_ST_FLUSH_PAGES,
    SDSM_ST_BARRIERS,
    SDSM_ST_BARRIER_WAIT_NS,
    SDSM_ST_BARRIER_ROUNDS,
    SDSM_ST_OMP_REGIONS,
    SDSM_ST_LOCK_ACQUIRES,
    SDSM_ST_LOCK_WAIT_NS,
    SDSM_ST_LOCK_HANDOFFS,
    SDSM_ST_LOCK_CACHED,
    SDSM_ST_COND_WAITS,
    SDSM_ST_IBEC_OVERLAPS,
    SDSM_ST_IBEC_HANDOVERS,
    SDSM_ST_RUN_MAX,
    SDSM_ST_RUN_YIELDS,
    SDSM_ST_READY_WAIT_NS,
    SDSM_ST_READY_SLEEPS,
    SDSM_ST_RUN_FORCED,
    SDSM_ST_RUN_HANDED,
    SDSM_ST_RUN_LENT,
    SDSM_ST_SPIN_WON,
    SDSM_ST_SPIN_LOST,
    SDSM_ST_SPIN_SKIPPED,
    SDSM_ST_SPIN_STOLEN,
    SDSM_ST_LEAD_WAITS,
    SDSM_ST_LEAD_KICKS,
    SDSM_ST_SERVICE_WAKES,
    SDSM_ST_SERVICE_ASIDE,
    SDSM_ST_REQ_PINS,
    SDSM_ST_REJECTED_MSGS,
    SDSM_ST_LOSS_PROBES,
    SDSM_ST_WPT_ON,
    SDSM_ST_FLAGS_ON,
    SDSM_ST_IBEC_KEYED,
};
/* clang-format on */
_Static_assert(sizeof order == SDSM_ST_COUNT, "every counter has its place in order[]");

const char *sdsm_stats_key(int stat) { return stat >= 0 && stat < SDSM_ST_COUNT ? rows[stat].key : NULL; }

/* 1234567 as "1,234,567" into buf (27 bytes hold any uint64_t). */
static const char *commas(uint64_t v, char *buf)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

/* A byte count as "12.3 MiB": the unit a reader compares at a glance. */
static const char *human_bytes(uint64_t v, char *buf, size_t len)
{
    static const char *const u[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double d = (double)v;
    int i = 0;
    while (d >= 1024 && i < 4) {
        d /= 1024;
        i++;
    }
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", d, u[i]);
    return buf;
}

static uint64_t sum_types(const uint64_t *a)
{
    uint64_t t = 0;
    for (int i = 0; i < SDSM_STATS_MAX_TYPES; i++)
        t += a[i];
    return t;
}

/* A time as "2.31 s" or "41.7 ms": short runs stay readable. */
static const char *human_ns(uint64_t ns, char *buf, size_t len)
{
    snprintf(buf, len, ns >= 1000000000u ? "%.2f s" : "%.1f ms", ns >= 1000000000u ? ns / 1e9 : ns / 1e6);
    return buf;
}

/* "0.42 s in 340 barriers", or "no barriers". */
static const char *time_in(uint64_t ns, uint64_t n, const char *what, char *buf, size_t len)
{
    char t[32], c[32];
    if (!n)
        snprintf(buf, len, "no %s", what);
    else
        snprintf(buf, len, "%s in %s %.*s", human_ns(ns, t, sizeof t), commas(n, c),
                 (int)strlen(what) - (n == 1), what); /* "1 lock", "2 locks" */
    return buf;
}

/* The line that says where a rank's time and traffic went. */
static void summary(FILE *out, int r, const sdsm_stats_snap_t *s)
{
    char f[32], rd[32], wr[32], bar[80], lk[80], sent[32], recv[32], ms[32], mr[32];
    const uint64_t *v = s->v;
    fprintf(out,
            "rank %d: %s in faults (%s read, %s write), %s, %s; sent %s in %s messages, received %s in %s\n",
            r, human_ns(v[SDSM_ST_FAULT_WAIT_NS], f, sizeof f), commas(v[SDSM_ST_READ_FAULTS], rd),
            commas(v[SDSM_ST_WRITE_FAULTS], wr),
            time_in(v[SDSM_ST_BARRIER_WAIT_NS], v[SDSM_ST_BARRIERS], "barriers", bar, sizeof bar),
            time_in(v[SDSM_ST_LOCK_WAIT_NS], v[SDSM_ST_LOCK_ACQUIRES], "locks", lk, sizeof lk),
            human_bytes(sum_types(s->bytes_sent), sent, sizeof sent), commas(sum_types(s->msgs_sent), ms),
            human_bytes(sum_types(s->bytes_recv), recv, sizeof recv), commas(sum_types(s->msgs_recv), mr));
}

typedef struct table {
    FILE *out;
    const sdsm_stats_snap_t *snaps;
    int n;
    int all;             /* rows of zeros too */
    const char *heading; /* printed before the group's first row, then NULL */
} table_t;

#define STRIDE (sizeof(sdsm_stats_snap_t) / sizeof(uint64_t))

/* A row's unit: bytes in the unit of its largest value, times in ms or s. */
static double row_scale(unit_t u, uint64_t big, const char **suffix)
{
    static const char *const bu[] = {" (bytes)", " (KiB)", " (MiB)", " (GiB)"};
    *suffix = "";
    if (u == U_NS) {
        *suffix = big >= 100000000000ull ? " (s)" : " (ms)";
        return big >= 100000000000ull ? 1e9 : 1e6;
    }
    if (u != U_BYTES)
        return 1;
    int i = 0;
    for (uint64_t b = big; b >= 10240 && i < 3; b >>= 10)
        i++;
    *suffix = bu[i];
    return (double)(1ull << (10 * i));
}

/* One row from vals[r * stride]; nothing where every rank's value is 0 (unless all). */
static void row(table_t *t, const char *name, const uint64_t *vals, size_t stride, unit_t u)
{
    uint64_t total = 0, big = 0;
    for (int r = 0; r < t->n; r++) {
        uint64_t v = vals[(size_t)r * stride];
        total = u == U_MAX || u == U_FLAG ? (v > total ? v : total) : total + v;
        big = v > big ? v : big;
    }
    if (!total && !t->all)
        return;
    if (t->heading) {
        fprintf(t->out, "-- %s\n", t->heading);
        t->heading = NULL;
    }
    const char *suffix;
    double scale = row_scale(u, total > big ? total : big, &suffix);
    char label[96];
    snprintf(label, sizeof label, "%s%s", name, suffix);
    fprintf(t->out, "%-40s", label);
    for (int r = 0; r <= t->n; r++) {
        uint64_t v = r < t->n ? vals[(size_t)r * stride] : total;
        int w = r < t->n ? 10 : 12;
        if (scale == 1)
            fprintf(t->out, " %*llu", w, (unsigned long long)v);
        else
            fprintf(t->out, u == U_NS ? " %*.2f" : " %*.1f", w, (double)v / scale);
    }
    fputc('\n', t->out);
}

/* The message group: messages by type (those used; their bytes too with
 * SDSM_STATS=all), then the totals both ways. */
static void message_rows(table_t *t, const char *(*type_name)(unsigned type))
{
    const sdsm_stats_snap_t *s = t->snaps;
    uint64_t tot[4][t->n];
    for (int r = 0; r < t->n; r++) {
        tot[0][r] = sum_types(s[r].msgs_sent);
        tot[1][r] = sum_types(s[r].bytes_sent);
        tot[2][r] = sum_types(s[r].msgs_recv);
        tot[3][r] = sum_types(s[r].bytes_recv);
    }
    for (unsigned ty = 0; ty < SDSM_STATS_MAX_TYPES; ty++) {
        uint64_t used = 0;
        for (int r = 0; r < t->n; r++)
            used += s[r].msgs_sent[ty];
        const char *tn = type_name(ty);
        if (!used || !tn)
            continue;
        char name[64];
        snprintf(name, sizeof name, "msgs %s", tn);
        row(t, name, &s[0].msgs_sent[ty], STRIDE, U_COUNT);
        if (!t->all) /* the totals below say how much; by type for whoever asks (all) */
            continue;
        snprintf(name, sizeof name, "bytes %s", tn);
        row(t, name, &s[0].bytes_sent[ty], STRIDE, U_BYTES);
    }
    static const char *const names[4] = {"messages sent", "bytes sent", "messages received",
                                         "bytes received"};
    for (int k = 0; k < 4; k++)
        row(t, names[k], tot[k], 1, k % 2 ? U_BYTES : U_COUNT);
}

static void print_table(FILE *out, const sdsm_stats_snap_t *snaps, int n,
                        const char *(*type_name)(unsigned type), int all)
{
    table_t t = {.out = out, .snaps = snaps, .n = n, .all = all};
    fprintf(out, "%-40s", "");
    for (int r = 0; r < n; r++) {
        char h[16];
        snprintf(h, sizeof h, "rank %d", r);
        fprintf(out, " %10s", h);
    }
    fprintf(out, " %12s\n", "total");
    for (int g = 0; g < G_COUNT; g++) {
        t.heading = group_names[g];
        for (int i = 0; i < SDSM_ST_COUNT; i++) {
            int s = order[i];
            if (rows[s].group == g)
                row(&t, rows[s].name, &snaps[0].v[s], STRIDE, rows[s].unit);
        }
        if (g == G_MSGS)
            message_rows(&t, type_name);
    }
}

static void json_array(FILE *out, const uint64_t *vals, int n)
{
    fputc('[', out);
    for (int r = 0; r < n; r++)
        fprintf(out, "%s%llu", r ? "," : "", (unsigned long long)vals[(size_t)r * STRIDE]);
    fputc(']', out);
}

/* One line that scripts parse: every counter of every rank, zeros included. */
static void print_json(FILE *out, const sdsm_stats_snap_t *snaps, int n,
                       const char *(*type_name)(unsigned type))
{
    fprintf(out, "{\"format\":\"sdsm-stats\",\"version\":1,\"nprocs\":%d,\"units\":{", n);
    for (int s = 0; s < SDSM_ST_COUNT; s++)
        fprintf(out, "%s\"%s\":\"%s\"", s ? "," : "", rows[s].key, unit_names[rows[s].unit]);
    fputs("},\"counters\":{", out);
    for (int s = 0; s < SDSM_ST_COUNT; s++) {
        fprintf(out, "%s\"%s\":", s ? "," : "", rows[s].key);
        json_array(out, &snaps[0].v[s], n);
    }
    static const char *const keys[4] = {"msgs_sent", "bytes_sent", "msgs_received", "bytes_received"};
    for (int k = 0; k < 4; k++) {
        fprintf(out, "},\"%s\":{", keys[k]);
        int first = 1;
        for (unsigned ty = 0; ty < SDSM_STATS_MAX_TYPES; ty++) {
            const char *tn = type_name(ty);
            if (!tn || !*tn)
                continue;
            const sdsm_stats_snap_t *s = snaps;
            const uint64_t *col = k == 0   ? &s->msgs_sent[ty]
                                  : k == 1 ? &s->bytes_sent[ty]
                                  : k == 2 ? &s->msgs_recv[ty]
                                           : &s->bytes_recv[ty];
            fprintf(out, "%s\"%s\":", first ? "" : ",", tn);
            json_array(out, col, n);
            first = 0;
        }
    }
    fputs("}}\n", out);
}

const char *sdsm_stats_header_note;

void sdsm_stats_print(FILE *out, const sdsm_stats_snap_t *snaps, int n,
                      const char *(*type_name)(unsigned type), sdsm_stats_mode_t mode)
{
    if (mode == SDSM_STATS_JSON) {
        print_json(out, snaps, n, type_name);
        return;
    }
    fprintf(out, "sdsm statistics (%d rank%s%s%s)\n", n, n == 1 ? "" : "s",
            sdsm_stats_header_note ? "; " : "", sdsm_stats_header_note ? sdsm_stats_header_note : "");
    for (int r = 0; r < n; r++)
        summary(out, r, &snaps[r]);
    fputc('\n', out);
    print_table(out, snaps, n, type_name, mode == SDSM_STATS_ALL);
    if (mode != SDSM_STATS_ALL)
        fprintf(out, "(counters that are 0 on every rank are left out: SDSM_STATS=all shows them, "
                     "SDSM_STATS=json prints them all for scripts)\n");
}
