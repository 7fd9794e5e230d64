/*
 * homecopy.c - a copy fetched from the home while the home itself is
 * writing the page.  Rank 0 (the home) changes byte X and, after rank 1 has
 * fetched the page (reading another byte), writes X back to the value it
 * had.  Nobody reads X meanwhile, so the program is free of data races, and
 * the reader must then see X's last value although, from the home's point
 * of view, X did not change:
 *  - outside critical sections, after the next barrier;
 *  - inside a critical section of lock LX, after acquiring LX (ibec sends
 *    those writes with the lock).
 * Rank 1 holds a copy from the start (so the home twins the page when it
 * writes it) and drops it with sdsm_refresh to fetch the page again while
 * the home is writing it.  The steps are ordered by flags, so this runs the
 * same way every time.
 */
#define PT_NAME "homecopy"
#include "pt.h"

#define L  3   /* guards the flag */
#define LX 4   /* guards X in the second part */
#define X  100 /* the byte the home writes twice */
#define Y  200 /* a byte only read: makes rank 1 fetch the page */

static void wait_flag(volatile long *flag, long want)
{
    for (;;) {
        sdsm_lock(L);
        long v = *flag;
        sdsm_unlock(L);
        if (v == want)
            return;
    }
}

static void set_flag(volatile long *flag, long v)
{
    sdsm_lock(L);
    *flag = v;
    sdsm_unlock(L);
}

/* Wait (bounded) until *p == want, reading our own home page only: lets a
 * rank wait inside a critical section without a lock operation. */
static void await(volatile long *p, long want, const char *what)
{
    double end = sdsm_wtime() + 10;
    while (*p != want)
        if (sdsm_wtime() > end)
            PT_CHECK(what, want, *p);
}

/* Tell the owner (home) of *p: write and flush, no lock involved. */
static void signal_to(volatile long *p, long v)
{
    *p = v;
    sdsm_flush((const void *)p, sizeof *p);
}

/* Rank 1 fetches the page again now (the home is half way). */
static void refetch(volatile unsigned char *page)
{
    sdsm_refresh((void *)page, 4096);
    PT_CHECK("a byte nobody writes", 0, page[Y]);
}

static void outside_lock(int me, volatile long *flag, int round)
{
    volatile unsigned char *page = sdsm_alloc(4096, 0);
    if (me == 0)
        page[X] = 7; /* as of the first barrier */
    sdsm_barrier();
    if (me == 1)
        PT_CHECK("X, read to hold a copy", 7, page[X]);
    sdsm_barrier();
    if (me == 0) {
        page[X] = 9; /* in progress... */
        set_flag(flag, 3 * round + 1);
        wait_flag(flag, 3 * round + 2);
        page[X] = 7; /* ...and back: from barrier to barrier X is unchanged at the home */
    } else if (me == 1) {
        wait_flag(flag, 3 * round + 1);
        refetch(page); /* while X is 9 */
        set_flag(flag, 3 * round + 2);
    }
    sdsm_barrier();
    PT_CHECK("the home's last value of X after the barrier", 7, page[X]);
    sdsm_barrier();
    if (me == 0)
        page[X] = 11;
    sdsm_barrier();
    PT_CHECK("X after one more barrier", 11, page[X]);
    sdsm_barrier();
    sdsm_free((void *)page);
}

static void inside_lock(int me, volatile long *to0, volatile long *to1, int round)
{
    volatile unsigned char *page = sdsm_alloc(4096, 0);
    if (me == 0) {
        sdsm_lock(LX);
        page[X] = 7;
        sdsm_unlock(LX);
    }
    sdsm_barrier();
    if (me == 1)
        PT_CHECK("X, read to hold a copy", 7, page[X]);
    sdsm_barrier();
    if (me == 0) {
        sdsm_lock(LX);
        page[X] = 9; /* in progress... */
        signal_to(to1, round + 1);
        await(to0, round + 1, "rank 1 fetched the page");
        page[X] = 7; /* ...and back, in the same critical section */
        sdsm_unlock(LX);
    } else if (me == 1) {
        await(to1, round + 1, "rank 0 is inside its critical section");
        refetch(page); /* while X is 9 */
        signal_to(to0, round + 1);
        sdsm_lock(LX); /* granted after rank 0's unlock */
        PT_CHECK("X after acquiring the lock it was written under", 7, page[X]);
        sdsm_unlock(LX);
    }
    sdsm_barrier();
    PT_CHECK("X after the barrier", 7, page[X]);
    sdsm_barrier();
    sdsm_free((void *)page);
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank();
    volatile long *flag = sdsm_calloc(1, sizeof(long), 1);
    volatile long *to0 = sdsm_calloc(1, sizeof(long), 0), *to1 = sdsm_calloc(1, sizeof(long), 1);
    for (int round = 0; round < 3; round++) {
        outside_lock(me, flag, round);
        inside_lock(me, to0, to1, round);
    }
    pt_ok();
    return 0;
}
