/*
 * schedule.c - every loop schedule: each iteration runs exactly once, and
 * where the specification fixes which thread runs an iteration (static with
 * and without a chunk, chunk boundaries of dynamic and guided), it does.
 * Loops inside a parallel region (GOMP_loop_*_start/next/end), combined
 * parallel loops (GOMP_parallel_loop_*), unsigned long long loops
 * (GOMP_loop_ull_*), collapse, negative steps, nowait, lastprivate,
 * firstprivate.  The runtime schedule comes from OMP_SCHEDULE, which the
 * test sets ("dynamic,3"), and from omp_set_schedule.
 */
#include <omp.h>
#include <string.h>

#include "omptest.h"

#define N 1000

static int count[N];  /* times each iteration ran */
static int owner[N];  /* the thread that ran it last */
static int owner2[N]; /* the same for a second, identical loop */
static long val[N];
static int team; /* team size of the last region */

static long f(long i) { return (i * i * 7 + 3) % 1009; }

static void reset(void)
{
    memset(count, 0, sizeof count);
    memset(owner, -1, sizeof owner);
    memset(val, 0, sizeof val);
}

static void body(long i)
{
    count[i]++;
    owner[i] = omp_get_thread_num();
    val[i] = f(i);
}

/* Each iteration once, and the values; prints the sum. */
static void coverage(const char *what)
{
    int once = 1;
    long sum = 0;
    for (int i = 0; i < N; i++) {
        once &= count[i] == 1;
        sum += val[i];
    }
    ot_check(once, "%s: each iteration once", what);
    printf("%s: sum %ld\n", what, sum);
}

/* schedule(static): at most one contiguous block per thread, in thread
 * order, sizes differing by at most one. */
static int static_blocks_ok(const int *own, int t)
{
    int lo = N, hi = 0;
    for (int i = 1; i < N; i++)
        if (own[i] < own[i - 1] || own[i] > own[i - 1] + 1)
            return 0;
    for (int th = 0; th < t; th++) {
        int n = 0;
        for (int i = 0; i < N; i++)
            n += own[i] == th;
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
    }
    return own[0] == 0 && own[N - 1] == t - 1 && hi - lo <= 1;
}

/* schedule(static, c): chunk k goes to thread k mod t. */
static int static_chunks_ok(const int *own, int c, int t)
{
    for (int i = 0; i < N; i++)
        if (own[i] != (i / c) % t)
            return 0;
    return 1;
}

/* dynamic, c: a chunk [kc, kc + c) is run by one thread. */
static int dynamic_chunks_ok(const int *own, int c)
{
    for (int i = 0; i < N; i++)
        if (own[i] != own[i - i % c])
            return 0;
    return 1;
}

/* guided, c: every chunk but the last has at least c iterations, so every
 * run of one owner that does not reach the end is at least c long. */
static int guided_runs_ok(const int *own, int c)
{
    int start = 0;
    for (int i = 1; i <= N; i++)
        if (i == N || own[i] != own[start]) {
            if (i < N && i - start < c)
                return 0;
            start = i;
        }
    return 1;
}

static void loops_in_region(void)
{
    reset();
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
#pragma omp for schedule(static)
        for (long i = 0; i < N; i++)
            body(i);
#pragma omp for schedule(static)
        for (long i = 0; i < N; i++)
            owner2[i] = omp_get_thread_num();
    }
    coverage("static");
    ot_check(static_blocks_ok(owner, team), "static: one block per thread, in order");
    ot_check(!memcmp(owner, owner2, sizeof owner), "static: same thread for the same iteration");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(static, 7)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("static,7");
    ot_check(static_chunks_ok(owner, 7, team), "static,7: chunks round-robin");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(dynamic)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("dynamic");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 5)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("dynamic,5");
    ot_check(dynamic_chunks_ok(owner, 5), "dynamic,5: whole chunks");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(monotonic : dynamic, 3)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("monotonic:dynamic,3");
    ot_check(dynamic_chunks_ok(owner, 3), "monotonic:dynamic,3: whole chunks");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(nonmonotonic : dynamic, 4)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("nonmonotonic:dynamic,4");
    ot_check(dynamic_chunks_ok(owner, 4), "nonmonotonic:dynamic,4: whole chunks");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(guided)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("guided");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(guided, 6)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("guided,6");
    ot_check(guided_runs_ok(owner, 6), "guided,6: chunks of at least 6");

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(auto)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("auto");
}

static void combined_loops(void)
{
    reset();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i++)
        body(i);
    coverage("parallel for static");
    ot_check(static_blocks_ok(owner, team), "parallel for static: one block per thread");

    reset();
#pragma omp parallel for schedule(static, 3)
    for (long i = 0; i < N; i++)
        body(i);
    coverage("parallel for static,3");
    ot_check(static_chunks_ok(owner, 3, team), "parallel for static,3: chunks round-robin");

    reset();
