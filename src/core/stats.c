/*
 * stats.c - counters and the end-of-run table.  The table has one row per
 * counter and one column per rank so that 8 or 16 ranks still fit a
 * terminal; message rows are printed only for types that were used.
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
    }
}

static const struct {
    const char *name;
    int is_time; /* 1: nanoseconds, shown in ms; 2: a maximum (total: the largest) */
} rows[SDSM_ST_COUNT] = {
    [SDSM_ST_READ_FAULTS] = {"read faults", 0},
    [SDSM_ST_WRITE_FAULTS] = {"write faults", 0},
    [SDSM_ST_PAGES_FETCHED] = {"pages fetched", 0},
    [SDSM_ST_BYTES_FETCHED] = {"bytes fetched", 0},
    [SDSM_ST_PAGES_SERVED] = {"pages served (home)", 0},
    [SDSM_ST_PAGES_UPDATED] = {"pages pushed in (update)", 0},
    [SDSM_ST_PAGES_UNMAPPED] = {"pages unmapped (ibec)", 0},
    [SDSM_ST_TWINS] = {"twins made", 0},
    [SDSM_ST_DIFFS_MADE] = {"diffs made", 0},
    [SDSM_ST_DIFF_BYTES_MADE] = {"diff bytes made", 0},
    [SDSM_ST_DIFF_RUNS_MADE] = {"diff runs made", 0},
    [SDSM_ST_DIFF_WIRE_BYTES] = {"diff bytes encoded", 0},
    [SDSM_ST_DIFFS_APPLIED] = {"diffs applied (home)", 0},
    [SDSM_ST_DIFF_BYTES_APPLIED] = {"diff bytes applied", 0},
    [SDSM_ST_INVALIDATIONS] = {"pages invalidated", 0},
    [SDSM_ST_LOCK_ACQUIRES] = {"lock acquires", 0},
    [SDSM_ST_LOCK_WAIT_NS] = {"lock wait (ms)", 1},
    [SDSM_ST_LOCK_HANDOFFS] = {"lock local hand-offs", 0},
    [SDSM_ST_LOCK_CACHED] = {"lock kept here, taken again", 0},
    [SDSM_ST_BARRIERS] = {"barriers", 0},
    [SDSM_ST_BARRIER_WAIT_NS] = {"barrier wait (ms)", 1},
    [SDSM_ST_BARRIER_ROUNDS] = {"barrier rounds", 0},
    [SDSM_ST_COND_WAITS] = {"cond waits", 0},
    [SDSM_ST_REJECTED_MSGS] = {"messages rejected", 0},
    [SDSM_ST_FAULT_WAIT_NS] = {"fault time (ms)", 1},
    [SDSM_ST_RUN_MAX] = {"threads running max", 2},
    [SDSM_ST_RUN_YIELDS] = {"run slots yielded", 0},
    [SDSM_ST_READY_WAIT_NS] = {"ready wait (ms)", 1},
    [SDSM_ST_PREFETCH_PAGES] = {"pages prefetched (call)", 0},
    [SDSM_ST_PREFETCH_REQS] = {"prefetch requests", 0},
    [SDSM_ST_ZC_PAGES] = {"pages read zero-copy", 0},
    [SDSM_ST_ATOMICS_HOME] = {"atomics done at a remote home", 0},
    [SDSM_ST_RUN_FORCED] = {"run slots forced (holders stalled)", 0},
    [SDSM_ST_RUN_HANDED] = {"barrier waiters handed to run slots", 0},
    [SDSM_ST_AHEAD_PAGES] = {"pages prefetched (auto)", 0},
    [SDSM_ST_AHEAD_USED] = {"prefetched (auto) used", 0},
    [SDSM_ST_AHEAD_WASTED] = {"prefetched (auto) unused", 0},
    [SDSM_ST_WRITE_AHEAD] = {"pages opened ahead (write)", 0},
    [SDSM_ST_IBEC_OVERLAPS] = {"sections overlapped", 0},
    [SDSM_ST_IBEC_HANDOVERS] = {"section page hand-overs", 0},
    [SDSM_ST_WBUF_FLUSHES] = {"diffs sent early (wbuf)", 0},
    [SDSM_ST_HOT_KEPT] = {"home pages kept open (hot)", 0},
    [SDSM_ST_HOT_CLEAN] = {"hot pages seen unwritten", 0},
    [SDSM_ST_WPT_ON] = {"written-page tracking", 0},
    [SDSM_ST_LEAD_WAITS] = {"waits in the event loop", 0},
    [SDSM_ST_LEAD_KICKS] = {"event-loop waiters kicked", 0},
    [SDSM_ST_SERVICE_WAKES] = {"service thread woken", 0},
    [SDSM_ST_SERVICE_ASIDE] = {"service thread stepped aside", 0},
    [SDSM_ST_REQ_PINS] = {"requests pinned to their waiter", 0},
    [SDSM_ST_IBEC_KEYED] = {"ibec sections at once (keys)", 0},
    [SDSM_ST_SPIN_WON] = {"polls answered", 0},
    [SDSM_ST_SPIN_LOST] = {"polls timed out", 0},
    [SDSM_ST_SPIN_SKIPPED] = {"polls skipped (not paying)", 0},
    [SDSM_ST_SPIN_STOLEN] = {"polls that lost their CPU to another job", 0},
    [SDSM_ST_READY_SLEEPS] = {"ready threads asleep for a slot", 0},
    [SDSM_ST_RUN_LENT] = {"run slots lent", 0},
    [SDSM_ST_QUIET_PUBLISHES] = {"quiet publishes (SDSM_QUIET_US)", 0},
    [SDSM_ST_QUIET_PAGES] = {"pages published while quiet", 0},
    [SDSM_ST_ZC_DECLINED] = {"zero-copy declined (written at home)", 0},
    [SDSM_ST_TWIN_GUARDS] = {"invalidations ahead of home writes", 0},
    [SDSM_ST_DIFFS_EARLY] = {"diff batches sent early (invalidated)", 0},
    [SDSM_ST_FLAGS_ON] = {"flag support (quiet publisher)", 0},
    [SDSM_ST_MIGRATIONS] = {"homes moved to their single writer", 0},
};

