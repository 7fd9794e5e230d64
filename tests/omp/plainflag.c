/*
 * plainflag.c - a thread waits for a flag another thread raises, reading it
 * through a volatile pointer with no omp flush: a data race in OpenMP (the
 * program has no fence), which works on one machine.  Built with sdsmcc it
 * gets no flag support, so across ranks the wait never ends: the test
 * wants the time limit's report to say why and what to set; with
 * SDSM_QUIET_US=1000 SDSM_HOME_TWINS=1 it ends.
 */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

static int flag;
static long data;

int main(void)
{
    long seen = -1;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            usleep(300000); /* the other thread reads the flag's page first */
            data = 42;
            *(volatile int *)&flag = 1;
        } else {
            while (!*(volatile int *)&flag)
                ;
            seen = *(volatile long *)&data;
        }
    }
    printf("plainflag: saw %ld\n", seen);
    return seen != 42;
}
