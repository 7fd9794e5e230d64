/*
 * stranger.c - rate-limited record of refused connections (see stranger.h).
 *
 * A small array searched linearly: refusals are rare on a healthy job, and
 * under attack one source usually dominates, so no hashing is worth it.
 * Past SDSM_STRANGER_SOURCES - 1 addresses, new ones share the last slot
 * (address 0) so memory stays bounded whatever a flood of sources does.
 */
#include "stranger.h"

#include <string.h>

static sdsm_stranger_src_t *find(sdsm_strangers_t *t, uint32_t ip, int64_t now_ms)
{
    for (int i = 0; i < t->n; i++)
        if (t->src[i].ip == ip)
            return &t->src[i];
    if (t->n == SDSM_STRANGER_SOURCES) /* every slot taken: the shared one is last */
        return &t->src[SDSM_STRANGER_SOURCES - 1];
    sdsm_stranger_src_t *s = &t->src[t->n++];
    memset(s, 0, sizeof *s);
    s->ip = t->n == SDSM_STRANGER_SOURCES ? 0 : ip;
    /* So the first refusal of a new source always gets its line. */
    s->logged_ms = now_ms - SDSM_STRANGER_INTERVAL_MS;
    return s;
}

int sdsm_stranger_note(sdsm_strangers_t *t, uint32_t ip, const char *why, int64_t now_ms, uint32_t *quiet)
{
    sdsm_stranger_src_t *s = find(t, ip, now_ms);
    s->why = why;
    if (now_ms - s->logged_ms < SDSM_STRANGER_INTERVAL_MS) {
        s->quiet++;
        return 0;
    }
    *quiet = s->quiet;
    s->quiet = 0;
    s->logged_ms = now_ms;
    return 1;
}

int sdsm_stranger_take(sdsm_strangers_t *t, sdsm_stranger_src_t *out)
{
    for (int i = 0; i < t->n; i++) {
        if (t->src[i].quiet) {
            *out = t->src[i];
            t->src[i].quiet = 0;
            return 1;
        }
    }
    return 0;
}
