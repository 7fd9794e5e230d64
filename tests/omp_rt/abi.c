/* The libgomp entry points gcc 12 no longer emits but older compilers and
 * hand-written callers use: GOMP_parallel_start/end, the combined
 * *_start forms, the non-inlined static loop, GOMP_loop_start with each
 * schedule, downward _ull loops, GOMP_sections2_start; and the error
 * directive's warning. */
#include <stdbool.h>
#include <string.h>

#include "rt.h"

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_static_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_dynamic_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_guided_start(void (*)(void *), void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_runtime_start(void (*)(void *), void *, unsigned, long, long, long);
void GOMP_parallel_sections_start(void (*)(void *), void *, unsigned, unsigned);
bool GOMP_loop_static_start(long, long, long, long, long *, long *);
bool GOMP_loop_static_next(long *, long *);
bool GOMP_loop_runtime_next(long *, long *);
bool GOMP_loop_start(long, long, long, long, long, long *, long *, void *, void **);
bool GOMP_loop_ull_dynamic_start(bool, unsigned long long, unsigned long long, unsigned long long,
                                 unsigned long long, unsigned long long *, unsigned long long *);
bool GOMP_loop_ull_dynamic_next(unsigned long long *, unsigned long long *);
void GOMP_loop_end(void);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
unsigned GOMP_sections2_start(unsigned, void *, void **);
void GOMP_sections_end(void);
void GOMP_barrier(void);

#define N 200
static long cnt[N], sec[8], ran;

static void reset(void) { memset(cnt, 0, sizeof cnt); }

static void check(const char *what, long lo, long hi, long step)
{
    for (long i = 0; i < N; i++) {
        int in =
            step > 0 ? i >= lo && i < hi && (i - lo) % step == 0 : i <= lo && i > hi && (lo - i) % -step == 0;
        CHECK(cnt[i] == in, "%s: iteration %ld ran %ld times", what, i, cnt[i]);
    }
}

/* body of a combined loop: the loop was entered before fn runs */
static void combined_body(void *arg)
{
    (void)arg;
    long s, e;
    while (GOMP_loop_runtime_next(&s, &e)) /* any kind's _next serves the current loop */
        for (long i = s; i < e; i += 3)
            __atomic_fetch_add(&cnt[i], 1, __ATOMIC_RELAXED);
    GOMP_loop_end_nowait();
}

static void plain_body(void *arg)
{
    long sched = *(long *)arg, s, e;
    if (GOMP_loop_start(1, N, 2, sched, 4, &s, &e, NULL, NULL))
        do
            for (long i = s; i < e; i += 2)
                __atomic_fetch_add(&cnt[i], 1, __ATOMIC_RELAXED);
        while (GOMP_loop_runtime_next(&s, &e));
    GOMP_loop_end();
    if (GOMP_loop_static_start(N - 1, -1, -1, 0, &s, &e))
        do
            for (long i = s; i > e; i--)
                __atomic_fetch_add(&cnt[i], 10, __ATOMIC_RELAXED);
        while (GOMP_loop_static_next(&s, &e));
    GOMP_loop_end();
    unsigned long long us, ue;
    if (GOMP_loop_ull_dynamic_start(false, N - 1, 4, -2ull, 3, &us, &ue))
        do
            for (unsigned long long i = us; i > ue; i -= 2)
                __atomic_fetch_add(&cnt[i], 100, __ATOMIC_RELAXED);
        while (GOMP_loop_ull_dynamic_next(&us, &ue));
    GOMP_loop_end();
    for (unsigned k = GOMP_sections2_start(5, NULL, NULL); k; k = GOMP_sections_next())
        __atomic_fetch_add(&sec[k], 1, __ATOMIC_RELAXED);
    GOMP_sections_end();
}

static void sections_body(void *arg)
{
    (void)arg;
    for (unsigned k = GOMP_sections_next(); k; k = GOMP_sections_next())
        __atomic_fetch_add(&sec[k], 1, __ATOMIC_RELAXED);
    GOMP_barrier();
}

static void count_body(void *arg)
{
    (void)arg;
    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

int main(void)
{
    int nt = omp_get_max_threads();
    GOMP_parallel_start(count_body, NULL, 0);
    count_body(NULL);
    GOMP_parallel_end();
    CHECK(ran == nt, "GOMP_parallel_start: %ld threads ran", ran);

    void (*starts[])(void (*)(void *), void *, unsigned, long, long, long, long) = {
        GOMP_parallel_loop_static_start, GOMP_parallel_loop_dynamic_start, GOMP_parallel_loop_guided_start};
    for (int k = 0; k < 3; k++) {
        reset();
        starts[k](combined_body, NULL, 0, 2, N, 3, 2);
        combined_body(NULL);
        GOMP_parallel_end();
        check("parallel loop start", 2, N, 3);
    }
    reset();
    GOMP_parallel_loop_runtime_start(combined_body, NULL, 0, 2, N, 3);
    combined_body(NULL);
    GOMP_parallel_end();
    check("parallel loop runtime start", 2, N, 3);

    memset(sec, 0, sizeof sec);
    GOMP_parallel_sections_start(sections_body, NULL, 0, 4);
    sections_body(NULL);
    GOMP_parallel_end();
    for (int k = 1; k <= 4; k++)
        CHECK(sec[k] == 1, "parallel sections start: section %d ran %ld times", k, sec[k]);

    for (long sched = 0; sched <= 4; sched++) {
        reset();
        memset(sec, 0, sizeof sec);
        long arg = sched;
#pragma omp parallel firstprivate(arg)
        plain_body(&arg);
        for (long i = 0; i < N; i++) {
            long want = (i >= 1 && i % 2 == 1) + 10 + (i > 4 && (N - 1 - i) % 2 == 0) * 100;
            CHECK(cnt[i] == want, "GOMP_loop_start sched %ld: iteration %ld: %ld, want %ld", sched, i, cnt[i],
                  want);
        }
        for (int k = 1; k <= 5; k++)
            CHECK(sec[k] == 1, "sections2: section %d ran %ld times", k, sec[k]);
    }
#pragma omp error at(execution) severity(warning) message("a warning, the run goes on")
    printf("OK abi %d\n", nt);
    return 0;
}
