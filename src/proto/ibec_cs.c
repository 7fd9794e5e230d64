/*
 * ibec_cs.c - ibec's critical sections, one per thread holding locks.
 *
 * ibec binds the writes made inside lock(L)..unlock(L) to L by twinning the
 * pages written there (twinL).  A page's protection is the process's, not
 * a thread's: once one thread's write made a page writable, another
 * thread's writes to it do not fault.  So with several threads of a rank
 * in critical sections of different locks at once, nothing would tell
 * which lock a write belongs to.  The CPU's memory protection keys
 * (pkeys(7)) give each thread its own right to write a key's pages: each
 * section gets a key, and a thread inside a section may write only the
 * pages of its own key (and those of the free key, which need no tracking).
 * Its first write to any other page faults, and the fault makes the page
 * its section's: twinL taken, page given its key.  A page another section
 * has is first taken from it (write-protected, then its diffL made into
 * that section's buffer), so each byte written inside a critical section
 * is in the diffL of its own lock and of no other.
 *
 * Threads outside critical sections may write every key: their writes go
 * with the barrier, as always (some may travel early with the diffL of a
 * section that has the page, which does them no harm).
 *
 * Without keys (another CPU, a sandbox, SDSM_IBEC_SECTIONS=1) there is one
 * section: the critical sections of a rank's threads take turns, and every
 * write fault made while one is open is bound to it (ibec.c).
 *
 * Keys are allocated, all rights granted, by the main thread before the
 * runtime's threads start, so every thread created later inherits the
 * rights; a thread's rights change only at its first acquire and its last
 * release.  The fault handler runs with the kernel's default rights, which
 * deny these keys: it touches the pages through the runtime view only.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/config.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "mem/page.h"
#include "proto/ibec_int.h"

#define MAX_SECTIONS 13 /* 15 keys: the common and the free key, one per section */

uint8_t *sdsm_ibec_owner;
uint16_t *sdsm_ibec_listed;

static struct {
    int keyed, nsec;
    int common, free;    /* keys */
    uint8_t *key;        /* per page: key of the application view's page (0: never set) */
    pthread_mutex_t mtx; /* used flags */
    int nused;
    ibec_sec_t sec[MAX_SECTIONS];
} pool = {.mtx = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local ibec_sec_t *mine;

static int alloc_keys(int want)
{
    int keys[MAX_SECTIONS + 2], n = 0;
    while (n < want + 2 && (keys[n] = pkey_alloc(0, 0)) > 0)
        n++;
    if (n < 4) { /* two sections at least, or the gate is as good */
        while (n > 0)
            pkey_free(keys[--n]);
        return 0;
    }
    pool.common = keys[0];
    pool.free = keys[1];
    for (int i = 2; i < n; i++)
        pool.sec[i - 2].key = keys[i];
    return n - 2;
}

int sdsm_ibec_cs_init(void)
{
    int want = sdsm_cfg.ibec_sections ? (int)sdsm_cfg.ibec_sections : MAX_SECTIONS;
    pool.nsec = want > 1 ? alloc_keys(want) : 0;
    pool.keyed = pool.nsec > 1;
    if (!pool.keyed)
        pool.nsec = 1;
    sdsm_ibec_owner = sdsm_home_per_page(1);
    sdsm_ibec_listed = sdsm_home_per_page(2);
    pool.key = sdsm_home_per_page(1);
    if (!sdsm_ibec_owner || !sdsm_ibec_listed || !pool.key)
        return SDSM_ENOMEM;
    for (int i = 0; i < pool.nsec; i++) {
        ibec_sec_t *s = &pool.sec[i];
        pthread_mutex_init(&s->mtx, NULL);
        s->index = i + 1;
        s->cs = sdsm_home_per_page(4);
        s->cs_spare = sdsm_home_per_page(4);
        if (!s->cs || !s->cs_spare)
            return SDSM_ENOMEM;
    }
    if (pool.keyed)
        sdsm_stat_add(SDSM_ST_IBEC_KEYED, (uint64_t)pool.nsec);
    return 0;
}

int sdsm_ibec_cs_keyed(void) { return pool.keyed; }
int sdsm_ibec_cs_slots(void) { return pool.nsec; }
ibec_sec_t *sdsm_ibec_cs_mine(void) { return mine; }

ibec_sec_t *sdsm_ibec_cs_get(int index)
{
    return index >= 1 && index <= pool.nsec ? &pool.sec[index - 1] : NULL;
}

/* The calling thread may write key k's pages (rights 0) or not. */
static void set_rights(int k, int write)
{
    if (pkey_set(k, write ? 0 : PKEY_DISABLE_WRITE))
        sdsm_fatal("pkey_set(%d): %m", k);
}

ibec_sec_t *sdsm_ibec_cs_take(int *others)
{
    ibec_sec_t *s = NULL;
    pthread_mutex_lock(&pool.mtx);
    for (int i = 0; i < pool.nsec && !s; i++)
        if (!pool.sec[i].used)
            s = &pool.sec[i];
    if (s) {
        s->used = 1;
        *others = pool.nused++;
    }
    pthread_mutex_unlock(&pool.mtx);
    if (!s) /* lock.c lets no more threads in than there are sections */
        sdsm_fatal("internal error: more threads in critical sections than ibec has sections (%d)",
                   pool.nsec);
    if (pool.keyed) {
        set_rights(pool.common, 0);
        for (int i = 0; i < pool.nsec; i++)
            set_rights(pool.sec[i].key, &pool.sec[i] == s);
    }
    mine = s;
    return s;
}

void sdsm_ibec_cs_give(ibec_sec_t *s)
{
    if (s == mine) {
        if (pool.keyed) {
            set_rights(pool.common, 1);
            for (int i = 0; i < pool.nsec; i++)
                set_rights(pool.sec[i].key, 1);
        }
        mine = NULL;
    }
    pthread_mutex_lock(&pool.mtx);
    s->used = 0;
    pool.nused--;
    pthread_mutex_unlock(&pool.mtx);
}

ibec_sec_t *sdsm_ibec_cs_holding(int id)
{
    for (int i = 0; i < pool.nsec; i++) {
        ibec_sec_t *s = &pool.sec[i];
        pthread_mutex_lock(&s->mtx);
        int found = 0;
        for (int k = 0; k < s->depth && !found; k++)
            found = s->held[k].id == id;
        pthread_mutex_unlock(&s->mtx);
        if (found)
            return s;
    }
    return NULL;
}

int sdsm_ibec_page_key(uint32_t pg, int key, int prot)
{
    int k = key == IBEC_KEY_COMMON ? pool.common : key == IBEC_KEY_FREE ? pool.free : key;
    if (!pool.keyed || pool.key[pg] == k)
        return 0;
    if (pkey_mprotect(sdsm_page_app(pg), sdsm_region.page_size, prot, k))
        sdsm_fatal("pkey_mprotect of page %u to key %d: %m", pg, k);
    pool.key[pg] = (uint8_t)k;
    return 1;
}
