/*
 * idmap.h - a map from 32-bit ids to objects (locks, conditions), for
 * tables that a program may fill with any number of ids: open addressing,
 * linear probing, doubled when half full, so a lookup stays one or two
 * probes whether the program uses ten locks or a million.  Entries are
 * never removed.  Not thread-safe: the caller's mutex guards a map.
 */
#ifndef SDSM_CORE_IDMAP_H
#define SDSM_CORE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t key;
    void *val; /* NULL: a free slot */
} sdsm_idmap_slot_t;

typedef struct {
    sdsm_idmap_slot_t *slots; /* key and object side by side: one cache line per probe */
    size_t cap;               /* 1 << bits, or 0 before the first put */
    unsigned bits;
    size_t n;
} sdsm_idmap_t;

/* The object of id, or NULL. */
void *sdsm_idmap_get(const sdsm_idmap_t *m, uint32_t id);
/* Enter id -> v (v not NULL, id not yet in the map).  0, or SDSM_ENOMEM. */
int sdsm_idmap_put(sdsm_idmap_t *m, uint32_t id, void *v);
/* The object of id, or else a new one of size bytes, zeroed, entered for
 * id: *fresh says which (1: new, for the caller to fill in).  NULL if out
 * of memory. */
void *sdsm_idmap_get_or_new(sdsm_idmap_t *m, uint32_t id, size_t size, int *fresh);
/* Visit every object (in no particular order) until f returns non-zero. */
void sdsm_idmap_each(const sdsm_idmap_t *m, int (*f)(void *v, void *arg), void *arg);
/* Free the map's arrays (not the objects). */
void sdsm_idmap_free(sdsm_idmap_t *m);

#endif
