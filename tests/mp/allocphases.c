/*
 * allocphases.c - allocation at several points of a run, with every home
 * policy, frees in between, and sdsm_home_of against the documented
 * placement.
 *
 *   mp_allocphases
 *
 * Placement (P pages in the block, N ranks, page i):
 *   SDSM_HOME_BLOCK        i / ceil(P / N)
 *   SDSM_HOME_CYCLIC       i % N
 *   explicit rank h        h (here N-1)
 *   SDSM_HOME_FIRST_TOUCH  the first rank to touch the page; SDSM_ENOHOME
 *                          while nobody has.
 *
 * Phase A: one block per policy; homes checked from every rank before any
 * touch; first-touch pages 0..N-1 touched (written) by rank k = page, page N
 * touched by a read of rank N-1, the rest untouched (ENOHOME); then each
 * rank writes its part of every block, barrier, everyone checks everything.
 * Phase B: after lock traffic, a second set of blocks (odd sizes): fresh
 * memory reads zero on every rank, homes checked, patterns written/checked.
 * Then two phase-A blocks are freed, phase C allocates again (including
 * sdsm_calloc blocks, which read zero everywhere), the new blocks reuse the
 * freed addresses but never overlap live blocks, and the surviving old blocks
 * keep their contents.
 */
#define MP_NAME "allocphases"
#include "mp.h"

#define NPOL 4
static int n, me;
static size_t ps;

static int policy(int k) /* the four policies, the explicit one being rank N-1 */
{
    static const int p[3] = {SDSM_HOME_BLOCK, SDSM_HOME_CYCLIC, SDSM_HOME_FIRST_TOUCH};
    return k == 3 ? n - 1 : p[k];
}

static const char *polname(int k)
{
    static const char *const names[NPOL] = {"BLOCK", "CYCLIC", "FIRST_TOUCH", "explicit"};
    return names[k];
}

static int want_home(int pol, size_t page, size_t npages)
{
    switch (pol) {
    case SDSM_HOME_BLOCK: return (int)(page / ((npages + (size_t)n - 1) / (size_t)n));
    case SDSM_HOME_CYCLIC: return (int)(page % (size_t)n);
    default: return pol;
    }
}

static size_t npages_of(size_t size) { return (size + ps - 1) / ps; }

/* Every page of a non-first-touch block: first, a middle and the last byte. */
static void check_homes(const char *what, const unsigned char *base, size_t size, int pol)
{
    size_t np = npages_of(size);
    for (size_t i = 0; i < np; i++) {
        size_t offs[3] = {i * ps, i * ps + ps / 2, i + 1 == np ? size - 1 : (i + 1) * ps - 1};
        for (int o = 0; o < 3; o++) {
            if (offs[o] >= size)
                continue;
            char label[96];
            snprintf(label, sizeof label, "sdsm_home_of(%s block, byte) page %zu", what, i);
            MP_CHECK(label, offs[o], want_home(pol, i, np), sdsm_home_of(base + offs[o]));
        }
    }
}

static long pattern(int block, size_t i) { return (long)(mp_mix(((uint64_t)block << 32) | i) >> 1); }

/* Rank r writes the longs i with (i / 37) % N == r: parts cross page edges. */
static void write_part(volatile long *p, size_t size, int block)
{
    for (size_t i = 0; i < size / sizeof(long); i++)
        if ((int)((i / 37) % (size_t)n) == me)
            p[i] = pattern(block, i);
}

static void check_all(const char *what, const volatile long *p, size_t size, int block)
{
    for (size_t i = 0; i < size / sizeof(long); i++)
        MP_CHECK(what, i, pattern(block, i), p[i]);
}

