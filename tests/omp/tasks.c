/*
 * tasks.c - explicit tasks (which the runtime may run at once, undeferred,
 * as the specification allows): recursive tasks with taskwait, tasks made
 * in a single and in a loop, taskgroup, firstprivate and shared data of
 * tasks, taskloop.  GOMP_task, GOMP_taskwait, GOMP_taskgroup_start/end,
 * GOMP_taskloop.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

static long fib(int n)
{
    if (n < 2)
        return n;
    long a, b;
    if (n < 12)
        return fib(n - 1) + fib(n - 2);
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(void)
{
    long f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(24);
    printf("fib(24) with tasks: %ld\n", f);

    /* every thread makes tasks in a loop; they add to shared results */
    long results[400] = {0};
#pragma omp parallel
    {
#pragma omp for schedule(static, 10)
        for (int i = 0; i < 400; i++) {
#pragma omp task firstprivate(i)
            results[i] = (long)i * i % 977;
        }
        /* the region's end waits for the tasks */
    }
    long rs = 0;
    for (int i = 0; i < 400; i++)
        rs += results[i];
    printf("tasks from a loop: %ld\n", rs);

    /* a taskgroup waits for its tasks and their descendants */
    long counter = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
            for (int i = 0; i < 50; i++) {
#pragma omp task
                {
#pragma omp task
                    {
#pragma omp atomic
                        counter += 2;
                    }
#pragma omp atomic
                    counter += 1;
                }
            }
        }
        ot_check(counter == 150, "taskgroup waited for 150 updates");
    }

    /* taskloop */
    long *v = calloc(1000, sizeof *v);
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(50)
        for (int i = 0; i < 1000; i++)
            v[i] = 3L * i;
    }
    long vs = 0;
    for (int i = 0; i < 1000; i++)
        vs += v[i];
    printf("taskloop: %ld\n", vs);
    free(v);
    return ot_done();
}
