/*
 * api.c - sdsm_flush, sdsm_refresh, sdsm_bcast, sdsm_set_home and
 * sdsm_barrier_at, each checked by an effect that would be missing if the
 * call did nothing.  Runs under every protocol.
 */
#define PT_NAME "api"
#include "pt.h"
#include "sync/sync.h"

#include <string.h>

#define PAGE 4096

/* Wait (bounded) until *p == want, reading our own memory only. */
static void await(volatile long *p, long want, const char *what)
{
    double end = sdsm_wtime() + 10;
    while (*p != want)
        if (sdsm_wtime() > end)
            PT_CHECK(what, want, *p);
}

static void test_flush_refresh(int n, int me)
{
    volatile long *a = sdsm_calloc(512, sizeof(long), 0);     /* home 0 */
    volatile long *b = sdsm_calloc(512, sizeof(long), n - 1); /* home n-1 */
    /* flush: rank n-1 writes into rank 0's page; only sdsm_flush brings it
     * home, and rank 0 reads its own (master) copy without synchronizing. */
    if (me == n - 1) {
        a[7] = 4242;
        sdsm_flush((const void *)a, PAGE);
    }
    if (me == 0)
        await(&a[7], 4242, "value flushed by rank n-1, seen at its home");
    sdsm_barrier();
    /* refresh: rank n-1 holds a copy of a; rank 0 (the home) changes it in
     * place, then tells n-1 through n-1's own page.  The copy is still the
     * old one until sdsm_refresh drops it. */
    if (me == n - 1)
        PT_CHECK("a[9] cached", 0, a[9]);
    sdsm_barrier();
    if (me == 0) {
        a[9] = 777;
        b[1] = 1;
        sdsm_flush((const void *)b, PAGE);
    }
    if (me == n - 1) {
        await(&b[1], 1, "signal flushed into this rank's page");
        PT_CHECK("a[9] before sdsm_refresh (the cached copy)", 0, a[9]);
        sdsm_refresh((void *)a, PAGE);
        PT_CHECK("a[9] after sdsm_refresh", 777, a[9]);
    }
    sdsm_barrier();
    sdsm_free((void *)a);
    sdsm_free((void *)b);
}

static void test_bcast(int n, int me)
{
    volatile long *a = sdsm_calloc(1024, sizeof(long), SDSM_HOME_BLOCK);
    long seen = 0;
    if (me == 0)
        for (int i = 0; i < 1024; i++)
            seen += a[i]; /* root holds copies of zeros */
    sdsm_barrier();
    if (me == n - 1)
        for (int i = 0; i < 1024; i++)
            a[i] = 5000 + i; /* a plain barrier would make these everyone's */
    sdsm_bcast((void *)a, 1024 * sizeof(long), 0);
    for (int i = 0; i < 1024; i++)
        PT_CHECK("a[i] after sdsm_bcast from a root that saw zeros", 0, a[i]);
    sdsm_barrier(); /* everyone has checked before the root writes again */
    if (me == 0)
        for (int i = 0; i < 1024; i++)
            a[i] = 9000 + i;
    sdsm_bcast((void *)a, 1024 * sizeof(long), 0);
    for (int i = 0; i < 1024; i++)
        PT_CHECK("a[i] after sdsm_bcast of the root's writes", 9000 + i, a[i]);
    (void)seen;
    sdsm_free((void *)a);
}

static void test_set_home(int n, int me)
{
    long *a = sdsm_alloc(4 * PAGE, 0);
    if (me == 0)
        for (int i = 0; i < 4 * 512; i++)
            a[i] = 300 + i;
    sdsm_barrier();
    for (int i = 0; i < 4 * 512; i += 100)
        PT_CHECK("a[i] before the move", 300 + i, a[i]);
    PT_CHECK("home before sdsm_set_home", 0, sdsm_home_of(a));
    sdsm_barrier(); /* everybody's fetches from the old home are over */
    if (me == 1 % n)
        sdsm_set_home(a, 4 * PAGE, n - 1); /* any rank may ask */
    PT_CHECK("home before the barrier", 0, sdsm_home_of(a + 512 * 3));
    uint64_t served0 = pt_stat(SDSM_ST_PAGES_SERVED); /* before anyone can fetch from the new home */
    sdsm_barrier();
    for (int pg = 0; pg < 4; pg++)
        PT_CHECK("home after sdsm_set_home and a barrier", n - 1, sdsm_home_of(a + 512 * pg));
    for (int i = 0; i < 4 * 512; i++)
        PT_CHECK("a[i] after the move", 300 + i, a[i]);
    sdsm_barrier();
    /* Every other rank fetched the 4 pages, from the new home only. */
    PT_CHECK("pages served after the move", me == n - 1 ? 4 * (n - 1) : 0,
             pt_stat(SDSM_ST_PAGES_SERVED) - served0);
    const char *proto = getenv("SDSM_PROTOCOL");
    int home_twins = proto && !strcmp(proto, "ibec"); /* ibec's homes diff pages others hold */
    if (me == n - 1 && !home_twins) {                 /* the new home writes in place: no diffs */
        uint64_t d0 = pt_stat(SDSM_ST_DIFFS_MADE);
        for (int i = 0; i < 4 * 512; i++)
            a[i] = -i;
        sdsm_barrier();
        PT_CHECK("diffs made by the new home for its own pages", 0, pt_stat(SDSM_ST_DIFFS_MADE) - d0);
    } else if (me == n - 1) {
        for (int i = 0; i < 4 * 512; i++)
            a[i] = -i;
        sdsm_barrier();
    } else {
        sdsm_barrier();
    }
    for (int i = 0; i < 4 * 512; i++)
        PT_CHECK("a[i] written by the new home", -i, a[i]);
    sdsm_free(a);
}

static void test_barrier_at(int n, int me)
{
    sdsm_barrier();
    for (int m = 0; m < n; m++) {
        uint64_t rel0 = pt_msgs(SDSM_MSG_BAR_RELEASE), up0 = pt_msgs(SDSM_MSG_BAR_UP);
        sdsm_barrier_at(m);
        uint64_t sent = pt_msgs(SDSM_MSG_BAR_RELEASE) - rel0, up = pt_msgs(SDSM_MSG_BAR_UP) - up0;
        /* The root passes nothing up, nor does a rank that meets its
         * parent in its host's stage (SDSM_BARRIER_SHM). */
        int staged = me != m && sdsm_stage_local(sdsm_topo_parent(me, m));
        if (sdsm_barrier_is_tree())
            PT_CHECK(me == m  ? "subtree arrivals sent by the chosen root"
                     : staged ? "subtree arrivals sent by a rank that meets its parent in shared memory"
                              : "subtree arrivals sent by a rank under the root",
                     me == m || staged ? 0 : 1, up);
        else /* its own release is not a message */
            PT_CHECK(me == m ? "releases sent by the chosen manager" : "releases sent by a non-manager",
                     me == m ? n - 1 : 0, sent);
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    if (n < 2)
        sdsm_abort(2, "api needs 2 ranks or more");
    test_barrier_at(n, me);
    test_flush_refresh(n, me);
    test_bcast(n, me);
    test_set_home(n, me);
    pt_ok();
    return 0;
}
