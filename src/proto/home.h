/*
 * home.h - the pieces the home-based protocols (hlrc, update, ibec) share;
 * see home.c.  Internal to src/proto.
 */
#ifndef SDSM_PROTO_HOME_H
#define SDSM_PROTO_HOME_H

#include <stddef.h>
#include <stdint.h>

#include "net/rpc.h"
#include "proto/proto.h"

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
} buf_t;

/* Called when a page becomes writable (stripe lock held); ibec makes twinL. */
typedef void (*sdsm_write_hook_t)(uint32_t pg);
extern sdsm_write_hook_t sdsm_home_write_hook;
/* Called when a fetch of pg is served (stripe lock held) with the copy sent;
 * ibec notes which bytes of a page the home is writing the reader got. */
typedef void (*sdsm_serve_hook_t)(uint32_t pg, const uint8_t *copy);
extern sdsm_serve_hook_t sdsm_home_serve_hook;
/* ibec check mode (SDSM_IBEC_CHECK): a diff of writes made outside any
 * critical section, by writer (-1: not known), reached this rank for pg -
 * at the home, or forwarded to a copy holder.  NULL when the check is off. */
typedef void (*sdsm_check_hook_t)(uint32_t pg, int writer);
extern sdsm_check_hook_t sdsm_home_check_hook;
/* ibec: homes twin their own pages too (to forward diffs of their writes). */
extern int sdsm_home_twins_at_home;
/* hlrc, update: a home twins the pages others hold when it writes them and
 * serves the twin until its release (SDSM_HOME_TWINS; open.c, serve.c). */
extern int sdsm_home_twins_shared;
void sdsm_home_inval_copies(int dst, const uint32_t *skip, uint32_t nskip);      /* inval.c */
void sdsm_home_inval_unannounced(int dst, const uint32_t *skip, uint32_t nskip); /* inval.c */
/* ibec: second twin area; forwarded diffs are applied to it as well. */
extern uint8_t *sdsm_home_twin2;

/* Home migration (migrate.c, SDSM_HOME_MIGRATE): at a barrier notice for
 * pg, under its lock, its only writer (-1: several); and, of the pages this
 * rank wrote in the interval its arrival ends, those it proposes to become
 * the home of: it alone wrote them at the last barrier that named them, and
 * is not their home.  Returns how many, in *out (malloc'd, the caller frees
 * it; NULL when none: nothing is allocated at a barrier without any). */
void sdsm_home_note_writer(uint32_t pg, int writer);
uint32_t sdsm_home_pick_moves(const uint32_t *pages, uint32_t n, uint32_t **out);

/* A zeroed mapping of bytes, reserved lazily (MAP_NORESERVE: pages never
 * touched cost nothing), and one of elem bytes per page of the region;
 * NULL when the mapping fails. */
void *sdsm_home_map_zeroed(size_t bytes);
void *sdsm_home_per_page(size_t elem);

int sdsm_home_init(void);
int sdsm_home_fault(uint32_t pg, int is_write);
void sdsm_home_prefetch(uint32_t first, uint32_t n);
int sdsm_home_release(sdsm_sync_kind_t kind, int via, const uint32_t **pages, uint32_t *npages);
int sdsm_home_publish(uint32_t *written, uint32_t *again);
/* Installed by the quiet-rank publisher (sync/quiet.c) while it runs: have
 * it publish now.  An invalidation that sent this rank's writes for one
 * home early holds them there until a publish has made the rest visible
 * (copies.c, early_publish); NULL when nobody would publish. */
extern void (*volatile sdsm_home_publish_soon)(void);
int sdsm_home_check_pairs(const uint8_t *pairs, uint32_t n);
int sdsm_home_barrier_notices(const uint8_t *pairs, uint32_t n, int push);
void sdsm_home_push_notices(const uint8_t *pairs, uint32_t n);
int sdsm_home_flush_range(uint32_t first, uint32_t n, int drop, unsigned flags);
int sdsm_home_overwrite(const uint8_t *addr, size_t len, const uint8_t *data);
void sdsm_home_discard(const uint8_t *addr, size_t len);
void sdsm_home_apply_moves(const uint8_t *moves, uint32_t n);
void sdsm_home_apply_to_copies(const uint8_t *p, size_t len, uint8_t *twin2_base);
void sdsm_home_free_range(uint32_t first, uint32_t n);
void sdsm_home_push(uint32_t pg, int to);
void sdsm_home_forward_lock_diffs(void);
extern _Atomic uint32_t sdsm_home_lock_fwd_pending;

/* Shared by the hlrc and update operations tables. */
uint32_t sdsm_home_no_stamp(int id);
uint32_t sdsm_home_no_flags(void);
void sdsm_home_no_second(void);
void sdsm_home_no_acquire(sdsm_sync_kind_t kind);
int sdsm_home_flush(uint32_t first, uint32_t n, int drop);
int sdsm_home_release_lock(int id, uint8_t **payload, size_t *len, uint32_t *stamp);
int sdsm_home_acquire_lock(int id, const uint8_t *chain, size_t len);

void sdsm_buf_reserve(buf_t *b, size_t more);
void sdsm_batch_add(buf_t *b, uint32_t pg, const uint8_t *twin);
void sdsm_batch_send(buf_t *b, int home, unsigned flags, sdsm_rpc_t *r, uint32_t id);
int sdsm_cmp_u32(const void *a, const void *b);
int sdsm_copyset_others(uint32_t pg);

#endif
