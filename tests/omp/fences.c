/*
 * fences.c - the flag support (quiet publisher, home twins) is on exactly
 * for programs that can wait on a plain flag: those whose code holds a
 * flush (a memory fence).  Built twice by CMakeLists.txt: as is (no fence:
 * its threads meet only in runtime calls) and with -DWITH_FLUSH.  Both
 * print the same sum; the tests read "flag support" in the statistics.
 */
#include <omp.h>
#include <stdio.h>

#define N 8192

static double a[N];

int main(void)
{
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        for (int i = t; i < N; i += n)
            a[i] = i * 0.5;
#ifdef WITH_FLUSH
#pragma omp flush
#endif
    }
    double s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    printf("fences: sum %.1f\n", s);
    return 0;
}
