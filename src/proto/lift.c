/*
 * lift.c - a home holding pages for a writer: the shields that keep this
 * home's own threads off pages while another rank's diffs land on them,
 * the holds (DIFF_HOLD) that keep them shielded, and fetches of them
 * waiting (serve.c), until the writer's LIFT - or, for a barrier arrival,
 * the barrier's completion - and the PUBLISH_ASK by which a thread waiting
 * for a held page has the writer publish now.  The diffs themselves are
 * applied by inval.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "mem/alloc.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/home_int.h"

/*
 * SDSM_HOME_TWINS: this home's own threads read its pages directly, and a
 * batch of another rank's diffs lands page by page, run by run: a thread
 * polling a flag here could see the flag's new value before the data the
 * writer wrote before it (in a later page of the batch, or later in the
 * page).  So while the batch is applied its pages give no access; a thread
 * that touches one waits in the fault path (home_fault) until they all
 * hold the new contents.  Shields are counted per page: a held batch
 * (DIFF_HOLD, below) keeps its pages shielded across other batches.
 * sdsm_home_shield_on appends the pages it shielded to got (u32[]).
 */
void sdsm_home_shield_on(const uint8_t *p, uint32_t len, buf_t *got)
{
    for (size_t off = 0; off < len; off += 8 + rd32(p + off + 4)) {
        uint32_t pg = rd32(p + off);
        sdsm_page_lock(pg);
        /* (Never main's stack, announced: the master runs on it, maybe
         * this very thread, leading the event loop from inside a wait.) */
        if (sdsm_page_home(pg) == hs.me && !sdsm_page_announced(pg)) {
            if (hs.applying[pg]++ == 0)
                sdsm_page_protect(pg, 1, SDSM_PG_INVALID);
            sdsm_buf_reserve(got, 4);
            memcpy(got->p + got->len, &pg, 4);
            got->len += 4;
        }
        sdsm_page_unlock(pg);
    }
}

void sdsm_home_shield_off(const uint8_t *pages, size_t len)
{
    for (size_t off = 0; off < len; off += 4) {
        uint32_t pg = rd32(pages + off);
        sdsm_page_lock(pg);
        if (hs.applying[pg] && --hs.applying[pg] == 0) {
            sdsm_page_protect(pg, 1, (sdsm_pstate_t)sdsm_page(pg)->state);
            sdsm_page_unlock(pg);
            sdsm_page_wake(pg, 1);
            continue;
        }
        sdsm_page_unlock(pg);
    }
}

/*
 * DIFF_HOLD: a quiet publish to several homes (release.c) comes in two
 * steps, so that no reader sees one of its writes while a copy of a page
 * it wrote before is still valid anywhere: each home applies its batch and
 * invalidates the other copies as for a lock release, but until the
 * writer's LIFT - sent once every home has acknowledged, so once every
 * old copy is gone - the pages stay held: this home's threads cannot touch
 * them (shielded) and fetches of them wait (serve.c).  Without it a thread
 * could read a flag from one home while its copy of the data, homed at
 * another, awaits its invalidation.
 *
 * A barrier arrival over several homes is held too, but goes as a barrier's
 * diffs do (no invalidation, DIFF_HOLD without EAGER): the other copies go
 * when the barrier completes, everywhere, and so do these holds, at this
 * home (sdsm_home_lift_arrivals; a frame of a later barrier's arrival waits
 * for this rank's epoch to move, net/recv.c, so every arrival hold here is of
 * the barrier completing).  Before that only a reader that has not reached
 * the barrier - a thread spinning on a flag - could look, and for it the
 * writer's quiet thread announces the arrival eagerly and lifts it
 * (release.c, publish_arrival).
 */
typedef struct hold_ent {
    uint32_t pg, gen;
    uint16_t shielded, arrival;
} hold_ent_t;

void sdsm_home_hold(int src, unsigned gen, int arrival, const uint8_t *p, uint32_t len, const buf_t *shielded)
{
    buf_t *hb = &hs.holds[src];
    size_t k = 0; /* shielded is the batch's pages in order, some left out */
    for (size_t off = 0; off < len; off += 8 + rd32(p + off + 4)) {
        hold_ent_t e = {rd32(p + off), gen, 0, (uint16_t)arrival};
        if (k < shielded->len && rd32(shielded->p + k) == e.pg) {
            e.shielded = 1;
            k += 4;
        }
        sdsm_page_lock(e.pg);
        hs.held[e.pg]++;
        sdsm_page_unlock(e.pg);
        sdsm_buf_reserve(hb, sizeof e);
        memcpy(hb->p + hb->len, &e, sizeof e);
        hb->len += sizeof e;
    }
}

