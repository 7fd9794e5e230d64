/*
 * atomic.c - omp atomic in its forms (update, read, write, capture,
 * compare) on 1-, 2-, 4- and 8-byte integers and on float and double, at
 * a global, a local of main and a heap address, with the memory-order
 * clauses (flags that threads wait on are flush.c's).  gcc emits __atomic_* (fetch_add, compare_exchange, load,
 * store, exchange) that sdsmcc makes calls; on shared memory the runtime
 * must perform them at the home, not on a local copy.
 */
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define N 800

static int gi;
static long gl;
static unsigned char gc;
static short gs;
static double gd;
static float gf;
static long long tickets[N];

int main(void)
{
    long ml = 0; /* on main's stack */
    double md = 0;
    unsigned long long mu = 0;
    long *hl = malloc(sizeof *hl); /* on the heap */
    *hl = 0;

    /* update, in its syntactic forms */
#pragma omp parallel for schedule(dynamic, 5)
    for (int i = 0; i < N; i++) {
#pragma omp atomic
        gi += i;
#pragma omp atomic update
        gl -= 2 * i;
#pragma omp atomic
        gc++;
#pragma omp atomic
        --gs;
#pragma omp atomic
        gd += (i % 8) * 0.125;
#pragma omp atomic
        gf += (float)(i % 4);
#pragma omp atomic seq_cst
        ml += 3;
#pragma omp atomic relaxed
        md = md + 0.5;
#pragma omp atomic
        mu |= 1ull << (i % 64);
#pragma omp atomic
        *hl = 1 + *hl;
    }
    printf("update: int %d long %ld char %u short %d double %.17g float %.9g\n", gi, gl, (unsigned)gc, gs, gd,
           (double)gf);
    printf("update: stack long %ld double %.17g ull %llx heap %ld\n", ml, md, mu, *hl);

    /* capture: tickets are unique, so they are a permutation of 0..N-1 */
    long long next = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < N; i++) {
        long long t;
#pragma omp atomic capture
        t = next++;
        tickets[i] = t;
    }
    char *seen = calloc(N, 1);
    int perm = next == N;
    for (int i = 0; i < N && perm; i++) {
        perm = tickets[i] >= 0 && tickets[i] < N && !seen[tickets[i]];
        seen[tickets[i]] = 1;
    }
    ot_check(perm, "capture t = x++: tickets are 0..%d once each", N - 1);

    /* capture, the other forms */
    int cx = 1000, sum_before = 0, sum_after = 0;
    double dx = 0;
    double dsum = 0;
#pragma omp parallel for schedule(static, 3) reduction(+ : sum_before, sum_after, dsum)
    for (int i = 0; i < 300; i++) {
        int before, after;
        double dv;
#pragma omp atomic capture
        {
            before = cx;
            cx += 2;
        }
#pragma omp atomic capture seq_cst
        {
            cx -= 1;
            after = cx;
        }
#pragma omp atomic capture
        dv = dx += 0.25;
        sum_before += before >= 1000 && before < 1600;
        sum_after += after >= 1000;
        dsum += dv > 0;
    }
    printf("capture: x %d, %d olds in range, %d news >= 1000, double %.17g, %g positive\n", cx, sum_before,
           sum_after, dx, dsum);

    /* capture with swap: the exchanged values are what was written */
    long sw = -1;
    long olds = 0;
#pragma omp parallel for reduction(+ : olds)
    for (int i = 0; i < 100; i++) {
        long old;
#pragma omp atomic capture
        {
            old = sw;
            sw = i;
        }
        olds += old;
    }
    /* each value 0..99 was written once and read back by the next swap,
     * except the last one written; -1 was read once */
    ot_check(olds + sw - (-1) == 4950, "capture swap: every written value read once");

    /* write, then read, across a barrier */
    int w = 0, readers = 0, agree = 0;
#pragma omp parallel reduction(+ : readers, agree)
    {
#pragma omp single
        {
#pragma omp atomic write
            w = 4242;
        }
        int r;
#pragma omp atomic read
        r = w;
        readers += 1;
        agree += r == 4242;
    }
    ot_check(readers == agree, "write then read: every thread read the value written");

    /* compare (OpenMP 5.1): a running maximum and a one-time claim */
    int amax = -1, claimed = -1, claims = 0;
#pragma omp parallel for schedule(dynamic, 3) reduction(+ : claims)
    for (int i = 0; i < 300; i++) {
        int v = (i * 613) % 1009;
#pragma omp atomic compare
        amax = amax < v ? v : amax;
        int old;
#pragma omp atomic compare capture
        {
            old = claimed;
            if (claimed == -1) {
                claimed = i;
            }
        }
        claims += old == -1;
    }
    printf("compare: max %d\n", amax);
    ot_check(claims == 1 && claimed >= 0 && claimed < 1000, "compare: exactly one claim");

    /* many updates to one place from every thread: contention at the home */
    long hot = 0;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < 2000; i++) {
#pragma omp atomic
        hot += 1;
    }
    printf("contended counter %ld\n", hot);
    free(seen);
    free(hl);
    return ot_done();
}
