/*
 * sections.c - sections and parallel sections: each section runs once,
 * lastprivate takes the last section's value, reductions work across
 * sections, and more sections than threads and fewer are both fine.
 * GOMP_sections_start/next/end, GOMP_parallel_sections.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

static int runs[8];

static long work(int k)
{
    long s = 0;
    for (int i = 0; i < 10000 * (k + 1); i++)
        s += (i ^ k) % 7;
    return s;
}

int main(void)
{
    long r[8] = {0};
    int last = -1;
#pragma omp parallel
    {
#pragma omp sections lastprivate(last)
        {
#pragma omp section
            {
                r[0] = work(0);
                runs[0]++;
                last = 0;
            }
#pragma omp section
            {
                r[1] = work(1);
                runs[1]++;
                last = 1;
            }
#pragma omp section
            {
                r[2] = work(2);
                runs[2]++;
                last = 2;
            }
#pragma omp section
            {
                r[3] = work(3);
                runs[3]++;
                last = 3;
            }
#pragma omp section
            {
                r[4] = work(4);
                runs[4]++;
                last = 4;
            }
#pragma omp section
            {
                r[5] = work(5);
                runs[5]++;
                last = 5;
            }
        }
    }
    printf("sections: %ld %ld %ld %ld %ld %ld, lastprivate %d\n", r[0], r[1], r[2], r[3], r[4], r[5], last);
    int once = 1;
    for (int k = 0; k < 6; k++)
        once &= runs[k] == 1;
    ot_check(once, "sections: each section once");

    memset(runs, 0, sizeof runs);
    long sum = 0;
#pragma omp parallel sections reduction(+ : sum)
    {
#pragma omp section
        {
            sum += work(6);
            runs[6]++;
        }
#pragma omp section
        {
            sum += work(7);
            runs[7]++;
        }
    }
    printf("parallel sections: sum %ld\n", sum);
    ot_check(runs[6] == 1 && runs[7] == 1, "parallel sections: each section once");

    /* sections nowait followed by a loop, then a barrier */
    static long tab[256];
    long s1 = 0, s2 = 0;
#pragma omp parallel
    {
#pragma omp sections nowait
        {
#pragma omp section
            s1 = work(1);
#pragma omp section
            s2 = work(2);
        }
#pragma omp for schedule(dynamic, 16)
        for (int i = 0; i < 256; i++)
            tab[i] = (long)i * i;
    }
    long ts = 0;
    for (int i = 0; i < 256; i++)
        ts += tab[i];
    printf("sections nowait: %ld %ld, loop %ld\n", s1, s2, ts);

    /* one section only */
    int single_section = 0;
#pragma omp parallel sections
    {
#pragma omp section
        single_section = 99;
    }
    printf("one section: %d\n", single_section);
    return ot_done();
}
