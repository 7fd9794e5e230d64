/*
 * rt.h - helpers for the OpenMP runtime tests (tests/omp_rt): shared
 * scratch memory that does not depend on the program's globals being
 * shared, and the check/report macros.
 *
 * rt_shared(bytes) must be called by every thread of the team inside a
 * parallel region (it is collective over ranks: one thread of each rank
 * allocates); it returns the same block to every thread.
 */
#ifndef OMP_RT_TEST_H
#define OMP_RT_TEST_H

#include <omp.h>
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static void *rt_shared_block;

/* Collective over the team: one thread of each rank calls sdsm_alloc. */
static void *rt_shared(size_t bytes)
{
    int per_rank = sdsm_thread_count() / sdsm_nprocs();
    if (omp_get_thread_num() % per_rank == 0)
        rt_shared_block = sdsm_alloc(bytes, SDSM_HOME_BLOCK);
#pragma omp barrier
    return rt_shared_block;
}

#endif