#pragma omp parallel for schedule(dynamic, 8)
    for (long i = 0; i < N; i++)
        body(i);
    coverage("parallel for dynamic,8");
    ot_check(dynamic_chunks_ok(owner, 8), "parallel for dynamic,8: whole chunks");

    reset();
#pragma omp parallel for schedule(guided, 2)
    for (long i = 0; i < N; i++)
        body(i);
    coverage("parallel for guided,2");
    ot_check(guided_runs_ok(owner, 2), "parallel for guided,2: chunks of at least 2");

    reset();
#pragma omp parallel for schedule(runtime)
    for (long i = 0; i < N; i++)
        body(i);
    coverage("parallel for runtime");
}

static void runtime_schedule(void)
{
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    static const char *names[] = {"?", "static", "dynamic", "guided", "auto"};
    int k = (int)kind & 0x7fffffff; /* without the monotonic modifier bit */
    printf("OMP_SCHEDULE gives %s,%d\n", k >= 1 && k <= 4 ? names[k] : "?", chunk);

    reset();
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("runtime (OMP_SCHEDULE)");
    if (k == omp_sched_dynamic && chunk > 0)
        ot_check(dynamic_chunks_ok(owner, chunk), "runtime (OMP_SCHEDULE): whole chunks");

    omp_set_schedule(omp_sched_static, 5);
    reset();
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("runtime static,5");
    ot_check(static_chunks_ok(owner, 5, team), "runtime static,5: chunks round-robin");

    omp_set_schedule(omp_sched_guided, 3);
    reset();
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("runtime guided,3");
    ot_check(guided_runs_ok(owner, 3), "runtime guided,3: chunks of at least 3");

    omp_set_schedule(omp_sched_dynamic, 2);
    reset();
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (long i = 0; i < N; i++)
            body(i);
    }
    coverage("runtime dynamic,2");
    ot_check(dynamic_chunks_ok(owner, 2), "runtime dynamic,2: whole chunks");
    omp_set_schedule(kind, chunk);
}

/* Loop forms the ABI has separate entries or arithmetic for. */
static void loop_forms(void)
{
    /* unsigned long long bounds beyond 32 bits: GOMP_loop_ull_* */
    unsigned long long base = 1ull << 40;
    reset();
#pragma omp parallel for schedule(dynamic, 3)
    for (unsigned long long u = base; u < base + N; u++)
        body((long)(u - base));
    coverage("ull dynamic,3");
    reset();
#pragma omp parallel for schedule(static, 4)
    for (unsigned long long u = base; u < base + N; u++)
        body((long)(u - base));
    coverage("ull static,4");
    ot_check(static_chunks_ok(owner, 4, team), "ull static,4: chunks round-robin");
    reset();
#pragma omp parallel for schedule(guided)
    for (unsigned long long u = base; u < base + N; u++)
        body((long)(u - base));
    coverage("ull guided");

    /* negative step */
    reset();
#pragma omp parallel for schedule(dynamic, 2)
    for (long i = N - 1; i >= 0; i -= 3)
        body(i);
    long hit = 0, sum = 0;
    for (int i = 0; i < N; i++) {
        hit += count[i];
        sum += count[i] ? val[i] : 0;
    }
    ot_check(hit == (N + 2) / 3, "step -3: each iteration once");
    printf("step -3: sum %ld\n", sum);

    /* collapse(2) */
    static int grid[30][40];
    memset(grid, 0, sizeof grid);
#pragma omp parallel for collapse(2) schedule(dynamic, 7)
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 40; j++)
            grid[i][j] += i * 100 + j;
    long gs = 0;
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 40; j++)
            gs += grid[i][j];
    printf("collapse(2): sum %ld\n", gs);

    /* nowait loops, then a barrier, then a loop reading the others' values */
    static long a[N], b[N];
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
        for (int i = 0; i < N; i++)
            a[i] = f(i);
#pragma omp for schedule(dynamic, 9) nowait
        for (int i = 0; i < N; i++)
            b[i] = 2 * f(i);
#pragma omp barrier
#pragma omp for schedule(static, 11)
        for (int i = 0; i < N; i++)
            b[i] += a[N - 1 - i];
    }
    printf("nowait loops: digest %016llx\n", (unsigned long long)ot_hash(b, sizeof b));

    /* lastprivate and firstprivate */
    long last = -1, first = 5, fsum = 0;
#pragma omp parallel for schedule(dynamic, 3) lastprivate(last) firstprivate(first)
    for (long i = 0; i < N; i++) {
        last = i * first;
#pragma omp atomic
        fsum += first;
    }
    printf("lastprivate %ld, firstprivate sum %ld\n", last, fsum);

    /* zero-trip loops */
    int ran = 0;
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < 0; i++) {
#pragma omp atomic
        ran++;
    }
#pragma omp parallel for schedule(static)
    for (int i = 5; i < 5; i++) {
#pragma omp atomic
        ran++;
    }
    ot_check(ran == 0, "zero-trip loops run nothing");
}

int main(void)
{
    loops_in_region();
    combined_loops();
    runtime_schedule();
    loop_forms();
    return ot_done();
}
