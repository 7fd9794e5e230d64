/*
 * sms_basic.c - an SMS program on sms.h: placed allocations, a barrier
 * with a chosen manager, a lock-protected counter, a condition variable on
 * which process 0 waits for every other process to check in, and a page
 * manager change.  Correct under IBEC: what is read outside a critical
 * section was written before a barrier.  Prints "OK sms_basic" from process 0.
 */
#include <sms.h>
#include <sdsm.h>

#include <stdio.h>
#include <stdlib.h>

#define N      3000
#define ROUNDS 20

static void check(const char *what, long i, long want, long got)
{
    if (want != got) {
        char m[256];
        snprintf(m, sizeof m, "sms_basic: %s[%ld]: expected %ld, got %ld", what, i, want, got);
        sms_error(m);
    }
}

int main(int argc, char **argv)
{
    sms_startup(argc, argv);
    int me = sms_proc_id, np = sms_nproc, last = np - 1;
    double *x = sms_alloc(N * sizeof(double), last);
    long *shared = sms_calloc(4, sizeof(long), 0); /* counter, arrivals, sum of ids */
    check("home of x", 0, last, sdsm_home_of(x));
    for (int i = me; i < N; i += np)
        x[i] = 0.5 * i;
    sms_barrier(last);
    for (int i = 0; i < N; i++)
        check("x", i, (long)(2 * (0.5 * i)), (long)(2 * x[i]));

    for (int r = 0; r < ROUNDS; r++) {
        sms_lock(1);
        shared[0]++;
        sms_unlock(1);
    }
    /* Everyone but 0 checks in; 0 waits for all of them on condition 5. */
    sms_lock(2);
    if (me == 0) {
        while (shared[1] != np - 1)
            sms_cond_wait(5, 2);
        check("sum of ids", 0, (long)np * (np - 1) / 2, shared[2]);
    } else {
        shared[1]++;
        shared[2] += me;
        sms_cond_signal(5);
    }
    sms_unlock(2);
    if (me == last) /* any process may ask; one is enough */
        sms_change_page_manager(x, N * sizeof(double), 0);
    sms_barrier(0);
    check("counter", 0, (long)np * ROUNDS, shared[0]);
    /* Under ibec this barrier takes a second round (the diffs the homes
     * forward), whose release must not drop the first round's moves. */
    check("home of x after the change", 0, 0, sdsm_home_of(x));
    sms_barrier(0);
    sms_shutdown();
    if (me == 0)
        printf("OK sms_basic\n");
    return 0;
}
