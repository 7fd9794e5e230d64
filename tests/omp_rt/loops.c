/* Every loop schedule covers exactly its iteration space: each iteration
 * runs once, on one thread; static schedules give the same iterations to
 * the same thread every time (affinity); ordered regions run in order. */
#include "rt.h"

#define N 300
static struct {
    long cnt[N + 64], owner[N + 64], owner2[N + 64];
    long nw[40][N];
    long tot[1024]; /* iterations each thread ran: a duplicate shows in the sum */
    long order[N + 64], pos;
    long lo, hi, step;
    unsigned long long ulo, uhi;
    int kinds;
} * S;

static void reset(void)
{
    for (int i = 0; i < N + 64; i++)
        S->cnt[i] = 0, S->owner[i] = -1;
    for (int t = 0; t < 1024; t++)
        S->tot[t] = 0;
    S->pos = 0;
}

/* Iterations lo, lo+step, ... < hi (or > hi for a negative step) each ran once. */
static void check(const char *what, long lo, long hi, long step)
{
    long want = 0, ran = 0;
    for (long i = 0; i < N + 64; i++) {
        int in = step > 0 ? (i >= lo && i < hi && (i - lo) % step == 0)
                          : (i <= lo && i > hi && (lo - i) % -step == 0);
        CHECK(S->cnt[i] == in, "%s: iteration %ld ran %ld times", what, i, S->cnt[i]);
        want += in;
    }
    for (int t = 0; t < 1024; t++)
        ran += S->tot[t];
    CHECK(ran == want, "%s: %ld iterations ran, want %ld", what, ran, want);
}

#define BODY(i)                                                                                              \
    do {                                                                                                     \
        S->cnt[i]++;                                                                                         \
        S->owner[i] = omp_get_thread_num();                                                                  \
        S->tot[omp_get_thread_num()]++;                                                                      \
    } while (0)

#define LOOP(name, sched)                                                                                    \
    reset();                                                                                                 \
    _Pragma("omp parallel") { _Pragma(sched) for (long i = S->lo; i < S->hi; i += S->step) BODY(i); }        \
    check(name, S->lo, S->hi, S->step);

