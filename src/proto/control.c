/*
 * control.c - explicit consistency control and changes of a range as a
 * whole: sdsm_flush / sdsm_refresh, a broadcast's overwrite (and the
 * non-roots' discard of their own writes), home moves decided at a barrier
 * (sdsm_set_home), leaving a copyset, and the reset of freed pages.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/diff.h"
#include "mem/page.h"
#include "net/msg.h"
#include "net/net.h"
#include "net/rpc.h"
#include "proto/home.h"
#include "proto/home_int.h"
#include "proto/proto.h"

static int on_leave(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t n = h->len / 4;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t pg = rd32(p + 4 * i);
        if (pg >= sdsm_region.npages)
            return SDSM_EPROTO;
        sdsm_page_lock(pg);
        sdsm_page_t *m = sdsm_page(pg);
        if (m->copyset)
            m->copyset[src / 64] &= ~(1ull << (src % 64));
        sdsm_page_unlock(pg);
    }
    return 0;
}

static int on_home_data(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    uint32_t pg = rd32(p);
    if (pg >= sdsm_region.npages)
        return SDSM_EPROTO;
    memcpy(sdsm_page_rt(pg), p + 8, hs.ps);
    atomic_fetch_add(&hs.home_data_in, 1);
    sdsm_wake_all(&hs.home_data_in);
    return 0;
}

/*
 * Send our changes to [first, first + n) to their homes now (flags: 0, or
 * SDSM_DIFF_FORWARD for ibec) and wait; with drop, also give up our copies.
 * The pages stay on the dirty list marked FLUSHED, so the next barrier still
 * announces them.
 */
int sdsm_home_flush_range(uint32_t first, uint32_t n, int drop, unsigned flags)
{
    pthread_mutex_lock(&hs.release_mtx);
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    for (uint32_t pg = first; pg < first + n; pg++) {
        sdsm_page_lock(pg);
        sdsm_page_t *p = sdsm_page(pg);
        int home = sdsm_page_home(pg);
        if (home == hs.me && !sdsm_home_twins_at_home)
            p->flags &= (uint8_t)~SDSM_PGF_TWIN; /* flushed: readers get the page itself (serve.c) */
        if (p->state == SDSM_PG_READ_WRITE && (home != hs.me || (flags & SDSM_DIFF_FORWARD))) {
            sdsm_page_set(pg, SDSM_PG_READ_ONLY, home == hs.me, 1);
            if (p->flags & SDSM_PGF_TWIN) {
                sdsm_batch_add(&hs.out[home], pg, sdsm_page_twin(pg));
                /* Send now, under the lock: no fetch of ours may overtake it. */
                sdsm_batch_send(&hs.out[home], home, flags, &r, id);
            }
            p->flags = (uint8_t)((p->flags | SDSM_PGF_FLUSHED) & ~SDSM_PGF_TWIN);
        }
        if (drop && home != hs.me && p->state == SDSM_PG_READ_ONLY) {
            sdsm_page_set(pg, SDSM_PG_INVALID, 0, 1);
            /* Tell the home we left (ibec/update keep copysets long-lived). */
            sdsm_net_send(home, SDSM_MSG_LEAVE, 0, 0, &pg, 4, NULL, 0);
        }
        sdsm_page_unlock(pg);
    }
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    pthread_mutex_unlock(&hs.release_mtx);
    return r.status;
}

/*
 * sdsm_bcast on a rank other than the root: forget this rank's writes to
 * [addr, addr + len) that its homes have not seen yet (the bytes go back to
 * the twin's), since the broadcast overrides them.  Sent at the bcast's
 * first barrier instead, they could reach the root's home pages before the
 * root copied its contents, and the root would broadcast them.  A home's
 * writes to its own pages are its master copy already (a home page's twin
 * is only what others are served meanwhile).
 */
void sdsm_home_discard(const uint8_t *addr, size_t len)
{
    for (size_t done = 0; done < len;) {
        uint32_t pg = 0;
        sdsm_region_page_of(addr + done, &pg);
        size_t off = (size_t)((addr + done) - sdsm_page_app(pg));
        size_t chunk = hs.ps - off < len - done ? hs.ps - off : len - done;
        sdsm_page_lock(pg);
        /* (ibec's writes bound to a lock, TWINL, are left to its lock's chain.) */
        if ((sdsm_page(pg)->flags & (SDSM_PGF_TWIN | SDSM_PGF_TWINL)) == SDSM_PGF_TWIN &&
            sdsm_page_home(pg) != hs.me)
            memcpy(sdsm_page_rt(pg) + off, sdsm_page_twin(pg) + off, chunk);
        sdsm_page_unlock(pg);
        done += chunk;
    }
}

/*
 * Overwrite the homes' copies of [addr, addr + len) with data (a snapshot of
 * the same range) and invalidate every other copy (EAGER), then wait.
 */
