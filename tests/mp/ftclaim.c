/*
 * ftclaim.c - first-touch claims in runs, and homes learned from the
 * managers' answers.
 *
 *   ftclaim together   every rank writes its block of two first-touch arrays
 *                      row by row (a page of each in turn), at once; then all
 *                      read everything back
 *   ftclaim ordered    the same, one rank after another: a rank's runs claim
 *                      pages of the next rank's block ahead of it, softly,
 *                      and give them up when that rank touches them: every
 *                      page is homed at the rank that wrote it first
 *
 * The values are checked everywhere; the test's CMake entry checks from the
 * statistics that the claims and home look-ups travelled in runs.
 */
#define MP_NAME "ftclaim"
#include <string.h>

#include "mp.h"

#define ROWS 100 /* pages per rank and array: blocks end inside managers' runs */

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    int ordered = argc > 1 && !strcmp(argv[1], "ordered");
    size_t per = 4096 / sizeof(long), rows = (size_t)ROWS * n;
    long *a = sdsm_alloc(rows * per * sizeof(long), SDSM_HOME_FIRST_TOUCH);
    long *b = sdsm_alloc(rows * per * sizeof(long), SDSM_HOME_FIRST_TOUCH);
    MP_NONNULL(a);
    MP_NONNULL(b);
    for (int k = 0; k < n; k++) {
        if (!ordered || k == me)
            for (size_t r = (size_t)me * ROWS; r < (size_t)(me + 1) * ROWS; r++)
                for (size_t j = 0; j < per; j++) {
                    a[r * per + j] = (long)(r * per + j);
                    b[r * per + j] = -(long)(r * per + j);
                }
        if (ordered)
            sdsm_barrier();
        else
            break;
    }
    sdsm_barrier();
    for (size_t r = 0; r < rows; r++)
        MP_CHECK("a", r, (long)(r * per + 7), a[r * per + 7]);
    for (size_t r = 0; r < rows; r++)
        MP_CHECK("b", r, -(long)(r * per + per - 1), b[r * per + per - 1]);
    if (ordered && me == 0)
        for (int arr = 0; arr < 2; arr++)
            for (size_t r = 0; r < rows; r++) {
                long *x = arr ? b : a;
                int writer = (int)(r / ROWS), home = sdsm_home_of(&x[r * per]);
                MP_ASSERT(home == writer, "row %zu of array %d: homed at rank %d, first written by %d", r,
                          arr, home, writer);
            }
    sdsm_barrier();
    sdsm_free(b);
    sdsm_free(a);
    sdsm_finalize();
    if (me == 0)
        printf("OK ftclaim\n");
    return 0;
}
