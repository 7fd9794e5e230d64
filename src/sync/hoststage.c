/*
 * hoststage.c - the host's stage of the tree barrier in a job whose ranks
 * keep a copy of the memory each (SDSM_BARRIER_SHM): the ranks of a host
 * meet their host's node of the tree in shared memory instead of over
 * loopback.
 *
 * Over loopback, each of a host's ranks cost its node two messages a
 * barrier, each a system call to send and a wake-up of a service thread to
 * receive, and the ranks of 8 emulated hosts x 8 took 3.2 x the time of 8
 * (one per host).  Here a rank's arrival is its BAR_UP written into its own
 * slot of the host's block and a counter bumped, and the release is written
 * once into the block and a generation word bumped, which the ranks wait on
 * (polling, then in futex(2)): one wake-up each way, and none of the node's
 * service thread.
 *
 * The barrier (barrier.c) stays the judge of everything: the node's
 * application thread reads the slots once all its host's ranks arrived and
 * hands each to the barrier's own handler as that rank's BAR_UP, and each
 * rank hands the release it reads to its own handler as its parent's.  So
 * the notices, the collective calls and the epochs are checked and merged
 * as before.  A message that does not fit (an arrival past the slot's
 * SDSM_BARRIER_SHM_SLOT bytes, a release past 16 times that) goes by
 * message as before, its place in the block marked so.
 *
 * The block is made by the host's lowest rank and handed to the others at
 * start-up (boot/share.c).  A rank that dies ends the job through its lost
 * connection, as before; the sleepers wake every 100 ms and after a second
 * tell rank 0 their collective call, so a rank in another kind of call is
 * reported, not waited for.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/status.h"
#include "mem/page.h"
#include "sync.h"

#define BY_MSG UINT32_MAX

typedef struct slot {    /* followed by the arrival's bytes */
    uint32_t len;        /* BY_MSG: this arrival went by message */
    _Atomic uint32_t in; /* the release (gen) it waits for: for hang reports */
    uint32_t pad[14];
} slot_t;

typedef struct stage {
    _Atomic uint32_t arrived; /* this round's arrivals: the node waits on it */
    _Atomic uint32_t node_sleeps;
    uint32_t pad0[14];
    _Atomic uint32_t gen; /* releases written: the others wait on it */
    _Atomic uint32_t sleepers;
    uint32_t rel_len; /* BY_MSG: this release went by message */
    uint32_t pad1[13];
    /* then the release's bytes (rel_cap), then one slot per rank of the
     * host, by its place among them (slot_cap bytes after each) */
} stage_t;

int sdsm_stage_fd = -1;
static stage_t *st;
static size_t st_len;
static int *place; /* per rank: its slot, -1 if it is not on this host */
static int nlocal;
static size_t slot_cap, rel_cap; /* SDSM_BARRIER_SHM_SLOT, 16 times it */

static uint8_t *rel_bytes(void) { return (uint8_t *)(st + 1); }

static slot_t *slot_of(int r)
{
    return (slot_t *)(void *)(rel_bytes() + rel_cap + (size_t)place[r] * (sizeof(slot_t) + slot_cap));
}

/* A slot's bytes: SDSM_BARRIER_SHM_SLOT, whole cache lines. */
static size_t slot_bytes(void) { return ((size_t)sdsm_cfg.barrier_shm_slot + 63) / 64 * 64; }

/* Not rounded to pages: the file's size tells whether the host's ranks agree. */
size_t sdsm_stage_bytes(int local)
{
    return sizeof(stage_t) + 16 * slot_bytes() + (size_t)local * (sizeof(slot_t) + slot_bytes());
}

