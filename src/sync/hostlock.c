/*
 * hostlock.c - the locks of a job whose ranks share one copy of the memory
 * (SDSM_HOST_SHARE), kept in the host's control block (hostbar.c) instead
 * of at their managers: with nothing to flush or carry, a lock passed
 * between ranks is one cache line, not three messages.
 *
 * The table has SLOTS entries, each a lock id (plus one; 0: free) and a
 * futex word: 0 free, 1 held, 2 held and someone may sleep.  A lock's
 * entry is found by probing at most PROBES entries from its id's hash and
 * claimed by a compare-and-swap of the free id, so every rank finds the
 * same entry without agreeing beforehand; entries are never given back.
 * Once those PROBES entries are taken, an id not among them goes through
 * its manager's messages, on every rank alike (no entry can appear for it
 * any more).  The bound keeps a look-up short when the table fills: a
 * pthreads program's objects each have an id (BARNES's condition
 * variables, one per cell, filled 4,096 entries, and every look-up of a
 * later one walked them all: 29 % of its run).
 *
 * A taker polls as the runtime's other waits do, then sleeps in futex(2)
 * (shared, not private: the word is in another process's memory too),
 * waking every 100 ms: a holder that dies ends the job through its lost
 * connection, never leaving the others asleep for good.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "core/blocked.h"
#include "core/config.h"
#include "core/wait.h"
#include "mem/page.h"
#include "sync.h"

#define SLOTS  32768
#define PROBES 64

typedef struct hostlock {
    _Atomic uint32_t key;  /* id + 1; 0: free entry */
    _Atomic uint32_t word; /* 0 free, 1 held, 2 held, maybe sleepers */
    _Atomic int32_t holder;
    _Atomic uint32_t waiting;
    _Atomic uint64_t wanting; /* ranks below 64 waiting (hang reports) */
} hostlock_t;

size_t sdsm_hostlock_bytes(void) { return SLOTS * sizeof(hostlock_t); }

static hostlock_t *find(uint32_t id)
{
    hostlock_t *t = sdsm_hostbar_locks();
    if (!t || id == UINT32_MAX)
        return NULL;
    uint32_t key = id + 1, h = (id * 2654435761u) % SLOTS;
    for (uint32_t i = 0; i < PROBES; i++) {
        hostlock_t *l = &t[(h + i) % SLOTS];
        uint32_t k = atomic_load_explicit(&l->key, memory_order_acquire);
        if (k == 0 && atomic_compare_exchange_strong(&l->key, &k, key))
            return l;
        if (k == key)
            return l;
    }
    return NULL;
}

int sdsm_hostlock_on(uint32_t id) { return find(id) != NULL; }

/* Polls while another rank holds it (not where polls lost their CPU lately). */
static int poll_free(_Atomic uint32_t *word)
{
    long spin_us = atomic_load_explicit(&sdsm_wait_spin_us, memory_order_relaxed);
    uint64_t now = sdsm_now_ns(), until = now + (uint64_t)(spin_us > 0 ? spin_us : 0) * 1000u;
    if (spin_us <= 0 || sdsm_hostbar_crowded() || sdsm_spin_held(now))
        return 0;
    do {
        for (int i = 0; i < 32; i++) {
            uint32_t c = 0;
            if (atomic_load_explicit(word, memory_order_relaxed) == 0 &&
                atomic_compare_exchange_strong(word, &c, 1))
                return 1;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    } while (sdsm_now_ns() < until);
    return 0;
}

/* Asleep until the word is taken (0) or abs (on clock; NULL: never) has
 * passed (ETIMEDOUT).  A taker that went to sleep leaves the word at 2,
 * so the holder's give wakes one sleeper.  resume: a compute thread takes
 * a run slot again each time it wakes, before it tries the word, so it
 * never holds the lock while it waits for a slot (the slots' holders may
 * be spinning on a trylock of it). */
static int sleep_take(_Atomic uint32_t *word, clockid_t clock, const struct timespec *abs, int resume)
{
    int slot = 1; /* this thread may hold a run slot */
    while (atomic_exchange(word, 2) != 0) {
        struct timespec nap = {0, 100 * 1000 * 1000};
        if (abs) {
            struct timespec now;
            clock_gettime(clock, &now);
            long left = (abs->tv_sec - now.tv_sec) * 1000000000l + (abs->tv_nsec - now.tv_nsec);
            if (left <= 0)
                return ETIMEDOUT;
            if (left < nap.tv_nsec)
                nap.tv_nsec = left;
        }
        if (slot)
            sdsm_wait_blocking();
        slot = 0;
        sdsm_futex_wait_shared(word, 2, &nap);
        if (resume) {
            sdsm_wait_resume();
            slot = 1;
        }
    }
    return 0;
}

int sdsm_hostword_take(_Atomic uint32_t *word, int64_t report_id, clockid_t clock, const struct timespec *abs)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(word, &c, 1) || poll_free(word))
        return 0;
    sdsm_wait_save_t sv;
    sdsm_wait_enter(&sv, SDSM_WAIT_LOCK, report_id);
    int rc = sleep_take(word, clock, abs, 1);
    sdsm_wait_leave(&sv);
    return rc;
}

