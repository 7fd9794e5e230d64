/*
 * idmap.c - see idmap.h.
 */
#include "core/idmap.h"

#include <stdlib.h>

#include "core/status.h"

/* Fibonacci hashing (the product's top bits): ids in a run, the common
 * case, spread evenly. */
static size_t slot_of(uint32_t id, unsigned bits)
{
    return (size_t)((uint32_t)(id * 2654435769u) >> (32 - bits));
}

void *sdsm_idmap_get(const sdsm_idmap_t *m, uint32_t id)
{
    if (!m->cap)
        return NULL;
    for (size_t i = slot_of(id, m->bits);; i = (i + 1) & (m->cap - 1)) {
        const sdsm_idmap_slot_t *e = &m->slots[i];
        if (!e->val)
            return NULL;
        if (e->key == id)
            return e->val;
    }
}

static void insert(sdsm_idmap_slot_t *slots, unsigned bits, uint32_t id, void *v)
{
    size_t cap = (size_t)1 << bits, i = slot_of(id, bits);
    while (slots[i].val)
        i = (i + 1) & (cap - 1);
    slots[i] = (sdsm_idmap_slot_t){id, v};
}

int sdsm_idmap_put(sdsm_idmap_t *m, uint32_t id, void *v)
{
    if (2 * (m->n + 1) > m->cap) {
        if (m->bits >= 31)
            return SDSM_ENOMEM;
        unsigned bits = m->cap ? m->bits + 1 : 6;
        size_t cap = (size_t)1 << bits;
        sdsm_idmap_slot_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return SDSM_ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].val)
                insert(slots, bits, m->slots[i].key, m->slots[i].val);
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
        m->bits = bits;
    }
    insert(m->slots, m->bits, id, v);
    m->n++;
    return 0;
}

void *sdsm_idmap_get_or_new(sdsm_idmap_t *m, uint32_t id, size_t size, int *fresh)
{
    void *v = sdsm_idmap_get(m, id);
    *fresh = !v;
    if (v)
        return v;
    v = calloc(1, size);
    if (v && sdsm_idmap_put(m, id, v)) {
        free(v);
        v = NULL;
    }
    return v;
}

void sdsm_idmap_each(const sdsm_idmap_t *m, int (*f)(void *v, void *arg), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val && f(m->slots[i].val, arg))
            return;
}

void sdsm_idmap_free(sdsm_idmap_t *m)
{
    free(m->slots);
    *m = (sdsm_idmap_t){0};
}