static uint8_t *asked; /* per rank: asked to publish (sdsm_home_ask_lift) */

/* src's holds of generation gen or older end (gen 0: its arrival holds).
 * Returns how many. */
static size_t lift_holds(int src, uint32_t gen)
{
    buf_t *hb = &hs.holds[src];
    size_t kept = 0, lifted = 0;
    for (size_t off = 0; off + sizeof(hold_ent_t) <= hb->len; off += sizeof(hold_ent_t)) {
        hold_ent_t e;
        memcpy(&e, hb->p + off, sizeof e);
        if (gen ? (int8_t)(uint8_t)(gen - e.gen) < 0 : !e.arrival) {
            memmove(hb->p + kept, &e, sizeof e);
            kept += sizeof e;
            continue;
        }
        lifted++;
        if (asked)
            asked[src] = 0;
        sdsm_page_lock(e.pg);
        if (hs.held[e.pg])
            hs.held[e.pg]--;
        sdsm_page_unlock(e.pg);
        if (e.shielded)
            sdsm_home_shield_off((const uint8_t *)&e.pg, 4);
    }
    hb->len = kept;
    return lifted;
}

/* LIFT {u32 gen}: src's holds of generation gen or older end.  (One that
 * finds none is no error: a publish lifts where an early batch of its
 * generation went, which its own batch may have lifted already.) */
static int on_lift(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    (void)h;
    uint32_t gen = rd32(p);
    if (gen == 0 || gen > 255)
        return SDSM_EPROTO;
    lift_holds(src, gen);
    sdsm_home_fetch_replay();
    return 0;
}

/*
 * A thread waits for a page a barrier arrival holds here (a fetch kept,
 * serve.c; a home thread at a shielded page, home_fault): the ranks whose
 * arrival holds it are asked to publish now (PUBLISH_ASK), which announces
 * the arrival and lifts it, instead of when their quiet thread next looks
 * (a period, doubled while it backs off).  Once per rank until its holds
 * here are lifted.
 */
void sdsm_home_ask_lift(uint32_t first, uint32_t count, int32_t stride)
{
    if (!asked && !(asked = calloc((size_t)hs.n, 1)))
        return; /* (the quiet thread lifts it all the same) */
    for (int r = 0; r < hs.n; r++) {
        if (asked[r] || !hs.holds[r].len)
            continue;
        const buf_t *hb = &hs.holds[r];
        int hit = 0;
        for (size_t off = 0; off + sizeof(hold_ent_t) <= hb->len && !hit; off += sizeof(hold_ent_t)) {
            hold_ent_t e;
            memcpy(&e, hb->p + off, sizeof e);
            int64_t d = (int64_t)e.pg - (int64_t)first;
            hit = e.arrival && (stride ? d % stride == 0 && d / stride >= 0 && d / stride < count : d == 0);
        }
        if (!hit)
            continue;
        asked[r] = 1;
        if (r == hs.me)
            sdsm_home_ask_publish();
        else
            sdsm_net_send(r, SDSM_MSG_PUBLISH_ASK, 0, 0, NULL, 0, NULL, 0);
    }
}

static int on_publish_ask(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (src == hs.me && h->flags == SDSM_PUBLISH_DONE && h->len == 0) {
        sdsm_home_fetch_replay(); /* fetches waiting for a publish (serve.c) */
        return 0;
    }
    if (src == hs.me && h->len == 4) {
        uint32_t pg = rd32(p);
        if (pg >= sdsm_region.npages)
            return SDSM_EPROTO;
        sdsm_home_ask_lift(pg, 1, 0);
        return 0;
    }
    if (h->len)
        return SDSM_EPROTO;
    sdsm_home_ask_publish();
    return 0;
}

void sdsm_home_lift_arrivals(void)
{
    size_t lifted = 0;
    for (int r = 0; r < hs.n; r++)
        if (hs.holds[r].len)
            lifted += lift_holds(r, 0);
    if (lifted)
        sdsm_home_fetch_replay();
}

void sdsm_home_lift_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_LIFT, on_lift);
    sdsm_msg_set_handler(SDSM_MSG_PUBLISH_ASK, on_publish_ask);
}
