/*
 * flush.c - synchronization without barriers or locks: a producer writes
 * data, flushes and sets a flag with an atomic write; consumers spin on an
 * atomic read of the flag, flush, and read the data (the OpenMP 4.5 idiom,
 * and the 5.x one with release/acquire clauses), and with the flag raised
 * by an atomic update after the flush.  gcc emits the flush as a fence
 * instruction (sdsmcc makes it a call); the data must be visible anyway.
 * A consumer that waits more than 20 s gives up and counts as a failure
 * rather than hanging the test.
 */
#include <omp.h>

#include "omptest.h"

#define N 4096 /* several pages */

static long data[N];
static int flag;

static int wait_flag(int want)
{
    double t0 = omp_get_wtime();
    for (;;) {
        int f;
#pragma omp atomic read
        f = flag;
        if (f == want)
            return 1;
        if (omp_get_wtime() - t0 > 20)
            return 0;
    }
}

static int data_ok(long round)
{
    for (int i = 0; i < N; i++)
        if (data[i] != round * N + i)
            return 0;
    return 1;
}

/* 5 rounds of data, flush and a flag raised by an atomic write (update 0)
 * or an atomic update (1); whether every consumer saw the data. */
static int flush_rounds(int update)
{
    int consumers = 0, good = 0, timeouts = 0;
    flag = 0;
    for (int round = 1; round <= 5; round++) {
#pragma omp parallel reduction(+ : consumers, good, timeouts)
        {
            if (omp_get_thread_num() == 0) {
                for (int i = 0; i < N; i++)
                    data[i] = (long)round * N + i;
#pragma omp flush
                if (update) {
#pragma omp atomic update
                    flag += 1;
                } else {
#pragma omp atomic write
                    flag = round;
                }
            } else {
                consumers++;
                if (!wait_flag(round))
                    timeouts++;
                else {
#pragma omp flush
                    good += data_ok(round);
                }
            }
        }
    }
    return good == consumers && !timeouts;
}

int main(void)
{
    int consumers, good, timeouts;
    ot_check(flush_rounds(0), "flush + atomic flag: consumers see the data");

    /* the same with memory-order clauses and no flush */
    consumers = good = timeouts = 0;
    flag = 0;
    for (int round = 1; round <= 5; round++) {
#pragma omp parallel reduction(+ : consumers, good, timeouts)
        {
            if (omp_get_thread_num() == 0) {
                for (int i = 0; i < N; i++)
                    data[i] = (long)round * N * 2 + i - (long)round * N;
#pragma omp atomic write release
                flag = round;
            } else {
                consumers++;
                double t0 = omp_get_wtime();
                int f = 0;
                while (f != round && omp_get_wtime() - t0 < 20) {
#pragma omp atomic read acquire
                    f = flag;
                }
                if (f != round)
                    timeouts++;
                else
                    good += data_ok(round);
            }
        }
    }
    ot_check(good == consumers && !timeouts, "release/acquire atomics: consumers see the data");

    /* the flag raised by a relaxed read-modify-write after the flush (an
     * `omp atomic update`, as a counter of rounds done) */
    ot_check(flush_rounds(1), "flush + atomic update of the flag: consumers see the data");
    return ot_done();
}