int sdsm_home_overwrite(const uint8_t *addr, size_t len, const uint8_t *data)
{
    sdsm_rpc_t r = {0};
    uint32_t id = sdsm_rpc_open(&r, 1);
    buf_t b = {0};
    size_t done = 0;
    while (done < len) {
        uint32_t pg = 0;
        sdsm_region_page_of(addr + done, &pg);
        size_t off = (size_t)((addr + done) - sdsm_page_app(pg));
        size_t chunk = hs.ps - off < len - done ? hs.ps - off : len - done;
        int home = sdsm_page_home(pg);
        if (home < 0) /* first touch nobody claimed: claim it by touching it */
            home = (sdsm_home_fault(pg, 0), sdsm_page_home(pg));
        uint8_t run[12], *q = run;
        for (size_t v = off;; v >>= 7) { /* varint gap */
            *q++ = (uint8_t)(v >= 0x80 ? (v | 0x80) : v);
            if (v < 0x80)
                break;
        }
        for (size_t v = chunk;; v >>= 7) { /* varint length */
            *q++ = (uint8_t)(v >= 0x80 ? (v | 0x80) : v);
            if (v < 0x80)
                break;
        }
        uint32_t hdr[2] = {pg, (uint32_t)((size_t)(q - run) + chunk)};
        sdsm_buf_reserve(&b, 8 + (size_t)(q - run) + chunk);
        memcpy(b.p, hdr, 8);
        memcpy(b.p + 8, run, (size_t)(q - run));
        memcpy(b.p + 8 + (q - run), data + done, chunk);
        b.len = 8 + (size_t)(q - run) + chunk;
        sdsm_batch_send(&b, home, SDSM_DIFF_EAGER, &r, id);
        done += chunk;
    }
    free(b.p);
    sdsm_count_done(&r.pending);
    sdsm_rpc_wait(&r);
    sdsm_rpc_close(id);
    return r.status;
}

/*
 * Apply home moves decided at a barrier: {u32 first, u32 count, i32 rank}[n],
 * already validated.  Every rank records the new homes and drops its copies;
 * old homes send the contents to the new ones; then wait for what we expect.
 */
void sdsm_home_apply_moves(const uint8_t *moves, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = rd32(moves + 12 * i), count = rd32(moves + 12 * i + 4);
        int to = (int32_t)rd32(moves + 12 * i + 8);
        for (uint32_t pg = first; pg < first + count; pg++) {
            sdsm_page_lock(pg);
            sdsm_page_t *m = sdsm_page(pg);
            int old = sdsm_page_home(pg);
            if (old == to) {
                sdsm_home_soft_clear(pg); /* decided by the move */
                sdsm_page_unlock(pg);
                continue;
            }
            if (old == hs.me) {
                uint32_t hdr[2] = {pg, 0};
                sdsm_net_send(to, SDSM_MSG_HOME_DATA, 0, 0, hdr, 8, sdsm_page_rt(pg), hs.ps);
                free(m->copyset);
                m->copyset = NULL;
            } else if (old < 0 && sdsm_page_manager(pg, hs.n) == hs.me && sdsm_home_soft_owner(pg) < 0) {
                /* A first-touch page nobody claimed (its manager would know):
                 * no home has contents to send, and they are zeros. */
                static uint8_t *zeros;
                if (!zeros && !(zeros = calloc(1, hs.ps)))
                    sdsm_fatal("out of memory moving a home");
                uint32_t hdr[2] = {pg, 0};
                sdsm_net_send(to, SDSM_MSG_HOME_DATA, 0, 0, hdr, 8, zeros, hs.ps);
            }
            if (m->state != SDSM_PG_INVALID) { /* every copy restarts from the new home */
                m->state = SDSM_PG_INVALID;
                sdsm_page_protect(pg, 1, SDSM_PG_INVALID);
            }
            m->flags &= (uint8_t) ~(SDSM_PGF_TWIN | SDSM_PGF_IDLE | SDSM_PGF_AWAIT_PUSH);
            m->pushes = 0;
            m->home1 = to + 1;
            sdsm_home_soft_clear(pg); /* its claimer sent the contents, if a manager's */
            sdsm_home_hot_clear(pg);
            if (to == hs.me)
                hs.home_data_expected++; /* may have arrived already: counts only grow */
            sdsm_page_unlock(pg);
        }
    }
    uint32_t v;
    while ((int32_t)((v = atomic_load(&hs.home_data_in)) - hs.home_data_expected) < 0)
        sdsm_wait_change(&hs.home_data_in, v);
}

/*
 * The range's pages start again as new (INVALID, no home known, no copyset,
 * no flags): the address range may be allocated again.  One lock round trip
 * per stripe rather than per page (a 1 GiB block has 262,144 pages), and
 * pages never touched are only read, so their metadata stays unallocated.
 */
void sdsm_home_free_range(uint32_t first, uint32_t n)
{
    uint64_t end = (uint64_t)first + n;
    for (uint32_t s = 0; s < SDSM_PAGE_STRIPES && s < n; s++) {
        uint32_t pg0 = first + s;
        sdsm_page_lock(pg0);
        for (uint64_t pg = pg0; pg < end; pg += SDSM_PAGE_STRIPES) {
            sdsm_page_t *m = sdsm_page((uint32_t)pg);
            if (m->state)
                sdsm_home_ahead_drop((uint32_t)pg);
            sdsm_home_soft_clear((uint32_t)pg);
            sdsm_home_hot_clear((uint32_t)pg);
            hs.exposed[pg] = 0;
            if (m->state || m->flags || m->home1 || m->copyset) {
                free(m->copyset);
                memset(m, 0, sizeof *m);
            }
        }
        sdsm_page_unlock(pg0);
    }
    sdsm_page_protect(first, n, SDSM_PG_INVALID);
}

void sdsm_home_control_init(void)
{
    sdsm_msg_set_handler(SDSM_MSG_LEAVE, on_leave);
    sdsm_msg_set_handler(SDSM_MSG_HOME_DATA, on_home_data);
}
