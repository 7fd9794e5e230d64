/*
 * nested.c - a parallel region inside a parallel region: with the default
 * of one active level, the inner region is a team of one (its
 * encountering thread), at level 2; its loops and reductions still give
 * the full results.  omp_get_level, omp_get_active_level.
 */
#include <omp.h>

#include "omptest.h"

static long inner_work(int outer)
{
    long s = 0;
    int inner_team = 0, level = 0, active = 0;
#pragma omp parallel reduction(+ : s)
    {
#pragma omp single
        {
            inner_team = omp_get_num_threads();
            level = omp_get_level();
            active = omp_get_active_level();
        }
#pragma omp for
        for (int i = 0; i < 100; i++)
            s += i * outer;
    }
    if (omp_get_max_active_levels() == 1 && omp_in_parallel() && (inner_team != 1 || level != 2))
        return -1000000;
    if (active > level)
        return -2000000;
    return s;
}

int main(void)
{
    long total = 0;
    int bad = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : total, bad)
    for (int k = 1; k <= 40; k++) {
        long r = inner_work(k);
        bad += r < 0;
        total += r;
    }
    ot_check(!bad, "inner regions: a team of one at level 2");
    printf("nested total %ld\n", total);
    printf("serial call: %ld\n", inner_work(3));
    return ot_done();
}