void sdsm_hostword_give(_Atomic uint32_t *word)
{
    if (atomic_exchange(word, 0) == 2)
        sdsm_futex_wake_shared(word, 1);
}

uint64_t sdsm_hostlock_take(uint32_t id)
{
    hostlock_t *l = find(id);
    uint32_t c = 0;
    uint64_t t0 = 0;
    if (!atomic_compare_exchange_strong(&l->word, &c, 1) && (t0 = sdsm_now_ns(), !poll_free(&l->word))) {
        uint64_t bit = sdsm_region.rank < 64 ? 1ull << sdsm_region.rank : 0;
        sdsm_wait_save_t sv;
        sdsm_wait_enter(&sv, SDSM_WAIT_LOCK, (int64_t)id);
        atomic_fetch_add(&l->waiting, 1);
        atomic_fetch_or(&l->wanting, bit);
        sleep_take(&l->word, CLOCK_MONOTONIC, NULL, 0);
        atomic_fetch_sub(&l->waiting, 1);
        sdsm_wait_leave(&sv);
        atomic_fetch_and(&l->wanting,
                         ~bit); /* (another thread of this rank may still wait: rare, and only a report) */
    }
    atomic_store_explicit(&l->holder, sdsm_region.rank, memory_order_relaxed);
    if (!t0)
        return 0;
    uint64_t waited = sdsm_now_ns() - t0;
    return waited ? waited : 1;
}

int sdsm_hostlock_list_mine(char *buf, size_t len, int before)
{
    hostlock_t *t = sdsm_hostbar_locks();
    size_t off = 0;
    int n = 0;
    for (uint32_t i = 0; t && i < SLOTS; i++) {
        uint32_t k = atomic_load(&t[i].key);
        if (!k || !atomic_load(&t[i].word) || atomic_load(&t[i].holder) != sdsm_region.rank)
            continue;
        if (off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%u", before + n ? ", " : "", k - 1);
        n++;
    }
    return n;
}

void sdsm_hostlock_give_mine(void)
{
    hostlock_t *t = sdsm_hostbar_locks();
    for (uint32_t i = 0; t && i < SLOTS; i++) {
        uint32_t k = atomic_load(&t[i].key);
        if (k && atomic_load(&t[i].word) && atomic_load(&t[i].holder) == sdsm_region.rank)
            sdsm_hostlock_give(k - 1);
    }
}

void sdsm_hostlock_give(uint32_t id)
{
    hostlock_t *l = find(id);
    atomic_store_explicit(&l->holder, -1, memory_order_relaxed);
    sdsm_hostword_give(&l->word);
}

int sdsm_hostlock_describe(char *buf, size_t len)
{
    hostlock_t *t = sdsm_hostbar_locks();
    size_t off = 0;
    int n = 0;
    for (uint32_t i = 0; t && i < SLOTS && off < len; i++) {
        uint32_t k = atomic_load(&t[i].key), waiting = atomic_load(&t[i].waiting);
        if (!k || !atomic_load(&t[i].word) || !waiting || sdsm_sync_manager(k - 1) != sdsm_region.rank)
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%smanages lock %u: held by rank %d, wanted by ranks",
                                n++ ? "; " : "", k - 1, (int)atomic_load(&t[i].holder));
        uint64_t w = atomic_load(&t[i].wanting);
        for (int r = 0, shown = 0; r < 64 && off < len; r++)
            if ((w >> r) & 1)
                off += (size_t)snprintf(buf + off, len - off, shown++ ? ", %d" : " %d", r);
        if (off < len && (waiting > (uint32_t)__builtin_popcountll(w)))
            off += (size_t)snprintf(buf + off, len - off, " (%u waiting)", waiting);
    }
    return n;
}
