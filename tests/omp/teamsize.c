/*
 * teamsize.c - a program whose output depends on the team size, on
 * purpose: compare.sh must report the difference (omp_compare_selftest).
 */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
    printf("team of %d\ndone\n", n);
    return 0;
}
