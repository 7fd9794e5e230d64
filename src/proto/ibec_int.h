/*
 * ibec_int.h - ibec's critical sections, one per thread (ibec_cs.c), shared
 * with the protocol proper (ibec.c).  Internal to src/proto.
 */
#ifndef SDSM_PROTO_IBEC_INT_H
#define SDSM_PROTO_IBEC_INT_H

#include <pthread.h>
#include <stdint.h>

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
    uint32_t       *cs, ncs; /* pages of the current segment (npages capacity) */
    uint32_t       *cs_spare; /* the list being closed */
    struct {
        int   id;
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
extern uint8_t  *sdsm_ibec_owner;
extern uint16_t *sdsm_ibec_listed;

/* Protection keys, or one section at a time (the gate) without them.
 * Call from the main thread before any other thread starts.  0 or -ENOMEM. */
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

#endif
