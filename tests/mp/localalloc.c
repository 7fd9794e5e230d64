/*
 * localalloc.c - blocks of one rank (sdsm_alloc_local) used by every rank,
 * freed and reused, and private bytes handed to every rank (sdsm_distribute).
 *
 *   localalloc           the whole check (prints "OK localalloc")
 *   localalloc aslr      only sdsm_check_addresses (fails when the job keeps
 *                        address randomization: sdsmrun --aslr)
 *   localalloc threads   4 threads of each rank allocate, fill, free and
 *                        allocate again at once; every block keeps its own
 *                        pattern, and rank 0 reads every rank's blocks
 *
 * Each rank allocates a block of its own, fills it, and publishes the pointer
 * in a collective table; after a barrier every rank reads every block.  Then
 * every rank frees its block and allocates one again: first fit gives the
 * same range back, which must read as zero on every rank (other ranks hold
 * stale copies of it), and a second round of values must arrive as well.
 */
#define MP_NAME "localalloc"
#include "mp.h"

#include <pthread.h>
#include <stdint.h>

/* Private globals that rank P-1 sets and sdsm_distribute copies everywhere. */
static struct {
    int magic[64];
    long (*fn)(long);
    int *self;
    FILE *out;
    uint32_t *block;
} priv;
static int priv_target;

static long twice_plus(long x) { return 2 * x + 1; }

static size_t words_of(int r) { return 1000 + (size_t)r * 1500; } /* a page or more, differing */

static void fill(uint32_t *b, int r, uint32_t round)
{
    for (size_t i = 0; i < words_of(r); i++)
        b[i] = round * 0x1000000u + (uint32_t)r * 0x10000u + (uint32_t)i;
}

static void check_all(uint32_t *const *table, int n, uint32_t round)
{
    for (int r = 0; r < n; r++) {
        uint32_t *b = table[r];
        MP_CHECK("home of block", r, r, sdsm_home_of(b));
        for (size_t i = 0; i < words_of(r); i++)
            MP_CHECK("block word", (long long)r * 100000 + (long long)i,
                     round ? round * 0x1000000u + (uint32_t)r * 0x10000u + (uint32_t)i : 0, b[i]);
    }
}

static void check_errors(uint32_t *const *table, int me, int n)
{
    MP_CHECK("sdsm_alloc_local(0)", 0, 1, sdsm_alloc_local(0) == NULL);
    MP_CHECK("last error", 0, SDSM_EINVAL, sdsm_last_error());
    MP_CHECK("sdsm_alloc_local(-1)", 0, 1, sdsm_alloc_local((size_t)-1) == NULL);
    MP_CHECK("sdsm_free_local(own + 1 page)", 0, SDSM_EINVAL, sdsm_free_local((char *)table[me] + 4096));
    if (n > 1)
        MP_CHECK("sdsm_free_local(other's)", 0, SDSM_EINVAL, sdsm_free_local(table[(me + 1) % n]));
    /* The collective free refuses a local block (same pointer everywhere). */
    MP_CHECK("sdsm_free(local block)", 0, SDSM_EINVAL, sdsm_free(table[0]));
}

static void check_distribute(int me, int n)
{
    int root = n - 1;
    if (me == root) {
        for (int i = 0; i < 64; i++)
            priv.magic[i] = 7 * i + 3;
        priv.fn = twice_plus;
        priv.self = &priv_target;
        priv.out = stdout;
        priv_target = 4242;
    }
    MP_OK(sdsm_distribute(&priv, sizeof priv, root));
    MP_OK(sdsm_distribute(&priv_target, sizeof priv_target, root));
    for (int i = 0; i < 64; i++)
        MP_CHECK("priv.magic", i, 7 * i + 3, priv.magic[i]);
    MP_CHECK("priv.fn(20)", 0, 41, priv.fn(20));
    MP_CHECK("priv.self", 0, 1, priv.self == &priv_target);
    MP_CHECK("priv_target", 0, 4242, *priv.self);
    MP_CHECK("priv.out", 0, 1, priv.out == stdout);
    /* A pointer to a root-local block travels inside private data too. */
    if (me == root) {
        priv.block = sdsm_alloc_local(4 * sizeof(uint32_t));
        MP_NONNULL(priv.block);
        for (int i = 0; i < 4; i++)
            priv.block[i] = 900u + (uint32_t)i;
    }
    MP_OK(sdsm_distribute(&priv.block, sizeof priv.block, root));
    for (int i = 0; i < 4; i++)
        MP_CHECK("root's block", i, 900 + i, priv.block[i]);
    MP_OK(sdsm_barrier());
    if (me == root)
        MP_OK(sdsm_free_local(priv.block));
}

#define NT 4
#define NB 24

typedef struct tblocks {
    int t;
    uint32_t *b[NB];
} tblocks_t;

static size_t tsize(int t, int i) { return 100 + (size_t)(t * NB + i) * 700; } /* words */

