/*
 * exitwrites.c - what a process writes to the program's globals after the
 * job ended (its destructors and exit handlers) stays its own.  Under
 * sdsmrun every rank runs the program's destructors at exit; with one copy
 * of the memory for the host (SDSM_HOST_SHARE), a rank that wrote through
 * to it would change the globals under another rank's destructor.  Each
 * process stamps a global with its pid, waits while the others stamp
 * theirs, and checks its own stamp is still there; a process that finds
 * another's says so on standard error and exits with status 3.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "omptest.h"

#define N 4096
volatile long stamp[N]; /* a page of its own, and more */
long data[N];

__attribute__((destructor)) static void check_stamp(void)
{
    long me = (long)getpid();
    for (int i = 0; i < N; i++)
        stamp[i] = me;
    for (int round = 0; round < 20; round++) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int i = 0; i < N; i += 512)
            if (stamp[i] != me) {
                fprintf(stderr, "exitwrites: pid %ld found pid %ld's stamp after exit\n", me, stamp[i]);
                _exit(3);
            }
    }
}

int main(void)
{
    long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < N; i++) {
        data[i] = i;
        sum += i;
    }
    printf("sum %ld\n", sum);
    ot_check(data[N - 1] == N - 1, "data written in the region");
    return ot_done();
}
