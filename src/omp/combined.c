/*
 * combined.c - the combined constructs, parallel loops and parallel
 * sections (GOMP_parallel_loop_*, GOMP_parallel_sections*): a parallel
 * region (team.c) whose threads each enter the loop or the sections
 * (loop.c's rt_prews_enter) before they run the outlined function.  Here,
 * above both, so that team.c calls loop.c and never the other way.
 */
#include <stdint.h>

#include "omp_rt.h"
#include "sdsm.h"

/* --- combined parallel loops ------------------------------------------- */

#define PAR_LOOP(name, kind)                                                                                 \
    void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned num_threads, long start,         \
                                   long end, long incr, long chunk, unsigned flags)                          \
    {                                                                                                        \
        (void)flags;                                                                                         \
        rt_prews_t p = rt_prews_loop(kind, start, end, incr, chunk);                                         \
        rt_parallel(fn, data, num_threads, &p, "parallel for");                                              \
    }
#define PAR_LOOP_RT(name)                                                                                    \
    void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned num_threads, long start,         \
                                   long end, long incr, unsigned flags)                                      \
    {                                                                                                        \
        (void)flags;                                                                                         \
        rt_prews_t p = rt_prews_loop(RT_SCHED_RUNTIME, start, end, incr, 0);                                 \
        rt_parallel(fn, data, num_threads, &p, "parallel for");                                              \
    }
#define PAR_LOOP_START(name, kind)                                                                           \
    void GOMP_parallel_loop_##name##_start(void (*fn)(void *), void *data, unsigned num_threads, long start, \
                                           long end, long incr, long chunk)                                  \
    {                                                                                                        \
        rt_prews_t p = rt_prews_loop(kind, start, end, incr, chunk);                                         \
        rt_parallel_start(fn, data, num_threads, &p, "parallel for");                                        \
    }

PAR_LOOP(static, RT_SCHED_STATIC)
PAR_LOOP(dynamic, RT_SCHED_DYNAMIC)
PAR_LOOP(guided, RT_SCHED_GUIDED)
PAR_LOOP(nonmonotonic_dynamic, RT_SCHED_DYNAMIC)
PAR_LOOP(nonmonotonic_guided, RT_SCHED_GUIDED)
PAR_LOOP_RT(runtime)
PAR_LOOP_RT(nonmonotonic_runtime)
PAR_LOOP_RT(maybe_nonmonotonic_runtime)
PAR_LOOP_START(static, RT_SCHED_STATIC)
PAR_LOOP_START(dynamic, RT_SCHED_DYNAMIC)
PAR_LOOP_START(guided, RT_SCHED_GUIDED)

void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned num_threads, long start,
                                      long end, long incr)
{
    rt_prews_t p = rt_prews_loop(RT_SCHED_RUNTIME, start, end, incr, 0);
    rt_parallel_start(fn, data, num_threads, &p, "parallel for");
}

/* --- combined parallel sections --------------------------------------- */

void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned num_threads, unsigned count,
                            unsigned flags)
{
    (void)flags;
    rt_prews_t p = {.kind = -1, .end = count};
    rt_parallel(fn, data, num_threads, &p, "parallel sections");
}

void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned num_threads, unsigned count)
{
    rt_prews_t p = {.kind = -1, .end = count};
    rt_parallel_start(fn, data, num_threads, &p, "parallel sections");
}
