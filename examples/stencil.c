/* sum.c - the smallest sdsm program: every rank adds its rank under a lock. */
#include <sdsm.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    long *sum = sdsm_calloc(1, sizeof(long), 0);
    sdsm_lock(0);
    *sum += sdsm_rank();
    sdsm_unlock(0);
    sdsm_barrier();
    if (sdsm_rank() == 0)
        printf("%ld\n", *sum);
    sdsm_finalize();
    return 0;
}
