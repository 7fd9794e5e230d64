/* Constructs and calls the runtime refuses, each with a clear message
 * (checked by the test's expectations), and exit() from main.
 *   errors numthreads | setnum | doacross | exitworker | errordirective | stack | exit */
#include <string.h>

#include "rt.h"

static long *A;

/* 100 MiB on the calling thread's stack, more than the default
 * OMP_STACKSIZE (a frame of its own: gcc sizes a function's frame for all
 * its blocks at once).  Its two ends are touched. */
__attribute__((noinline)) static long big_frame(void)
{
    volatile char big[100 << 20];
    big[0] = 1;
    big[sizeof big - 1] = 2;
    return big[0] + big[sizeof big - 1] != 3;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
#pragma omp parallel
    A = rt_shared(4096);
    if (!strcmp(what, "numthreads")) {
#pragma omp parallel num_threads(3)
        A[omp_get_thread_num()] = 1;
    } else if (!strcmp(what, "setnum")) {
        omp_set_num_threads(3);
    } else if (!strcmp(what, "doacross")) {
#pragma omp parallel
#pragma omp for ordered(1)
        for (int i = 1; i < 100; i++) {
#pragma omp ordered depend(sink : i - 1)
            A[i] = A[i - 1] + 1;
#pragma omp ordered depend(source)
        }
    } else if (!strcmp(what, "exitworker")) {
#pragma omp parallel
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            exit(5);
    } else if (!strcmp(what, "errordirective")) {
#pragma omp parallel
        if (omp_get_thread_num() == 1) {
#pragma omp error at(execution) severity(fatal) message("stop here")
        }
    } else if (!strcmp(what, "stack")) {
        /* every thread but the master (whose stack is main's, as with
         * libgomp) puts 100 MiB on its stack: needs OMP_STACKSIZE */
        long bad = 0;
#pragma omp parallel reduction(+ : bad)
        if (omp_get_thread_num() != 0)
            bad += big_frame();
        CHECK(!bad, "stack contents");
        omp_sched_t k;
        int c;
        omp_get_schedule(&k, &c);
        printf("schedule %d,%d\n", (int)k, c);
    } else if (!strcmp(what, "exit")) {
#pragma omp parallel
        A[omp_get_thread_num()] = 1;
        printf("exiting with 7\n");
        fflush(stdout);
        exit(7);
    }
    printf("OK errors (nothing refused)\n");
    return 0;
}
