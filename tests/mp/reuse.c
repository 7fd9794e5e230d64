/*
 * reuse.c - freed shared address space is handed out again, and a reused
 * range starts as new memory on every rank.
 *
 *   mp_reuse loop ITERS SIZE_MB   ITERS times: allocate SIZE_MB MiB (block
 *       homes), check that the words the previous iteration wrote at the same
 *       addresses read as zero everywhere, every rank writes its words,
 *       barrier, everybody checks everybody's, free.  Without reuse a 64 GiB
 *       heap runs out at iteration 64 of 1 GiB.
 *   mp_reuse mix ROUNDS           blocks of mixed sizes and homes, half of them
 *       freed at random each round and new ones allocated into the holes:
 *       live blocks never overlap, holes are reused, and every block's
 *       contents (written by its owner rank) read back right on every rank.
 */
#define MP_NAME "reuse"
#include "mp.h"

#define WORDS_PER_RANK 4
#define MIX_MAX        48

/* Where rank r puts word w in a block of `pages` pages: spread over the block. */
static size_t word_at(int r, int w, int n, size_t pages, size_t ps, unsigned iter)
{
    size_t k = (size_t)r * WORDS_PER_RANK + (size_t)w, slots = (size_t)n * WORDS_PER_RANK;
    size_t pg = (k * (pages - 1)) / (slots - 1 ? slots - 1 : 1);
    return pg * ps + ((iter * 8 + (unsigned)r * 64) % (ps - 64)) / 8 * 8;
}

static void loop(int iters, size_t mb)
{
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size(), size = mb << 20, pages = size / ps;
    unsigned char *first = NULL;
    for (int it = 0; it < iters; it++) {
        unsigned char *p = sdsm_alloc(size, SDSM_HOME_BLOCK);
        MP_NONNULL(p);
        if (it == 0)
            first = p;
        MP_ASSERT(p == first, "iteration %d got %p, not the freed range at %p", it, (void *)p, (void *)first);
        if (it > 0) /* last iteration's words, at the same addresses, must be gone */
            for (int r = 0; r < n; r++)
                for (int w = 0; w < WORDS_PER_RANK; w++)
                    MP_CHECK("stale word", r * WORDS_PER_RANK + w, 0,
                             *(volatile long *)(p + word_at(r, w, n, pages, ps, (unsigned)it - 1)));
        MP_OK(sdsm_barrier());
        for (int w = 0; w < WORDS_PER_RANK; w++)
            *(volatile long *)(p + word_at(me, w, n, pages, ps, (unsigned)it)) =
                (long)it * 1000 + me * 10 + w;
        MP_OK(sdsm_barrier());
        for (int r = 0; r < n; r++)
            for (int w = 0; w < WORDS_PER_RANK; w++)
                MP_CHECK("word", r * WORDS_PER_RANK + w, (long)it * 1000 + r * 10 + w,
                         *(volatile long *)(p + word_at(r, w, n, pages, ps, (unsigned)it)));
        MP_OK(sdsm_free(p));
    }
}

typedef struct {
    unsigned char *p;
    size_t size;
    int owner;
    long tag;
} blk_t;

static void mix(int rounds)
{
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size();
    blk_t b[MIX_MAX] = {{0}};
    uint64_t rng = 12345; /* the same on every rank: allocation is collective */
    long tags = 0;
    int reused = 0;
    uintptr_t high = 0;
    for (int round = 0; round < rounds; round++) {
        /* Free about half, at random. */
        for (int i = 0; i < MIX_MAX; i++)
            if (b[i].p && (rng = mp_mix(rng)) % 2) {
                MP_OK(sdsm_free(b[i].p));
                b[i].p = NULL;
            }
        /* Refill with new sizes: 1 page to 8 MiB, odd byte counts too. */
        for (int i = 0; i < MIX_MAX; i++) {
            if (b[i].p)
                continue;
            rng = mp_mix(rng);
            size_t size = 1 + rng % ((rng >> 40) % 4 == 0 ? (size_t)8 << 20 : 16 * ps);
            int home = (int)((rng >> 20) % (unsigned)(n + 3)) - 3; /* a policy or a rank */
            b[i] = (blk_t){sdsm_alloc(size, home), size, (int)((rng >> 32) % (unsigned)n), ++tags};
            MP_NONNULL(b[i].p);
            uintptr_t a = (uintptr_t)b[i].p;
            if (a + size <= high)
                reused++;
            if (a + size > high)
                high = a + size;
            /* Fresh memory reads as zero, even where a freed block was. */
            MP_CHECK("fresh first byte", i, 0, b[i].p[0]);
            MP_CHECK("fresh last byte", i, 0, b[i].p[size - 1]);
        }
        /* Live blocks never overlap. */
        for (int i = 0; i < MIX_MAX; i++)
            for (int j = i + 1; j < MIX_MAX; j++)
                MP_ASSERT(b[i].p + b[i].size <= b[j].p || b[j].p + b[j].size <= b[i].p,
                          "blocks %d [%p, +%zu) and %d [%p, +%zu) overlap", i, (void *)b[i].p, b[i].size, j,
                          (void *)b[j].p, b[j].size);
        MP_OK(sdsm_barrier());
        for (int i = 0; i < MIX_MAX; i++)
            if (b[i].owner == me) { /* first, middle and last byte of every page would be slow; ends */
                memcpy(b[i].p, &b[i].tag, b[i].size < sizeof(long) ? b[i].size : sizeof(long));
                b[i].p[b[i].size - 1] = (unsigned char)(b[i].tag * 7 + 1);
            }
        MP_OK(sdsm_barrier());
        for (int i = 0; i < MIX_MAX; i++) {
            long t = 0;
            memcpy(&t, b[i].p, b[i].size < sizeof(long) ? b[i].size : sizeof(long));
            long want = b[i].tag;
            if (b[i].size < sizeof(long)) {
                want = 0;
                memcpy(&want, &b[i].tag, b[i].size);
                if (b[i].size == 1)
                    want = (unsigned char)(b[i].tag * 7 + 1);
            }
            MP_CHECK("block head", i, want, t);
            MP_CHECK("block tail", i, (unsigned char)(b[i].tag * 7 + 1), b[i].p[b[i].size - 1]);
        }
        MP_OK(sdsm_barrier());
        /* Everything is rewritten next round: clear the tags' meaning by freeing at random. */
    }
    MP_ASSERT(reused > rounds, "only %d of the new blocks went into freed ranges", reused);
    for (int i = 0; i < MIX_MAX; i++)
        if (b[i].p)
            MP_OK(sdsm_free(b[i].p));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    if (argc >= 4 && strcmp(argv[1], "loop") == 0)
        loop(atoi(argv[2]), (size_t)atol(argv[3]));
    else if (argc >= 3 && strcmp(argv[1], "mix") == 0)
        mix(atoi(argv[2]));
    else
        sdsm_abort(2, "usage: mp_reuse loop ITERS SIZE_MB | mix ROUNDS");
    return mp_finish("reuse");
}
