/*
 * single.c - single (with its implied barrier, nowait, copyprivate),
 * master and masked (with and without a filter), and explicit barriers
 * that order phases.  GOMP_single_start, GOMP_single_copy_start/end,
 * GOMP_barrier; master and masked compare omp_get_thread_num inline.
 */
#include <omp.h>

#include "omptest.h"

#define REGIONS 10

static int singles, masters, masked0, masked1, team;

int main(void)
{
    int copied_ok = 0, copied_all = 0, after_single_ok = 0;
    long data[16] = {0};
    for (int r = 0; r < REGIONS; r++) {
#pragma omp parallel reduction(+ : copied_ok, copied_all, after_single_ok)
        {
#pragma omp single
            {
                singles++;
                for (int k = 0; k < 16; k++)
                    data[k] = r * 100 + k;
            }
            /* the single's barrier: every thread sees its writes */
            int good = 1;
            for (int k = 0; k < 16; k++)
                good &= data[k] == r * 100 + k;
            after_single_ok += good;

            int v = -1;
            double dv = -1;
#pragma omp single copyprivate(v, dv)
            {
                v = 7 * r + 1;
                dv = r * 0.5;
            }
            copied_all += 1;
            copied_ok += v == 7 * r + 1 && dv == r * 0.5;

#pragma omp master
            {
                masters++;
                team = omp_get_num_threads();
            }
#pragma omp masked
            masked0++;
#pragma omp masked filter(1)
            masked1++;
#pragma omp single nowait
            singles++;
        }
    }
    printf("single ran %d times in %d regions\n", singles, REGIONS);
    ot_check(after_single_ok == copied_all, "single: writes visible after its barrier");
    ot_check(copied_ok == copied_all, "copyprivate: every thread got the values");
    printf("master ran %d times, masked %d times\n", masters, masked0);
    ot_check(masked1 == (team > 1 ? REGIONS : 0), "masked filter(1): thread 1 only");

    /* Explicit barriers ordering phases: each phase reads what the
     * previous one wrote in other threads' iterations. */
    static long a[1024], b[1024];
#pragma omp parallel
    {
        for (int phase = 0; phase < 8; phase++) {
#pragma omp for schedule(static) nowait
            for (int i = 0; i < 1024; i++)
                a[i] = (phase == 0 ? i : b[(i + 1) % 1024]) + phase;
#pragma omp barrier
#pragma omp for schedule(static, 5) nowait
            for (int i = 0; i < 1024; i++)
                b[i] = a[1023 - i] * 3 % 10007;
#pragma omp barrier
        }
    }
    printf("barrier phases: digest %016llx\n", (unsigned long long)ot_hash(b, sizeof b));

    /* master inside a loop of regions accumulating into a global that the
     * serial code reads */
    static long progress;
    for (int r = 0; r < 5; r++) {
#pragma omp parallel
        {
#pragma omp master
            progress += r;
        }
    }
    printf("master progress %ld\n", progress);
    return ot_done();
}
