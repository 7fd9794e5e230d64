/* A thread spinning on an atomic read of a flag that another thread of its
 * rank sets must let that thread run, even with one run slot per rank
 * (SDSM_RUN_THREADS=1): each consumer gives up after 3 s and counts as a
 * failure instead of hanging. */
#include "rt.h"

static int flag;
static long data[512];

int main(void)
{
    long late = 0;
    for (int round = 1; round <= 10; round++) {
#pragma omp parallel reduction(+ : late)
        {
            if (omp_get_thread_num() == 0) {
                for (int i = 0; i < 512; i++)
                    data[i] = round * 1000 + i;
#pragma omp atomic write release
                flag = round;
            } else {
                double t0 = omp_get_wtime();
                int f = 0;
                while (f != round && omp_get_wtime() - t0 < 3) {
#pragma omp atomic read acquire
                    f = flag;
                }
                late += f != round;
                if (f == round && data[511] != round * 1000 + 511)
                    late += 1000;
            }
        }
        CHECK(late == 0, "round %d: %ld consumers waited in vain (or saw old data)", round, late);
    }
    printf("OK spin %d\n", omp_get_max_threads());
    return 0;
}