static void check_zero(const char *what, const volatile unsigned char *p, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (p[i])
            MP_CHECK(what, i, 0, p[i]);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    n = sdsm_nprocs();
    me = sdsm_rank();
    ps = mp_page_size();
    char label[128];

    /* ---- Phase A ---------------------------------------------------------- */
    size_t sizeA = (size_t)(2 * n + 3) * ps;
    unsigned char *A[NPOL];
    for (int k = 0; k < NPOL; k++) {
        A[k] = sdsm_alloc(sizeA, policy(k));
        MP_NONNULL(A[k]);
        MP_ASSERT(((uintptr_t)A[k] & (ps - 1)) == 0, "block %p is not page-aligned", (void *)A[k]);
    }
    /* Same address on every rank. */
    volatile uintptr_t *addrs = sdsm_alloc((size_t)n * NPOL * sizeof(uintptr_t), 0);
    MP_NONNULL(addrs);
    for (int k = 0; k < NPOL; k++)
        addrs[me * NPOL + k] = (uintptr_t)A[k];
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        for (int k = 0; k < NPOL; k++)
            MP_CHECK("phase A block address seen by rank", r * NPOL + k, (uintptr_t)A[k],
                     addrs[r * NPOL + k]);

    for (int k = 0; k < NPOL; k++) {
        if (policy(k) == SDSM_HOME_FIRST_TOUCH) {
            for (size_t i = 0; i < npages_of(sizeA); i++)
                MP_CHECK("untouched first-touch page home", i, SDSM_ENOHOME, sdsm_home_of(A[k] + i * ps + 8));
        } else {
            snprintf(label, sizeof label, "A/%s", polname(k));
            check_homes(label, A[k], sizeA, policy(k));
        }
    }
    MP_OK(sdsm_barrier());

    /* First touch: rank k writes page k; rank N-1 reads page N. */
    unsigned char *ft = A[2];
    ((volatile long *)(ft + (size_t)me * ps))[1] = 4242 + me;
    if (me == n - 1) {
        long v = ((volatile long *)(ft + (size_t)n * ps))[0];
        MP_CHECK("first-touch page read by rank N-1", n, 0, v);
    }
    MP_OK(sdsm_barrier());
    for (int k = 0; k < n; k++) {
        MP_CHECK("first-touch home of page", k, k, sdsm_home_of(ft + (size_t)k * ps));
        MP_CHECK("first-touch page content", k, 4242 + k, ((volatile long *)(ft + (size_t)k * ps))[1]);
    }
    MP_CHECK("first-touch home of page read first by rank N-1", n, n - 1,
             sdsm_home_of(ft + (size_t)n * ps + ps - 1));
    for (size_t i = (size_t)n + 1; i < npages_of(sizeA); i++)
        MP_CHECK("first-touch page nobody touched", i, SDSM_ENOHOME, sdsm_home_of(ft + i * ps));
    MP_OK(sdsm_barrier());

    for (int k = 0; k < NPOL; k++)
        write_part((volatile long *)A[k], sizeA, k);
    MP_OK(sdsm_barrier());
    for (int k = 0; k < NPOL; k++) {
        snprintf(label, sizeof label, "phase A %s long", polname(k));
        check_all(label, (volatile long *)A[k], sizeA, k);
    }
    /* Every first-touch page has a home now, and every rank names the same one. */
    volatile int *fth = sdsm_alloc((size_t)n * npages_of(sizeA) * sizeof(int), SDSM_HOME_CYCLIC);
    MP_NONNULL(fth);
    for (size_t i = 0; i < npages_of(sizeA); i++) {
        int h = sdsm_home_of(ft + i * ps);
        MP_ASSERT(h >= 0 && h < n, "first-touch page %zu has home %d after being written", i, h);
        fth[(size_t)me * npages_of(sizeA) + i] = h;
    }
    MP_OK(sdsm_barrier());
    for (size_t i = 0; i < npages_of(sizeA); i++)
        for (int r = 0; r < n; r++)
            MP_CHECK("first-touch home agreed by all ranks", i, fth[i],
                     fth[(size_t)r * npages_of(sizeA) + i]);

    /* ---- Some lock traffic between the phases ----------------------------- */
    volatile long *ctr = sdsm_alloc(sizeof(long), n - 1);
    MP_NONNULL(ctr);
    for (int k = 0; k < 10; k++) {
        MP_OK(sdsm_lock(5));
        *ctr += 1;
        MP_OK(sdsm_unlock(5));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("lock counter", 0, 10L * n, *ctr);

    /* ---- Phase B: odd sizes, allocated later in the run ------------------- */
    size_t sizeB = (size_t)(n + 1) * ps - 100;
    unsigned char *B[NPOL];
    for (int k = 0; k < NPOL; k++) {
        B[k] = sdsm_alloc(sizeB, policy(k));
        MP_NONNULL(B[k]);
    }
    for (int k = 0; k < NPOL; k++) {
        snprintf(label, sizeof label, "phase B %s fresh byte", polname(k));
        check_zero(label, B[k], sizeB);
        if (policy(k) != SDSM_HOME_FIRST_TOUCH) {
            snprintf(label, sizeof label, "B/%s", polname(k));
            check_homes(label, B[k], sizeB, policy(k));
        }
    }
    MP_OK(sdsm_barrier());
    for (int k = 0; k < NPOL; k++)
        write_part((volatile long *)B[k], sizeB, 10 + k);
    MP_OK(sdsm_barrier());
    for (int k = 0; k < NPOL; k++) {
        snprintf(label, sizeof label, "phase B %s long", polname(k));
        check_all(label, (volatile long *)B[k], sizeB, 10 + k);
    }

    /* ---- Free two phase-A blocks, allocate again -------------------------- */
    MP_OK(sdsm_free(A[0]));
    MP_OK(sdsm_free(A[2]));
    unsigned char *freed[2] = {A[0], A[2]};
    size_t sizeC = 3 * ps + 1;
    unsigned char *Cb[NPOL];
    long *Z[NPOL];
    size_t zn = 1000, zel = 3 * sizeof(long); /* 24-byte elements */
    int reused = 0;
    for (int k = 0; k < NPOL; k++) {
        Cb[k] = sdsm_alloc(sizeC, policy(k));
        MP_NONNULL(Cb[k]);
        Z[k] = sdsm_calloc(zn, zel, policy(k));
        MP_NONNULL(Z[k]);
        /* Freed ranges may be reused, live blocks never. */
        const unsigned char *live[] = {A[1], A[3]};
        for (int f = 0; f < 2; f++) {
            MP_ASSERT(Cb[k] + sizeC <= live[f] || Cb[k] >= live[f] + sizeA,
                      "new block %p overlaps the live block %p", (void *)Cb[k], (void *)live[f]);
            MP_ASSERT((unsigned char *)Z[k] + zn * zel <= live[f] || (unsigned char *)Z[k] >= live[f] + sizeA,
                      "new calloc block %p overlaps the live block %p", (void *)Z[k], (void *)live[f]);
        }
        if (Cb[k] >= freed[0] && Cb[k] < freed[0] + sizeA)
            reused++;
    }
    /* First fit: the first new block goes where A[0] was. */
    MP_ASSERT(reused > 0, "no new block went into the freed range %p", (void *)freed[0]);
    for (int k = 0; k < NPOL; k++) {
        snprintf(label, sizeof label, "phase C %s fresh byte", polname(k));
        check_zero(label, Cb[k], sizeC);
        snprintf(label, sizeof label, "calloc %s fresh byte", polname(k));
        check_zero(label, (unsigned char *)Z[k], zn * zel);
        if (policy(k) != SDSM_HOME_FIRST_TOUCH) {
            snprintf(label, sizeof label, "C/%s", polname(k));
            check_homes(label, Cb[k], sizeC, policy(k));
            snprintf(label, sizeof label, "calloc/%s", polname(k));
            check_homes(label, (unsigned char *)Z[k], zn * zel, policy(k));
        }
    }
    MP_OK(sdsm_barrier());
    for (int k = 0; k < NPOL; k++) {
        write_part((volatile long *)Cb[k], sizeC, 20 + k);
        for (size_t e = (size_t)me; e < zn; e += (size_t)n)
            for (int w = 0; w < 3; w++)
                ((volatile long *)Z[k])[e * 3 + (size_t)w] = pattern(30 + k, e * 3 + (size_t)w);
    }
    MP_OK(sdsm_barrier());
    for (int k = 0; k < NPOL; k++) {
        snprintf(label, sizeof label, "phase C %s long", polname(k));
        check_all(label, (volatile long *)Cb[k], sizeC & ~(sizeof(long) - 1), 20 + k);
        snprintf(label, sizeof label, "calloc %s long", polname(k));
        check_all(label, (volatile long *)Z[k], zn * zel, 30 + k);
        snprintf(label, sizeof label, "phase B %s long (after frees)", polname(k));
        check_all(label, (volatile long *)B[k], sizeB, 10 + k);
    }
    check_all("phase A CYCLIC long (after frees)", (volatile long *)A[1], sizeA, 1);
    check_all("phase A explicit long (after frees)", (volatile long *)A[3], sizeA, 3);

    /* Free the rest, in the same order everywhere. */
    for (int k = 0; k < NPOL; k++) {
        MP_OK(sdsm_free(B[k]));
        MP_OK(sdsm_free(Cb[k]));
        MP_OK(sdsm_free(Z[k]));
    }
    MP_OK(sdsm_free(A[1]));
    MP_OK(sdsm_free(A[3]));
    MP_OK(sdsm_barrier());
    return mp_finish("allocphases");
}
