/*
 * ibec_int.h - ibec's critical sections, one per thread (ibec_cs.c), shared
 * with the protocol proper (ibec.c: barriers, served masks, check mode;
 * ibec_lock.c: writes bound to locks), and the state those two share.
 * Internal to src/proto.
 */
#ifndef SDSM_PROTO_IBEC_INT_H
#define SDSM_PROTO_IBEC_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/idmap.h"
#include "mem/page.h"
#include "proto/home.h"

#define IBEC_MAX_DEPTH 64

/*
 * The critical sections of one thread: the locks it holds, innermost last,
 * each with the diffL made so far, and the pages written in the current
 * segment (since the last acquire or release of this thread), which have
 * twinL and belong to this section (ibec_owner).  mtx guards cs, ncs,
 * depth and held; it is taken after a page's stripe lock.
 */
typedef struct ibec_sec {
    pthread_mutex_t mtx;
    uint32_t *cs, ncs;  /* pages of the current segment (npages capacity) */
    uint32_t *cs_spare; /* the list being closed */
    struct {
        int id;
        buf_t diff;
    } held[IBEC_MAX_DEPTH];
    int depth;
    int index; /* 1.., as in ibec_owner */
    int key;   /* protection key only this section's thread may write (keyed mode) */
    int used;  /* given to a thread (under the pool's mutex) */
} ibec_sec_t;

/*
 * Per page (stripe lock held): the index of the section whose twinL it has
 * (0: none), and which sections list it in their current segment (a bit
 * per index), so a page handed back and forth is listed once.
 */
extern uint8_t *sdsm_ibec_owner;
extern uint16_t *sdsm_ibec_listed;

/* Protection keys, or one section at a time (the gate) without them.
 * Call from the main thread before any other thread starts.  0 or SDSM_ENOMEM. */
int sdsm_ibec_cs_init(void);
/* 1 when each thread's section has its own key. */
int sdsm_ibec_cs_keyed(void);
/* How many threads of this rank may be in critical sections at once. */
int sdsm_ibec_cs_slots(void);
/* The calling thread's section (NULL outside critical sections). */
ibec_sec_t *sdsm_ibec_cs_mine(void);
/* Section by index (1..), or NULL. */
ibec_sec_t *sdsm_ibec_cs_get(int index);
/* The calling thread's first lock: a free section, its key made the only
 * writable one for this thread.  *others: sections already in use. */
ibec_sec_t *sdsm_ibec_cs_take(int *others);
/* The calling thread's last lock went: every key writable again. */
void sdsm_ibec_cs_give(ibec_sec_t *s);
/* Finalize: the section (of any thread) holding lock id, or NULL. */
ibec_sec_t *sdsm_ibec_cs_holding(int id);

/*
 * Keys of the application view's pages (keyed mode; stripe lock held).
 * A writable page has: the key of the section whose twinL it has; the
 * free key if its writes need no tracking (a home page nobody else
 * holds); else the common key, which no thread inside a critical section
 * may write, so its first write there faults and makes twinL.  prot is
 * the protection to set with the key.  Returns 1 if it set them, 0 if the
 * page had the key already (its protection is left alone) or there are no
 * keys.
 */
enum { IBEC_KEY_COMMON = -1, IBEC_KEY_FREE = -2 };
int sdsm_ibec_page_key(uint32_t pg, int key, int prot);

/* The protocol's state (ibec.c defines it; ibec_lock.c shares it). */
typedef struct sdsm_ibec_state {
    int me, n;
    size_t ps;
    uint8_t *twinl;
    pthread_mutex_t mtx; /* stamps */
    uint32_t *work;      /* scratch page list (npages capacity) */
    sdsm_idmap_t stamps; /* lock id -> stamp_t (ibec_lock.c) */
    uint32_t barriers;
    pthread_mutex_t out_mtx; /* out, when diffL is sent */
    buf_t *out;              /* per-home diffB and diffL batches */
    _Atomic int lock_diffs;  /* diffL sent to homes since the last barrier */
    uint32_t diffb_left;     /* barrier: pages with a diffB to send */
    uint8_t *maskb, *maskl;  /* served masks of twinB and twinL: a bit per byte */
    uint8_t *masked;         /* per page: MASK_B | MASK_L (stripe lock) */
} sdsm_ibec_state_t;

/* The one instance; ibs is the short name the ibec files use. */
extern sdsm_ibec_state_t sdsm_ibec_state;
#define ibs sdsm_ibec_state

enum { MASK_B = 1, MASK_L = 2 };

/* pg's served mask in base (maskb or maskl), and its twinL. */
static inline uint8_t *sdsm_ibec_mask_of(uint8_t *base, uint32_t pg)
{
    return base + ((size_t)pg << sdsm_region.shift) / 8;
}

static inline uint8_t *sdsm_ibec_twinl(uint32_t pg) { return ibs.twinl + ((size_t)pg << sdsm_region.shift); }

/* ibec.c, stripe lock held: a home page nobody else holds (no twin, no
 * diff, kept writable). */
int sdsm_ibec_home_private(uint32_t pg);
/* ibec.c, stripe lock held: the served mask of pg's twin (which: MASK_B or
 * MASK_L) forced into the twin before a diff, or dropped; spent either way. */
void sdsm_ibec_mask_force(uint8_t *mask, uint8_t *twin, uint32_t pg, int which);
void sdsm_ibec_mask_drop(uint8_t *mask, uint32_t pg, int which);
/* ibec.c, check mode: pg was fetched by the runtime, not read by the
 * program; its next read must still fault.  No page lock held. */
void sdsm_ibec_check_unread(uint32_t pg);

/* ibec_lock.c: the fault path's write hook, keyed mode's write fault on a
 * writable page (1 if handled), and the lock operations of the table. */
void sdsm_ibec_write_hook(uint32_t pg);
int sdsm_ibec_key_fault(uint32_t pg);
uint32_t sdsm_ibec_lock_stamp(int id);
int sdsm_ibec_acquire_lock(int id, const uint8_t *chain, size_t len);
int sdsm_ibec_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp);

#endif
