/*
 * localalloc.c - blocks of one rank (sdsm_alloc_local) used by every rank,
 * freed and reused, and private bytes handed to every rank (sdsm_distribute).
 *
 *   localalloc           the whole check (prints "OK localalloc")
 *   localalloc aslr      only sdsm_check_addresses (fails when the job keeps
 *                        address randomization: sdsmrun --aslr)
 *
 * Each rank allocates a block of its own, fills it, and publishes the pointer
 * in a collective table; after a barrier every rank reads every block.  Then
 * every rank frees its block and allocates one again: first fit gives the
 * same range back, which must read as zero on every rank (other ranks hold
 * stale copies of it), and a second round of values must arrive as well.
 */
#define MP_NAME "localalloc"
#include "mp.h"

#include <stdint.h>

/* Private globals that rank P-1 sets and sdsm_distribute copies everywhere. */
static struct {
    int       magic[64];
    long      (*fn)(long);
    int      *self;
    FILE     *out;
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
