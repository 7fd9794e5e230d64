/*
 * multiwriter.c - several ranks write different bytes of one page between
 * the same two synchronizations; every byte must survive.
 *
 *   mp_multiwriter
 *
 * Rounds (each on a fresh sdsm_alloc page unless noted, byte granularity):
 *   1. rank r writes bytes i with i % N == r, value (i*7+r) & 0xff, between
 *      two barriers; everyone checks all bytes.
 *   2. same page again: each rank writes a different value into its bytes,
 *      barrier, everyone checks (the page is cached and must be refreshed).
 *   3. same page, the writes made under a different lock per rank (lock
 *      100+r), then a barrier, everyone checks.
 *   4. a fresh page homed at rank N-1 written under per-rank locks, each rank
 *      then re-acquiring its own lock and checking its own bytes before the
 *      barrier (no one else's bytes are guaranteed there), then all bytes.
 *   5. an sdsm_calloc(…, 8, …) block: longs interleaved by element (i % N == r),
 *      the granularity the element size promises.
 */
#define MP_NAME "multiwriter"
#include "mp.h"

static unsigned char v1(size_t i, int r) { return (unsigned char)((i * 7 + (size_t)r) & 0xff); }
static unsigned char v2(size_t i, int r) { return (unsigned char)((i * 13 + (size_t)r * 29 + 5) & 0xff); }
static unsigned char v3(size_t i, int r) { return (unsigned char)(~(i * 3 + (size_t)r) & 0xff); }

typedef unsigned char (*valfn)(size_t, int);

static void check_all(const volatile unsigned char *p, size_t len, int n, valfn f, const char *what)
{
    for (size_t i = 0; i < len; i++)
        MP_CHECK(what, i, f(i, (int)(i % (size_t)n)), p[i]);
}

static void write_mine(volatile unsigned char *p, size_t len, int n, int me, valfn f)
{
    for (size_t i = (size_t)me; i < len; i += (size_t)n)
        p[i] = f(i, me);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size();

    /* Round 1: byte-interleaved writes between two barriers. */
    volatile unsigned char *pg = sdsm_alloc(ps, 0);
    MP_NONNULL(pg);
    MP_OK(sdsm_barrier());
    write_mine(pg, ps, n, me, v1);
    MP_OK(sdsm_barrier());
    check_all(pg, ps, n, v1, "round1 byte");

    /* Round 2: the page is now cached everywhere; new values by everyone. */
    MP_OK(sdsm_barrier());
    write_mine(pg, ps, n, me, v2);
    MP_OK(sdsm_barrier());
    check_all(pg, ps, n, v2, "round2 byte");

    /* Round 3: writes under per-rank locks, then a barrier. */
    MP_OK(sdsm_barrier());
    MP_OK(sdsm_lock(100 + me));
    write_mine(pg, ps, n, me, v3);
    MP_OK(sdsm_unlock(100 + me));
    MP_OK(sdsm_barrier());
    check_all(pg, ps, n, v3, "round3 byte");

    /* Round 4: fresh page homed at the last rank, per-rank locks, own bytes re-read. */
    volatile unsigned char *pg4 = sdsm_alloc(ps, n - 1);
    MP_NONNULL(pg4);
    MP_OK(sdsm_lock(200 + me));
    write_mine(pg4, ps, n, me, v1);
    MP_OK(sdsm_unlock(200 + me));
    MP_OK(sdsm_lock(200 + me));
    for (size_t i = (size_t)me; i < ps; i += (size_t)n)
        MP_CHECK("round4 own byte", i, v1(i, me), pg4[i]);
    MP_OK(sdsm_unlock(200 + me));
    MP_OK(sdsm_barrier());
    check_all(pg4, ps, n, v1, "round4 byte");

    /* Round 5: element granularity (8-byte elements), interleaved by element. */
    size_t nel = 2 * ps / sizeof(long);
    volatile long *el = sdsm_calloc(nel, sizeof(long), 0);
    MP_NONNULL(el);
    for (size_t i = 0; i < nel; i++)
        MP_CHECK("round5 fresh element", i, 0, el[i]);
    MP_OK(sdsm_barrier());
    for (size_t i = (size_t)me; i < nel; i += (size_t)n)
        el[i] = (long)(i * 1000003u) ^ ((long)me << 40);
    MP_OK(sdsm_barrier());
    for (size_t i = 0; i < nel; i++)
        MP_CHECK("round5 element", i, (long)(i * 1000003u) ^ ((long)(i % (size_t)n) << 40), el[i]);

    MP_OK(sdsm_barrier());
    return mp_finish("multiwriter");
}
