/*
 * jia_basic.c - a JIAJIA program on jia.h: collective allocations with
 * rotating and cyclic homes, a lock-protected counter, a condition flag
 * that hands a value from process 0 to the others, and exact checks.
 * Prints "OK jia_basic" from process 0.
 */
#include <jia.h>
#include <sdsm.h>

#include <stdio.h>

#define N      4096
#define ROUNDS 20

static void check(const char *what, long i, long want, long got)
{
    if (want != got)
        jia_error("jia_basic: %s[%ld]: expected %ld, got %ld", what, i, want, got);
}

int main(int argc, char **argv)
{
    jia_init(argc, argv);
    int me = jiapid, np = jiahosts;
    long *a = (long *)jia_alloc(N * sizeof(long)); /* at process 0 */
    long *b = (long *)jia_alloc(sizeof(long) * 4); /* at process 1 % np */
    int page = 4096, pages = 8;
    char *c = (char *)jia_alloc3(pages * page, 2 * page, np - 1); /* 2-page blocks from the last */
    check("home of a", 0, 0, sdsm_home_of(a));
    check("home of b", 0, 1 % np, sdsm_home_of(b));
    for (int i = me; i < N; i += np)
        a[i] = 3L * i - 1;
    for (int r = 0; r < ROUNDS; r++) {
        jia_lock(0);
        b[0] += 2;
        jia_unlock(0);
    }
    jia_barrier(); /* also where jia_alloc3's homes take effect */
    for (int i = 0; i < N; i++)
        check("a", i, 3L * i - 1, a[i]);
    check("b[0]", 0, 2L * np * ROUNDS, b[0]);
    for (int p = 0; p < pages; p++)
        check("home of c's page", p, (np - 1 + p / 2) % np, sdsm_home_of(c + (long)p * page));

    if (me == 0) {
        b[1] = 12345;
        jia_setcv(7);
    } else {
        jia_waitcv(7);
        check("b[1] after jia_waitcv", 0, 12345, b[1]);
    }
    jia_barrier();
    check("jia_clock() >= 0", 0, 1, jia_clock() >= 0);
    if (me == 0) {
        printf("OK jia_basic\n");
        fflush(stdout);
    }
    jia_exit();
}
