/*
 * api.c - the omp_* calls and what they must agree on, printed as derived
 * checks only (the team size differs between runs): thread numbers are
 * 0..n-1 once each, omp_get_num_threads is the same in every thread and
 * equals omp_get_max_threads outside, omp_in_parallel, levels and
 * ancestors, if(0) and num_threads(1) regions of one thread, omp_get_wtime
 * positive and monotonic in every thread, omp_get_wtick positive.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define MAXT 1024

static int ids[MAXT];

int main(void)
{
    int max = omp_get_max_threads();
    ot_check(max >= 1 && max <= MAXT, "omp_get_max_threads in 1..%d", MAXT);
    ot_check(!omp_in_parallel() && omp_get_level() == 0 && omp_get_thread_num() == 0 &&
                 omp_get_num_threads() == 1,
             "serial part: not in parallel, level 0, thread 0 of 1");
    ot_check(omp_get_num_procs() >= 1, "omp_get_num_procs positive");

    int n = 0, nsame = 1, inpar = 1, levels = 1, sum = 0, out_of_range = 0;
    memset(ids, 0, sizeof ids);
#pragma omp parallel reduction(+ : sum, out_of_range) reduction(&& : nsame, inpar, levels)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp single
        n = nt;
        nsame = nsame && nt == n;
        inpar = inpar && (omp_in_parallel() || nt == 1);
        levels = levels && omp_get_level() == 1 && omp_get_ancestor_thread_num(1) == t &&
                 omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(1) == nt;
        sum += t;
        if (t < 0 || t >= nt || t >= MAXT)
            out_of_range++;
        else {
#pragma omp atomic
            ids[t]++;
        }
    }
    int once = 1;
    for (int t = 0; t < n && t < MAXT; t++)
        once &= ids[t] == 1;
    ot_check(n == max, "team size = omp_get_max_threads");
    ot_check(nsame, "omp_get_num_threads the same in every thread");
    ot_check(inpar, "omp_in_parallel in a team of several");
    ot_check(levels, "level, ancestor thread numbers, team size");
    ot_check(!out_of_range && once, "thread numbers 0..n-1, once each");
    ot_check(sum == n * (n - 1) / 2, "sum of thread numbers = n(n-1)/2");

    /* the same in a second region: the team does not change */
    int n2 = 0, sum2 = 0;
#pragma omp parallel reduction(+ : n2, sum2)
    {
        n2 += 1;
        sum2 += omp_get_thread_num();
    }
    ot_check(n2 == n && sum2 == sum, "second region: same team");

    /* if(0) and num_threads(1): one thread, thread 0, at level 1 */
    int one = 0, zero = 1, active = 0;
#pragma omp parallel if (0) reduction(+ : one)
    {
        one += omp_get_num_threads();
        zero = omp_get_thread_num() == 0 && omp_get_level() == 1;
        active = omp_get_active_level();
    }
    ot_check(one == 1 && zero && active == 0, "if(0): a team of one, inactive");
    one = 0;
#pragma omp parallel num_threads(1) reduction(+ : one)
    one += omp_get_num_threads();
    ot_check(one == 1, "num_threads(1): a team of one");

    /* wtime: positive, never going back, in every thread */
    double t0 = omp_get_wtime();
    int back = 0, nonpos = 0;
#pragma omp parallel reduction(+ : back, nonpos)
    {
        double prev = omp_get_wtime();
        nonpos += prev <= 0;
        for (int k = 0; k < 1000; k++) {
            double now = omp_get_wtime();
            back += now < prev;
            prev = now;
        }
    }
    double t1 = omp_get_wtime();
    ot_check(t0 > 0 && t1 >= t0 && !nonpos && !back, "omp_get_wtime positive and monotonic");
    ot_check(omp_get_wtick() > 0 && omp_get_wtick() < 1, "omp_get_wtick in (0, 1)");

    /* a timed busy loop measures about what it lasted */
    double a = omp_get_wtime();
    volatile double x = 0;
    while (omp_get_wtime() - a < 0.05)
        x += 1;
    double el = omp_get_wtime() - a;
    ot_check(el >= 0.05 && el < 5, "omp_get_wtime measures a 50 ms loop");

    /* dynamic adjustment is off by default and stays as set */
    ot_check(omp_get_dynamic() == 0, "omp_get_dynamic is 0");
    ot_check(omp_get_max_active_levels() >= 1, "max active levels >= 1");
    return ot_done();
}