int sdsm_stage_init(const int *host_of, int nprocs, int rank)
{
    if (sdsm_stage_fd < 0 || !host_of)
        return 0;
    if (!(place = malloc((size_t)nprocs * sizeof *place)))
        return SDSM_ENOMEM;
    nlocal = 0;
    for (int r = 0; r < nprocs; r++)
        place[r] = host_of[r] == host_of[rank] ? nlocal++ : -1;
    slot_cap = slot_bytes();
    rel_cap = 16 * slot_cap;
    st_len = sdsm_stage_bytes(nlocal);
    /* The host's lowest rank sized the file by its own settings. */
    struct stat sb;
    void *m = MAP_FAILED;
    int rc = 0;
    if (fstat(sdsm_stage_fd, &sb) || (size_t)sb.st_size != st_len) {
        sdsm_error_log("the host's barrier block is %lld bytes, this rank expects %zu: the ranks of "
                       "a host must have the same SDSM_BARRIER_SHM_SLOT",
                       (long long)sb.st_size, st_len);
        rc = SDSM_EINVAL;
    } else if ((m = mmap(NULL, st_len, PROT_READ | PROT_WRITE, MAP_SHARED, sdsm_stage_fd, 0)) == MAP_FAILED) {
        sdsm_error_log("cannot map the host's barrier block (SDSM_BARRIER_SHM=0 runs without it): %m");
        rc = SDSM_ESYS;
    }
    close(sdsm_stage_fd);
    sdsm_stage_fd = -1;
    if (rc) {
        free(place);
        place = NULL;
        return rc;
    }
    st = m;
    return 0;
}

void sdsm_stage_fini(void)
{
    if (st)
        munmap(st, st_len);
    st = NULL;
    free(place);
    place = NULL;
}

int sdsm_stage_on(void) { return st != NULL; }

int sdsm_stage_local(int r) { return st && place[r] >= 0; }

int sdsm_stage_ranks(void) { return st ? nlocal : 0; }

uint32_t sdsm_stage_gen(void) { return atomic_load_explicit(&st->gen, memory_order_acquire); }

int sdsm_stage_arrive(int me, const void *msg, size_t len)
{
    slot_t *s = slot_of(me);
    int fits = len <= slot_cap;
    if (fits)
        memcpy(s + 1, msg, len);
    s->len = fits ? (uint32_t)len : BY_MSG;
    atomic_store_explicit(&s->in, atomic_load(&st->gen) + 1, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&st->arrived, 1, memory_order_acq_rel) + 1 == (uint32_t)nlocal - 1)
        sdsm_host_wake(&st->arrived, &st->node_sleeps);
    return fits;
}

void sdsm_stage_collect(int me, const sdsm_coll_t *call, void (*each)(int rank, const void *body, size_t len))
{
    uint32_t a;
    while ((a = atomic_load_explicit(&st->arrived, memory_order_acquire)) != (uint32_t)nlocal - 1) {
        if (a > (uint32_t)nlocal - 1)
            sdsm_fatal("the host's barrier block counts %u arrivals of %d ranks: shared memory was "
                       "overwritten",
                       a, nlocal - 1);
        sdsm_host_wait(&st->arrived, a, &st->node_sleeps, call);
    }
    /* Nobody arrives again before this round's release (gen). */
    atomic_store_explicit(&st->arrived, 0, memory_order_relaxed);
    for (int r = 0, n = sdsm_region.nprocs; r < n; r++) {
        if (r == me || place[r] < 0)
            continue;
        const slot_t *s = slot_of(r);
        if (s->len == BY_MSG)
            continue; /* its BAR_UP comes by message */
        if (s->len > slot_cap)
            sdsm_fatal("rank %d's barrier slot holds %u bytes: shared memory was overwritten", r, s->len);
        each(r, s + 1, s->len);
    }
}

int sdsm_stage_arrived(int r)
{
    return st && place[r] >= 0 &&
           atomic_load_explicit(&slot_of(r)->in, memory_order_relaxed) == atomic_load(&st->gen) + 1;
}

int sdsm_stage_release(const void *p, size_t len)
{
    int fits = len <= rel_cap;
    if (fits)
        memcpy(rel_bytes(), p, len);
    st->rel_len = fits ? (uint32_t)len : BY_MSG;
    atomic_fetch_add_explicit(&st->gen, 1, memory_order_release);
    sdsm_host_wake(&st->gen, &st->sleepers);
    return fits;
}

const void *sdsm_stage_wait_release(uint32_t g, const sdsm_coll_t *call, size_t *len)
{
    sdsm_host_wait(&st->gen, g, &st->sleepers, call);
    uint32_t n = st->rel_len;
    if (n == BY_MSG)
        return NULL;
    if (n > rel_cap)
        sdsm_fatal("the host's barrier block holds a release of %u bytes: shared memory was overwritten", n);
    *len = n;
    return rel_bytes();
}
