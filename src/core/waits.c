/*
 * waits.c - the per-thread wait records (see waits.h).
 *
 * A fixed table: a thread takes the next slot the first time it waits and
 * keeps it; past the table's end threads share the last slot (the report
 * then shows one of them).  Initial-exec TLS so the fault handler never
 * calls into the dynamic linker.
 */
#include "waits.h"

#include <stdatomic.h>

#include "core/stats.h"

#define SLOTS 256

typedef struct slot {
    _Atomic uint32_t kind;
    _Atomic int64_t  id;
    _Atomic uint64_t since;
} slot_t;

static slot_t          slots[SLOTS];
static _Atomic int     nslots;
static __thread int    my_slot __attribute__((tls_model("initial-exec"))) = -1;

static slot_t *mine(void)
{
    if (my_slot < 0) {
        int s = atomic_fetch_add(&nslots, 1);
        my_slot = s < SLOTS ? s : SLOTS - 1;
    }
    return &slots[my_slot];
}

void sdsm_wait_enter(sdsm_wait_save_t *save, sdsm_wait_kind_t kind, int64_t id)
{
    slot_t *s = mine();
    save->kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
    save->id = atomic_load_explicit(&s->id, memory_order_relaxed);
    save->since = atomic_load_explicit(&s->since, memory_order_relaxed);
    atomic_store_explicit(&s->since, sdsm_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&s->id, id, memory_order_relaxed);
    atomic_store_explicit(&s->kind, kind, memory_order_release);
}

void sdsm_wait_leave(const sdsm_wait_save_t *save)
{
    slot_t *s = mine();
    atomic_store_explicit(&s->kind, save->kind, memory_order_release);
    atomic_store_explicit(&s->id, save->id, memory_order_relaxed);
    atomic_store_explicit(&s->since, save->since, memory_order_relaxed);
}

int sdsm_wait_each(void (*fn)(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns),
                   void *arg, uint64_t now)
{
    int n = atomic_load(&nslots);
    if (n > SLOTS)
        n = SLOTS;
    for (int i = 0; i < n; i++) {
        uint32_t k = atomic_load_explicit(&slots[i].kind, memory_order_acquire);
        if (k == SDSM_WAIT_NONE || k >= SDSM_WAIT_NKINDS)
            continue;
        int64_t id = atomic_load_explicit(&slots[i].id, memory_order_relaxed);
        uint64_t t = atomic_load_explicit(&slots[i].since, memory_order_relaxed);
        if (fn)
            fn(arg, i, k, id, now > t ? now - t : 0);
    }
    return n;
}

static void longest(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns)
{
    (void)thread, (void)kind, (void)id;
    uint64_t *m = arg;
    if (ns > *m)
        *m = ns;
}

uint64_t sdsm_wait_longest_ns(uint64_t now)
{
    uint64_t m = 0;
    sdsm_wait_each(longest, &m, now);
    return m;
}
