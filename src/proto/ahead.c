/*
 * ahead.c - per-thread access streams.  Each application thread keeps a few
 * streams per kind of fault (read, write); a stream is the last page it
 * faulted on, the stride between its faults and the page where its next
 * fault is expected.  A fault there confirms the pattern and doubles the
 * window the caller takes ahead along the stride; forward (+1), backward
 * (-1) and strided (a column of a row-major matrix, a plane of a 3-D array)
 * sweeps are all the same case.  A fault elsewhere teaches the nearest
 * stream a new stride (confirmed by the fault after) or starts a stream.
 *
 * Only faults reach this file, and a page taken ahead does not fault, so
 * the state is per thread: two threads sweeping different ranges would
 * otherwise break each other's patterns.  The fault handler runs this, so
 * no allocation and initial-exec TLS.
 */
#include "proto/ahead.h"

#include <stdlib.h>

#define NSTREAMS 4

typedef struct stream {
    uint32_t last; /* page of the last fault */
    uint32_t next; /* where the next fault is expected */
    int32_t stride;
    uint32_t win;     /* window of the last fault (0: pattern not confirmed yet) */
    uint32_t pending; /* pages taken ahead the stream has not gone past yet */
    uint32_t tick;    /* last use, for replacement */
    uint8_t live;
} stream_t;

static __thread stream_t streams[SDSM_AHEAD_KINDS][NSTREAMS] __attribute__((tls_model("initial-exec")));
static __thread stream_t *cur[SDSM_AHEAD_KINDS] __attribute__((tls_model("initial-exec")));
static __thread uint32_t ticks __attribute__((tls_model("initial-exec")));

static uint32_t step(uint32_t pg, int32_t stride, uint32_t n)
{
    int64_t q = (int64_t)pg + (int64_t)stride * n;
    return q < 0 || q >= UINT32_MAX ? UINT32_MAX : (uint32_t)q;
}

/* The stream that should learn from a fault on pg, which none expected. */
static stream_t *nearest(stream_t *t, uint32_t pg, int64_t *delta)
{
    stream_t *best = NULL, *old = &t[0];
    int64_t bd = SDSM_AHEAD_STRIDE_MAX + 1;
    for (int i = 0; i < NSTREAMS; i++) {
        if (!t[i].live || t[i].tick < old->tick)
            old = &t[i];
        if (!t[i].live)
            continue;
        int64_t d = (int64_t)pg - t[i].last;
        if (d != 0 && llabs(d) < bd) {
            bd = llabs(d);
            best = &t[i];
            *delta = d;
        }
    }
    if (best)
        return best;
    *old = (stream_t){.live = 1, .stride = 1}; /* a new stream is assumed to go forward */
    *delta = 0;
    return old;
}

sdsm_ahead_t sdsm_ahead_fault(sdsm_ahead_kind_t kind, uint32_t pg, uint32_t cap)
{
    stream_t *t = streams[kind], *e = NULL;
    sdsm_ahead_t r = {0, 0, 0};
    for (int i = 0; i < NSTREAMS && !e; i++)
        if (t[i].live && t[i].next == pg)
            e = &t[i];
    if (e) { /* where the pattern said: it holds, go further */
        r.win = e->win ? 2 * e->win : 1;
        r.passed = e->pending;
    } else {
        int64_t d;
        e = nearest(t, pg, &d);
        if (e->win && d / e->stride > 0 && d % e->stride == 0) {
            /* Further along a confirmed stride (pages between were held or
             * not eligible): keep the window, do not grow it. */
            r.win = e->win;
        } else if (d) {
            e->stride = (int32_t)d; /* to be confirmed by the next fault */
            e->win = 0;
        }
    }
    if (r.win > cap)
        r.win = cap;
    e->win = r.win;
    e->pending = 0;
    e->last = pg;
    e->next = step(pg, e->stride, 1);
    e->tick = ++ticks;
    r.stride = e->stride;
    cur[kind] = e;
    return r;
}

void sdsm_ahead_taken(sdsm_ahead_kind_t kind, uint32_t pg, int32_t stride, uint32_t k)
{
    stream_t *e = cur[kind];
    if (!e || e->last != pg || e->stride != stride)
        return;
    e->pending = k;
    e->next = step(pg, stride, k + 1);
}