const char *sdsm_stats_name(int stat) { return stat >= 0 && stat < SDSM_ST_COUNT ? rows[stat].name : NULL; }

static void row(FILE *out, const char *name, const uint64_t *vals, size_t stride, int n, int is_time)
{
    uint64_t total = 0;
    fprintf(out, "%-24s", name);
    for (int r = 0; r < n; r++) {
        uint64_t v = vals[(size_t)r * stride];
        total = is_time == 2 ? (v > total ? v : total) : total + v; /* 2: a maximum */
        if (is_time == 1)
            fprintf(out, " %10.2f", (double)v / 1e6);
        else
            fprintf(out, " %10llu", (unsigned long long)v);
    }
    if (is_time == 1)
        fprintf(out, " %12.2f\n", (double)total / 1e6);
    else
        fprintf(out, " %12llu\n", (unsigned long long)total);
}

void sdsm_stats_print(FILE *out, const sdsm_stats_snap_t *snaps, int n,
                      const char *(*type_name)(unsigned type))
{
    size_t stride = sizeof(sdsm_stats_snap_t) / sizeof(uint64_t);
    fprintf(out, "sdsm statistics (%d rank%s)\n%-24s", n, n == 1 ? "" : "s", "");
    for (int r = 0; r < n; r++) {
        char h[16];
        snprintf(h, sizeof h, "rank %d", r);
        fprintf(out, " %10s", h);
    }
    fprintf(out, " %12s\n", "total");
    for (int s = 0; s < SDSM_ST_COUNT; s++)
        row(out, rows[s].name, &snaps[0].v[s], stride, n, rows[s].is_time);
    uint64_t msgs = 0, bytes = 0;
    for (unsigned t = 0; t < SDSM_STATS_MAX_TYPES; t++) {
        uint64_t used = 0;
        for (int r = 0; r < n; r++)
            used += snaps[r].msgs_sent[t];
        const char *tn = type_name(t);
        if (!used || !tn)
            continue;
        char name[64];
        snprintf(name, sizeof name, "msgs %s", tn);
        row(out, name, &snaps[0].msgs_sent[t], stride, n, 0);
        snprintf(name, sizeof name, "bytes %s", tn);
        row(out, name, &snaps[0].bytes_sent[t], stride, n, 0);
        for (int r = 0; r < n; r++) {
            msgs += snaps[r].msgs_sent[t];
            bytes += snaps[r].bytes_sent[t];
        }
    }
    fprintf(out, "messages sent: %llu, bytes sent: %llu\n", (unsigned long long)msgs,
            (unsigned long long)bytes);
}
