/*
 * host.c - the "protocol" of a job whose ranks all run on one host
 * (SDSM_HOST_SHARE): every rank maps rank 0's heap file (boot/share.c), so
 * there is one copy of the shared memory and the processor keeps it
 * coherent.  Nothing is fetched, twinned, diffed or announced; a rank's
 * first access to a block makes the block accessible in its view (guard
 * pages excepted: they stay closed so that a stack overflow is still
 * reported), and locks and barriers only order, as they do between threads.
 * The synchronization's own messages still carry that order: a system call
 * on each side of a send is a full memory barrier.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/trace.h"
#include "mem/alloc.h"
#include "mem/fault.h"
#include "mem/page.h"
#include "proto/proto.h"

/* A freed block is closed again, so that a stray access still stops the
 * job (and the next block there opens on its first access). */
static void host_free(uint32_t first, uint32_t n)
{
    if (mprotect(sdsm_page_app(first), (size_t)n << sdsm_region.shift, PROT_NONE))
        sdsm_fatal("mprotect of %u freed page(s) at page %u: %m", n, first);
}

static int host_init(void)
{
    sdsm_alloc_on_free = host_free;
    return 0;
}

static int host_fault(uint32_t pg, int is_write)
{
    uint64_t t0 = sdsm_trace_t0();
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (!a)
        return SDSM_EINVAL;
    uint32_t first = a->first, end = a->first + a->npages;
    if (sdsm_fault_guarded(first, end - first)) { /* the stretch between two guards */
        for (first = pg; first > a->first && !sdsm_fault_guarded(first - 1, 1); first--)
            ;
        for (end = pg + 1; end < a->first + a->npages && !sdsm_fault_guarded(end, 1); end++)
            ;
    }
    uint32_t n = end - first;
    if (mprotect(sdsm_page_app(first), (size_t)n << sdsm_region.shift, PROT_READ | PROT_WRITE))
        sdsm_fatal("mprotect of %u shared page(s) at page %u: %m", n, first);
    sdsm_stat_add(is_write > 0 ? SDSM_ST_WRITE_FAULTS : SDSM_ST_READ_FAULTS, 1);
    SDSM_TRACE(is_write > 0 ? SDSM_TR_FAULT_WRITE : SDSM_TR_FAULT_READ, t0, pg, 0, 0);
    return 0;
}

static int host_release(sdsm_sync_kind_t kind, int via, const uint32_t **pages, uint32_t *n)
{
    (void)kind, (void)via;
    atomic_thread_fence(memory_order_seq_cst);
    *pages = NULL;
    *n = 0;
    return 0;
}

static void host_acquire(sdsm_sync_kind_t kind)
{
    (void)kind;
    atomic_thread_fence(memory_order_seq_cst);
}

static int host_barrier_done(const uint8_t *pairs, uint32_t n) { return n ? (void)pairs, SDSM_EPROTO : 0; }
static uint32_t host_barrier_flags(void) { return 0; }
static void host_barrier_second(void) {}
static void host_barrier_after(const uint8_t *pairs, uint32_t n) { (void)pairs, (void)n; }
static void host_free_range(uint32_t first, uint32_t n) { (void)first, (void)n; }
static int host_flush(uint32_t first, uint32_t n, int drop) { return (void)first, (void)n, (void)drop, 0; }
static void host_prefetch(uint32_t first, uint32_t n) { (void)first, (void)n; }
static uint32_t host_lock_stamp(int id) { return (void)id, 0; }

static int host_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp)
{
    (void)id, (void)stamp;
    atomic_thread_fence(memory_order_seq_cst);
    *payload = NULL;
    *len = 0;
    return 0;
}

static int host_acquire_lock(int id, const uint8_t *chain, size_t len)
{
    (void)id, (void)chain;
    atomic_thread_fence(memory_order_seq_cst);
    return len ? SDSM_EPROTO : 0;
}

const sdsm_proto_ops_t sdsm_proto_host = {
    .name = "host",
    .init = host_init,
    .fault = host_fault,
    .release = host_release,
    .acquire = host_acquire,
    .barrier_done = host_barrier_done,
    .barrier_flags = host_barrier_flags,
    .barrier_second = host_barrier_second,
    .barrier_after = host_barrier_after,
    .free_range = host_free_range,
    .flush = host_flush,
    .prefetch = host_prefetch,
    .lock_stamp = host_lock_stamp,
    .release_lock = host_release_lock,
    .acquire_lock = host_acquire_lock,
};