static uint32_t tval(int r, int t, int i, size_t k)
{
    return (uint32_t)(r << 24 | t << 16 | i << 10) ^ (uint32_t)k;
}

static void tfill(int r, int t, int i, uint32_t *b)
{
    for (size_t k = 0; k < tsize(t, i); k++)
        b[k] = tval(r, t, i, k);
}

static void tcheck(int r, int t, int i, const uint32_t *b)
{
    for (size_t k = 0; k < tsize(t, i); k++)
        MP_CHECK("thread block word", ((long long)r * NT + t) * NB + i, tval(r, t, i, k), b[k]);
}

/* Allocate NB blocks, free the odd ones, allocate them again: all at once with the other threads. */
static void *tmain(void *arg)
{
    tblocks_t *tb = arg;
    int me = sdsm_rank();
    for (int i = 0; i < NB; i++) {
        MP_NONNULL(tb->b[i] = sdsm_alloc_local(tsize(tb->t, i) * sizeof(uint32_t)));
        tfill(me, tb->t, i, tb->b[i]);
    }
    for (int i = 1; i < NB; i += 2)
        MP_OK(sdsm_free_local(tb->b[i]));
    for (int i = 1; i < NB; i += 2) {
        MP_NONNULL(tb->b[i] = sdsm_alloc_local(tsize(tb->t, i) * sizeof(uint32_t)));
        for (size_t k = 0; k < tsize(tb->t, i); k++) /* reused or not, it reads as zero */
            MP_CHECK("fresh thread block", i, 0, tb->b[i][k]);
        tfill(me, tb->t, i, tb->b[i]);
    }
    return NULL;
}

static void threads_mode(int me, int n)
{
    static tblocks_t tb[NT];
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        tb[t].t = t;
        MP_ASSERT(pthread_create(&th[t], NULL, tmain, &tb[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < NB; i++)
            tcheck(me, t, i, tb[t].b[i]);
    /* Every rank's table of blocks, read by rank 0. */
    uint32_t **all = sdsm_alloc((size_t)n * NT * NB * sizeof *all, 0);
    MP_NONNULL(all);
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < NB; i++)
            all[((size_t)me * NT + t) * NB + i] = tb[t].b[i];
    MP_OK(sdsm_barrier());
    if (me == 0)
        for (int r = 0; r < n; r++)
            for (int t = 0; t < NT; t++)
                for (int i = 0; i < NB; i++)
                    tcheck(r, t, i, all[((size_t)r * NT + t) * NB + i]);
    MP_OK(sdsm_barrier());
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < NB; i++)
            MP_OK(sdsm_free_local(tb[t].b[i]));
    MP_OK(sdsm_free(all));
}

int main(int argc, char **argv)
{
    int aslr = argc > 1 && strcmp(argv[1], "aslr") == 0;
    if (!aslr) /* the aslr mode lets the check stop the job with its message */
        setenv("SDSM_ERRORS", "return", 1);
    MP_OK(sdsm_init(&argc, &argv));
    int me = sdsm_rank(), n = sdsm_nprocs();
    if (aslr) {
        int rc = sdsm_check_addresses();
        printf("rank %d: sdsm_check_addresses: %s\n", me, sdsm_strerror(rc));
        MP_OK(sdsm_finalize());
        return rc ? 1 : 0;
    }
    MP_OK(sdsm_check_addresses());
    if (argc > 1 && strcmp(argv[1], "threads") == 0) {
        threads_mode(me, n);
        MP_OK(sdsm_finalize());
        if (me == 0)
            printf("OK localalloc\n");
        return 0;
    }
    uint32_t **table = sdsm_alloc((size_t)n * sizeof *table, 0);
    MP_NONNULL(table);
    uint32_t *mine = sdsm_alloc_local(words_of(me) * sizeof(uint32_t));
    MP_NONNULL(mine);
    fill(mine, me, 1);
    table[me] = mine;
    MP_OK(sdsm_barrier());
    check_all(table, n, 1);
    check_errors(table, me, n);
    MP_OK(sdsm_barrier());

    /* Free and allocate again: the same range, zero everywhere. */
    MP_OK(sdsm_free_local(mine));
    uint32_t *again = sdsm_alloc_local(words_of(me) * sizeof(uint32_t));
    MP_NONNULL(again);
    MP_CHECK("reused address", me, (long long)(uintptr_t)mine, (long long)(uintptr_t)again);
    MP_OK(sdsm_barrier());
    check_all(table, n, 0);
    MP_OK(sdsm_barrier());
    fill(again, me, 2);
    MP_OK(sdsm_barrier());
    check_all(table, n, 2);
    MP_OK(sdsm_barrier());
    MP_OK(sdsm_free_local(again));

    check_distribute(me, n);
    MP_OK(sdsm_free(table));
    MP_OK(sdsm_finalize());
    if (me == 0)
        printf("OK localalloc\n");
    return 0;
}