int main(void)
{
#pragma omp parallel
    S = rt_shared(sizeof *S);
    S->lo = 3, S->hi = N, S->step = 1;
    for (int pass = 0; pass < 2; pass++) {
        LOOP("static", "omp for schedule(static)")
        LOOP("static,7", "omp for schedule(static, 7)")
        LOOP("dynamic", "omp for schedule(dynamic)")
        LOOP("dynamic,13", "omp for schedule(dynamic, 13)")
        LOOP("monotonic:dynamic,5", "omp for schedule(monotonic: dynamic, 5)")
        LOOP("guided", "omp for schedule(guided)")
        LOOP("guided,9", "omp for schedule(guided, 9)")
        LOOP("nonmonotonic:guided", "omp for schedule(nonmonotonic: guided)")
        LOOP("auto", "omp for schedule(auto)")
        LOOP("runtime (default)", "omp for schedule(runtime)")
        omp_set_schedule(omp_sched_dynamic, 3);
        LOOP("runtime dynamic,3", "omp for schedule(runtime)")
        omp_set_schedule(omp_sched_guided, 0);
        LOOP("runtime guided", "omp for schedule(runtime)")
        omp_set_schedule(omp_sched_static, 4);
        LOOP("runtime static,4", "omp for schedule(runtime)")
        omp_set_schedule((omp_sched_t)(omp_sched_monotonic | omp_sched_dynamic), 2);
        LOOP("runtime monotonic:dynamic,2", "omp for schedule(runtime)")
        omp_set_schedule(omp_sched_auto, 0);
        LOOP("runtime auto", "omp for schedule(runtime)")
        S->lo = 5, S->hi = N - 3, S->step = 3; /* strided */
    }
    /* negative steps */
    S->lo = N - 1, S->hi = -1, S->step = -2;
    reset();
#pragma omp parallel
#pragma omp for schedule(dynamic, 4)
    for (long i = S->lo; i > S->hi; i += S->step)
        BODY(i);
    check("dynamic downward", S->lo, S->hi, S->step);
    reset();
#pragma omp parallel
#pragma omp for schedule(static, 3)
    for (long i = S->lo; i > S->hi; i += S->step)
        BODY(i);
    check("static,3 downward", S->lo, S->hi, S->step);

    /* unsigned long long loops */
    S->ulo = 2, S->uhi = N;
    reset();
#pragma omp parallel
#pragma omp for schedule(dynamic, 6)
    for (unsigned long long i = S->ulo; i < S->uhi; i++)
        BODY(i);
    check("ull dynamic", 2, N, 1);
    reset();
#pragma omp parallel
#pragma omp for schedule(guided)
    for (unsigned long long i = S->uhi - 1; i >= S->ulo; i--)
        BODY(i);
    check("ull guided downward", N - 1, 1, -1);

    /* many nowait dynamic loops in a row: the slots are reused */
    reset();
#pragma omp parallel
    {
        for (int k = 0; k < 40; k++) {
#pragma omp for schedule(dynamic, 50) nowait
            for (long i = 0; i < N; i++)
                S->nw[k][i]++;
        }
    }
    for (int k = 0; k < 40; k++)
        for (int i = 0; i < N; i++)
            CHECK(S->nw[k][i] == 1, "nowait loop %d: iteration %d ran %ld times", k, i, S->nw[k][i]);

    /* combined parallel for */
    reset();
#pragma omp parallel for schedule(dynamic, 3)
    for (long i = 0; i < N; i++)
        BODY(i);
    check("parallel for dynamic", 0, N, 1);
    reset();
#pragma omp parallel for schedule(guided, 2)
    for (long i = 0; i < N; i++)
        BODY(i);
    check("parallel for guided", 0, N, 1);
    omp_set_schedule(omp_sched_dynamic, 5);
    reset();
#pragma omp parallel for schedule(runtime)
    for (long i = 0; i < N; i++)
        BODY(i);
    check("parallel for runtime", 0, N, 1);

    /* static affinity: same iterations on the same thread every time */
    for (int k = 0; k < 2; k++) {
        reset();
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (long i = 0; i < N; i++)
                BODY(i);
#pragma omp for schedule(static, 8)
            for (long i = 0; i < N; i++)
                S->owner2[i] = omp_get_thread_num();
        }
        for (int i = 0; i < N; i++) {
            long nt = omp_get_max_threads(), q = N / nt, r = N % nt;
            long t = i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
            CHECK(S->owner[i] == t, "static: iteration %d on thread %ld, not %ld", i, S->owner[i], t);
            CHECK(S->owner2[i] == (i / 8) % nt, "static,8: iteration %d on thread %ld", i, S->owner2[i]);
        }
    }

    /* ordered: dynamic, static and guided */
    for (S->kinds = 0; S->kinds < 3; S->kinds++) {
        int kind = (int)S->kinds;
        reset();
#pragma omp parallel
        {
            int kind = (int)S->kinds;
            if (kind == 0) {
#pragma omp for ordered schedule(dynamic, 3)
                for (long i = 0; i < N; i++) {
                    BODY(i);
#pragma omp ordered
                    S->order[S->pos++] = i;
                }
            } else if (kind == 1) {
#pragma omp for ordered schedule(static)
                for (long i = 0; i < N; i++) {
                    BODY(i);
#pragma omp ordered
                    S->order[S->pos++] = i;
                }
            } else {
#pragma omp for ordered schedule(guided)
                for (long i = 0; i < N; i++) {
                    if (i % 3 == 0) /* not every iteration has an ordered region */
                        continue;
#pragma omp ordered
                    S->order[S->pos++] = i;
                }
            }
        }
        long want = 0;
        for (long i = 0; i < N; i++)
            if (kind != 2 || i % 3)
                CHECK(S->order[want++] == i, "ordered kind %d: position %ld holds %ld", kind, want - 1,
                      S->order[want - 1]);
        CHECK(S->pos == want, "ordered kind %d: %ld regions, want %ld", kind, S->pos, want);
    }
    printf("OK loops %d\n", omp_get_max_threads());
    return 0;
}
