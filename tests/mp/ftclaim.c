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
 *   ftclaim contested  round after round, one rank's run claims pages ahead
 *                      softly, then it touches pages below them (claims whose
 *                      answers list the pages ahead) while another rank
 *                      touches the pages it claimed ahead: every rank must
 *                      see one home for each page and every value
 *
 * The values are checked everywhere; the test's CMake entry checks from the
 * statistics that the claims and home look-ups travelled in runs.
 */
#define MP_NAME "ftclaim"
#include <string.h>

#include "mp.h"

#define ROWS 100 /* pages per rank and array: blocks end inside managers' runs */

/*
 * A soft claim asked about (SOFT_PROBE) while its claimer's other claims in
 * the same manager's run were answered: those answers listed the page as
 * the claimer's after it had given the page up, so both ranks took it as
 * their own, each writing its own copy (an OpenMP Jacobi's boundary row
 * went stale at --threads 2, about one run in a hundred under load).
 */
#define C_PAGES  128 /* two managers' runs, if they line up */
#define C_ROUNDS 150
#define C_LOW    16                  /* pages [0, C_LOW) of each half: claimed meanwhile */
#define C_RUN    9                   /* [C_LOW, C_LOW + C_RUN): the run; it claims up to page 31 ahead */
#define C_FIRST  (C_LOW + C_RUN + 1) /* [C_FIRST, 32): the other rank's */

static void contested(int me, int n)
{
    size_t per = 4096 / sizeof(long);
    int *homes = sdsm_alloc((size_t)n * C_PAGES * sizeof(int), SDSM_HOME_BLOCK);
    MP_NONNULL(homes);
    for (int round = 0; round < C_ROUNDS; round++) {
        long *x = sdsm_alloc(C_PAGES * per * sizeof(long), SDSM_HOME_FIRST_TOUCH);
        MP_NONNULL(x);
        int claimer = round % n, other = (round + 1) % n;
        for (int h = 0; h < C_PAGES; h += 64)
            if (me == claimer)
                for (int p = h + C_LOW; p < h + C_LOW + C_RUN; p++)
                    x[p * per] = round * 1000L + p;
        sdsm_barrier();
        for (int h = 0; h < C_PAGES; h += 64) {
            if (me == claimer)
                for (int p = h; p < h + C_LOW; p++)
                    x[p * per] = round * 1000L + p;
            if (me == other)
                for (int p = h + C_FIRST; p < h + 32; p++)
                    x[p * per + 1] = -(round * 1000L + p);
        }
        sdsm_barrier();
        for (int h = 0; h < C_PAGES; h += 64) {
            for (int p = h; p < h + C_LOW + C_RUN; p++)
                MP_CHECK("claimer's page", round * 1000 + p, round * 1000L + p, x[p * per]);
            for (int p = h + C_FIRST; p < h + 32; p++) {
                MP_CHECK("contested page", round * 1000 + p, -(round * 1000L + p), x[p * per + 1]);
                homes[me * C_PAGES + p] = sdsm_home_of(&x[p * per]);
            }
        }
        sdsm_barrier();
        if (me == 0)
            for (int r = 1; r < n; r++)
                for (int h = 0; h < C_PAGES; h += 64)
                    for (int p = h + C_FIRST; p < h + 32; p++)
                        MP_ASSERT(homes[r * C_PAGES + p] == homes[p],
                                  "round %d page %d: rank 0 sees home %d, rank %d %d", round, p, homes[p], r,
                                  homes[r * C_PAGES + p]);
        sdsm_barrier();
        sdsm_free(x);
    }
    sdsm_free(homes);
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    if (argc > 1 && !strcmp(argv[1], "contested")) {
        contested(me, n);
        sdsm_finalize();
        if (me == 0)
            printf("OK ftclaim\n");
        return 0;
    }
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
