/*
 * threadprivate.c - threadprivate variables: their initial values in every
 * thread, persistence from one region to the next, copyin (scalars, a
 * struct, arrays of a few bytes to several pages, in parallel and parallel
 * for) and copyprivate of values on the single thread's stack and in its
 * threadprivate storage.  gcc's copyin reads the master's copy at the
 * master's address in every thread, and copyprivate hands every thread the
 * addresses of the single thread's variables: under sdsm, other ranks must
 * reach the master's TLS.  Every thread checks exact values; a region
 * counts the threads that saw everything right.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define REGIONS 6
#define BIG     3000 /* longs: about 6 pages */

static int tp_int = 5;
static double tp_dbl = 0.25;
static struct pt {
    int a;
    char s[13];
    long b;
} tp_st = {1, "twelve chars", 2};
static long tp_arr[16];
static char tp_txt[100];
static long tp_big[BIG];
static int tp_mine = -1; /* each thread's own, never copied in */
#pragma omp threadprivate(tp_int, tp_dbl, tp_st, tp_arr, tp_txt, tp_big, tp_mine)

static long big_val(int r, int i) { return (long)r * 1000003 + i * 7; }

/* Does this thread's copy hold what the master set for region r? */
static int copied_ok(int r)
{
    int ok = tp_int == 10 * r + 3 && tp_dbl == r * 0.5 + 0.125;
    ok &= tp_st.a == r && tp_st.b == -r && !strcmp(tp_st.s, r % 2 ? "odd region" : "even region");
    for (int i = 0; i < 16; i++)
        ok &= tp_arr[i] == r * 100 + i;
    char want[100];
    snprintf(want, sizeof want, "region %d of the copyin test", r);
    ok &= !strcmp(tp_txt, want);
    for (int i = 0; i < BIG; i++)
        ok &= tp_big[i] == big_val(r, i);
    return ok;
}

static void master_sets(int r)
{
    tp_int = 10 * r + 3;
    tp_dbl = r * 0.5 + 0.125;
    tp_st.a = r;
    tp_st.b = -r;
    snprintf(tp_st.s, sizeof tp_st.s, "%s", r % 2 ? "odd region" : "even region");
    for (int i = 0; i < 16; i++)
        tp_arr[i] = r * 100 + i;
    snprintf(tp_txt, sizeof tp_txt, "region %d of the copyin test", r);
    for (int i = 0; i < BIG; i++)
        tp_big[i] = big_val(r, i);
}

/* copyprivate from a function called in the region (orphaned single):
 * a value in threadprivate storage and one on the single thread's stack. */
static int single_copies(int r)
{
    long local[8];
    int ok = 1;
#pragma omp single copyprivate(tp_int, tp_arr, local)
    {
        tp_int = 7 * r + 1;
        for (int i = 0; i < 16; i++)
            tp_arr[i] = -(r * 16 + i);
        for (int i = 0; i < 8; i++)
            local[i] = r * 8 + i + 1;
    }
    ok &= tp_int == 7 * r + 1;
    for (int i = 0; i < 16; i++)
        ok &= tp_arr[i] == -(r * 16 + i);
    for (int i = 0; i < 8; i++)
        ok &= local[i] == r * 8 + i + 1;
    return ok;
}

int main(void)
{
    int team = 0, init_ok = 0;
#pragma omp parallel reduction(+ : init_ok)
    {
#pragma omp single
        team = omp_get_num_threads();
        /* the initial values, in every thread */
        init_ok += tp_int == 5 && tp_dbl == 0.25 && tp_st.a == 1 && tp_st.b == 2 &&
                   !strcmp(tp_st.s, "twelve chars") && tp_arr[15] == 0 && tp_big[BIG - 1] == 0;
    }
    ot_check(init_ok == team, "threadprivate initial values in every thread");

    int copyin_ok = 0, loop_ok = 0, mine_ok = 0, cp_ok = 0, cp_dyn_ok = 0;
    for (int r = 1; r <= REGIONS; r++) {
        master_sets(r);
#pragma omp parallel copyin(tp_int, tp_dbl, tp_st, tp_arr, tp_txt, tp_big) reduction(+ : copyin_ok, mine_ok)
        {
            copyin_ok += copied_ok(r);
            /* each thread's own value persists from the last region */
            int me = omp_get_thread_num();
            mine_ok += r == 1 ? tp_mine == -1 : tp_mine == me * 31 + r - 1;
            tp_mine = me * 31 + r;
        }
        /* copyin in a combined construct (GOMP_parallel_loop_*) */
        master_sets(r + 100);
        int hits = 0;
#pragma omp parallel for copyin(tp_arr, tp_big, tp_st) schedule(static) reduction(+ : hits)
        for (int i = 0; i < 64; i++)
            hits += tp_arr[3] == (r + 100) * 100 + 3 && tp_big[BIG - 1] == big_val(r + 100, BIG - 1) &&
                    tp_st.b == -(r + 100);
        loop_ok += hits == 64;
#pragma omp parallel reduction(+ : cp_ok, cp_dyn_ok)
        {
            cp_ok += single_copies(r);
            /* the copied values persist into the next region */
            int v = -1;
            double d = -1;
#pragma omp single copyprivate(v, d, tp_dbl)
            {
                v = r * 3;
                d = r * 0.75;
                tp_dbl = r + 0.5;
            }
            cp_dyn_ok += v == r * 3 && d == r * 0.75 && tp_dbl == r + 0.5;
        }
        int persist_ok = 0;
#pragma omp parallel reduction(+ : persist_ok)
        persist_ok += tp_int == 7 * r + 1 && tp_arr[0] == -(r * 16) && tp_dbl == r + 0.5 &&
                      tp_big[0] == big_val(r + 100, 0);
        ot_check(persist_ok == team, "region %d: copied values persist into the next region", r);
    }
    ot_check(copyin_ok == REGIONS * team, "copyin: every thread got the master's values");
    ot_check(loop_ok == REGIONS, "copyin in parallel for");
    ot_check(mine_ok == REGIONS * team, "each thread's own threadprivate value persists");
    ot_check(cp_ok == REGIONS * team, "copyprivate of threadprivate and stack arrays");
    ot_check(cp_dyn_ok == REGIONS * team, "copyprivate of stack scalars and a threadprivate double");
    printf("master's values after the loop: %d %g %ld\n", tp_int, tp_dbl, tp_arr[15]);
    return ot_done();
}
