/*
 * sethomeft.c - sdsm_set_home on first-touch pages, some claimed and some
 * never touched: the barrier that applies the move must not wait for
 * contents nobody has (an untouched page is zeros), and every value must
 * be right afterwards at the new home and everywhere else.
 */
#define MP_NAME "sethomeft"
#include "mp.h"

#define PAGES 64

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    size_t per = 4096 / sizeof(long);
    long *a = sdsm_calloc(PAGES * per, sizeof(long), SDSM_HOME_FIRST_TOUCH);
    for (int p = 0; p < PAGES; p += 4) /* a quarter of the pages claimed by their writers */
        if (p / 4 % n == me)
            a[p * per + 1] = p + 1;
    sdsm_barrier();
    if (me == 0)
        sdsm_set_home(a, PAGES * per * sizeof(long), n - 1);
    sdsm_barrier(); /* the move: hung waiting for untouched pages' contents */
    for (int p = 0; p < PAGES; p++)
        MP_CHECK("after move", p, p % 4 == 0 ? p + 1 : 0, a[p * per + 1]);
    MP_CHECK("home", 0, n - 1, sdsm_home_of(&a[5 * per]));
    sdsm_barrier();
    if (me == 0)
        for (int p = 0; p < PAGES; p++)
            a[p * per + 2] = 1000 + p;
    sdsm_barrier();
    for (int p = 0; p < PAGES; p++)
        MP_CHECK("written after", p, 1000 + p, a[p * per + 2]);
    sdsm_finalize();
    if (me == 0)
        printf("OK sethomeft\n");
    return 0;
}
