/*
 * heapmeta.c - what a huge shared heap costs a rank before it is used.
 *
 *   SDSM_HEAP_SIZE=1T mp_heapmeta
 *
 * The shared heap is reserved address space; what the runtime keeps per
 * page must not be allocated up front.  Each rank measures its resident
 * memory (VmRSS) before sdsm_init, after it, and after allocating a block
 * of a quarter of the heap (SDSM_HOME_CYCLIC, whose homes are computed, not
 * stored): the growth must stay under 1 % of the heap's page count in bytes
 * (2.7 MB for 1 TiB of 4 KiB pages).  Then every rank writes one long in
 * 64 pages of its own spread over the block, barrier, and every rank reads
 * and checks all of them, so the block works.
 */
#define MP_NAME "heapmeta"
#include "mp.h"

#define SPOTS 64

static size_t heap_bytes(void)
{
    const char *s = getenv("SDSM_HEAP_SIZE");
    char *end;
    size_t v = s ? strtoull(s, &end, 10) : 0;
    if (!s || end == s)
        return 0;
    switch (*end) {
    case 'T': return v << 40;
    case 'G': return v << 30;
    case 'M': return v << 20;
    default: return v;
    }
}

int main(int argc, char **argv)
{
    long before = mp_vm_rss_kb();
    mp_init(&argc, &argv);
    long inited = mp_vm_rss_kb();
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t heap = heap_bytes(), pages = heap / 4096, bound_kb = pages / 100 / 1024;
    MP_ASSERT(heap >= (1UL << 30), "SDSM_HEAP_SIZE=%s: set it to a size such as 1T",
              getenv("SDSM_HEAP_SIZE") ? getenv("SDSM_HEAP_SIZE") : "(unset)");
    size_t size = heap / 4;
    volatile long *blk = sdsm_alloc(size, SDSM_HOME_CYCLIC);
    MP_NONNULL(blk);
    long allocated = mp_vm_rss_kb();
    printf("heapmeta: rank %d: heap %zu GiB (%zu pages): VmRSS %ld kB before sdsm_init, %ld after, %ld after "
           "allocating %zu GiB; bound %zu kB\n",
           me, heap >> 30, pages, before, inited, allocated, size >> 30, bound_kb);
    MP_ASSERT(before > 0 && allocated - before <= (long)bound_kb,
              "resident memory grew by %ld kB for a heap of %zu pages (bound %zu kB)", allocated - before,
              pages, bound_kb);

    size_t nlongs = size / sizeof(long), stride = nlongs / ((size_t)n * SPOTS);
    for (size_t j = 0; j < SPOTS; j++) {
        size_t i = (j * (size_t)n + (size_t)me) * stride;
        blk[i] = (long)(i ^ 0x5a5a5a5a);
    }
    MP_OK(sdsm_barrier());
    for (size_t k = 0; k < (size_t)n * SPOTS; k++)
        MP_CHECK("block", k * stride, (long)((k * stride) ^ 0x5a5a5a5a), blk[k * stride]);
    MP_OK(sdsm_barrier());
    return mp_finish("heapmeta");
}
