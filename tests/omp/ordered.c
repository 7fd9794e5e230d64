/*
 * ordered.c - ordered regions in loops of each schedule: the ordered part
 * runs in iteration order, whatever thread runs the iteration, so an
 * append-only log comes out sorted and a running value (a prefix sum
 * kept in a shared variable) is exact.  GOMP_loop_ordered_*_start,
 * GOMP_ordered_start/end, and the ull forms.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define N 600

static int seq[N];
static long prefix[N];

static void check_log(const char *what, int n)
{
    int sorted = n == N;
    for (int i = 0; i < N && sorted; i++)
        sorted = seq[i] == i;
    ot_check(sorted, "%s: ordered part in iteration order", what);
    printf("%s: prefix sum %ld, digest %016llx\n", what, prefix[N - 1],
           (unsigned long long)ot_hash(prefix, sizeof prefix));
}

#define PRAGMA(x) _Pragma(#x)

#define ORDERED_LOOP(what, sched)                                                                            \
    do {                                                                                                     \
        int n = 0;                                                                                           \
        long run = 0;                                                                                        \
        memset(seq, -1, sizeof seq);                                                                         \
        PRAGMA(omp parallel for ordered sched)                                                               \
        for (int i = 0; i < N; i++) {                                                                        \
            long v = ((long)i * 31) % 101; /* unordered work */                                              \
            _Pragma("omp ordered")                                                                           \
            {                                                                                                \
                seq[n++] = i;                                                                                \
                run += v;                                                                                    \
                prefix[i] = run;                                                                             \
            }                                                                                                \
        }                                                                                                    \
        check_log(what, n);                                                                                  \
    } while (0)

int main(void)
{
    ORDERED_LOOP("static", schedule(static));
    ORDERED_LOOP("static,4", schedule(static, 4));
    ORDERED_LOOP("dynamic", schedule(dynamic));
    ORDERED_LOOP("dynamic,7", schedule(dynamic, 7));
    ORDERED_LOOP("guided", schedule(guided));
    ORDERED_LOOP("runtime", schedule(runtime));

    /* inside a region, with unsigned long long iterations */
    int n = 0;
    long run = 0;
    memset(seq, -1, sizeof seq);
#pragma omp parallel
    {
#pragma omp for ordered schedule(dynamic, 3)
        for (unsigned long long u = 1ull << 35; u < (1ull << 35) + N; u++) {
            int i = (int)(u - (1ull << 35));
#pragma omp ordered
            {
                seq[n++] = i;
                run += i % 13;
                prefix[i] = run;
            }
        }
    }
    check_log("ull dynamic,3", n);

    /* an ordered region not reached by every iteration */
    n = 0;
    memset(seq, -1, sizeof seq);
#pragma omp parallel for ordered schedule(static, 2)
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0) {
#pragma omp ordered
            seq[n++] = i;
        }
    }
    int ok = n == N / 3;
    for (int k = 0; k < n && ok; k++)
        ok = seq[k] == 3 * k;
    ot_check(ok, "ordered in every third iteration: in order");
    return ot_done();
}
