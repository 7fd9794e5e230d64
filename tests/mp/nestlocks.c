/*
 * nestlocks.c - a thread holding many locks at once: every rank takes
 * NEST locks in the same order, adds one to the counter each guards, and
 * gives them back in reverse order (and, every other round, in the order
 * taken), ROUNDS times; each counter must end at nprocs x ROUNDS.  With
 * one copy of the memory a thread keeps the list of the locks it holds
 * itself, growing past its first 16 entries and shrinking back.
 *
 *   mp_nestlocks [ROUNDS]     (default 40)
 */
#define MP_NAME "nestlocks"
#include <stdlib.h>

#include "mp.h"

#define NEST 40
#define BASE 500 /* lock ids BASE, BASE + 7, ...: spread over the managers */

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int n = sdsm_nprocs(), rounds = argc > 1 ? atoi(argv[1]) : 40;
    long *count = sdsm_alloc(NEST * sizeof *count, SDSM_HOME_BLOCK);
    MP_NONNULL(count);
    if (sdsm_rank() == 0)
        for (int i = 0; i < NEST; i++)
            count[i] = 0;
    sdsm_barrier();
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NEST; i++) {
            MP_OK(sdsm_lock(BASE + 7 * i));
            count[i]++;
        }
        for (int i = 0; i < NEST; i++) {
            int k = r % 2 ? i : NEST - 1 - i;
            MP_OK(sdsm_unlock(BASE + 7 * k));
        }
    }
    sdsm_barrier();
    for (int i = 0; i < NEST; i++)
        MP_CHECK("count", i, (long)n * rounds, count[i]);
    sdsm_barrier();
    sdsm_free(count);
    sdsm_finalize();
    if (sdsm_rank() == 0)
        printf("OK nestlocks\n");
    return 0;
}
