/*
 * span.c - free page ranges of the shared region (see span.h).
 *
 * A sorted array: a take scans for the first fit, a give finds its place by
 * binary search and merges with the ranges on either side.  There are at
 * most (live blocks + 1) ranges, and allocation is rare next to page faults,
 * so linear moves are cheaper than a tree here and far simpler to trust.
 */
#include "span.h"

#include <string.h>
#include <sys/mman.h>

#include "core/status.h"

int sdsm_spans_init(sdsm_spans_t *s, uint32_t npages, uint32_t cap)
{
    memset(s, 0, sizeof *s);
    if (cap == 0)
        return SDSM_EINVAL;
    /* Reserved, not committed: the table costs memory only as it fills. */
    void *v = mmap(NULL, (size_t)cap * sizeof *s->v, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (v == MAP_FAILED)
        return SDSM_ENOMEM;
    s->v = v;
    s->cap = cap;
    if (npages) {
        s->v[0] = (sdsm_span_t){0, npages};
        s->count = 1;
        s->free_pages = npages;
    }
    return 0;
}

void sdsm_spans_fini(sdsm_spans_t *s)
{
    if (s->v)
        munmap(s->v, (size_t)s->cap * sizeof *s->v);
    memset(s, 0, sizeof *s);
}

int sdsm_spans_take(sdsm_spans_t *s, uint32_t n, uint32_t *first)
{
    if (n == 0)
        return SDSM_EINVAL;
    for (uint32_t i = 0; i < s->count; i++) {
        sdsm_span_t *r = &s->v[i];
        if (r->n < n)
            continue;
        *first = r->first;
        s->free_pages -= n;
        if (r->n == n) {
            memmove(r, r + 1, (size_t)(s->count - i - 1) * sizeof *r);
            s->count--;
        } else {
            r->first += n;
            r->n -= n;
        }
        return 0;
    }
    return SDSM_ENOMEM;
}

/* Index of the first range starting after pg. */
static uint32_t after(const sdsm_spans_t *s, uint32_t pg)
{
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].first <= pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int sdsm_spans_give(sdsm_spans_t *s, uint32_t first, uint32_t n)
{
    uint64_t end = (uint64_t)first + n;
    if (n == 0 || end > UINT32_MAX + 1ull)
        return SDSM_EINVAL;
    uint32_t i = after(s, first);
    sdsm_span_t *prev = i > 0 ? &s->v[i - 1] : NULL, *next = i < s->count ? &s->v[i] : NULL;
    if ((prev && (uint64_t)prev->first + prev->n > first) || (next && next->first < end))
        return SDSM_EINVAL; /* overlaps free space: a double free */
    int join_prev = prev && (uint64_t)prev->first + prev->n == first;
    int join_next = next && next->first == end;
    if (join_prev && join_next) {
        prev->n += n + next->n;
        memmove(next, next + 1, (size_t)(s->count - i - 1) * sizeof *next);
        s->count--;
    } else if (join_prev) {
        prev->n += n;
    } else if (join_next) {
        next->first = first;
        next->n += n;
    } else {
        if (s->count == s->cap)
            return SDSM_ENOMEM;
        memmove(&s->v[i + 1], &s->v[i], (size_t)(s->count - i) * sizeof *s->v);
        s->v[i] = (sdsm_span_t){first, n};
        s->count++;
    }
    s->free_pages += n;
    return 0;
}

uint32_t sdsm_spans_largest(const sdsm_spans_t *s)
{
    uint32_t best = 0;
    for (uint32_t i = 0; i < s->count; i++)
        if (s->v[i].n > best)
            best = s->v[i].n;
    return best;
}
