/*
 * unsupported.c - the libgomp entry points of constructs sdsm does not run
 * (doacross loops, target and teams, task reductions, scope with
 * reductions).  They exist so that every program gcc compiles links; a
 * call stops the job with a message naming the construct, the rank and
 * the thread, never a wrong answer.
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "omp_rt.h"
#include "sdsm.h"

#define UNSUP(sym, construct)                                                                                \
    void sym(void);                                                                                          \
    void sym(void) { rt_fatal(construct, "not supported on sdsm (the program calls " #sym ")"); }

#define DOACROSS "ordered(n) with depend(sink/source) (doacross loop)"
UNSUP(GOMP_doacross_post, DOACROSS)
UNSUP(GOMP_doacross_wait, DOACROSS)
UNSUP(GOMP_doacross_ull_post, DOACROSS)
UNSUP(GOMP_doacross_ull_wait, DOACROSS)
UNSUP(GOMP_loop_doacross_start, DOACROSS)
UNSUP(GOMP_loop_doacross_static_start, DOACROSS)
UNSUP(GOMP_loop_doacross_dynamic_start, DOACROSS)
UNSUP(GOMP_loop_doacross_guided_start, DOACROSS)
UNSUP(GOMP_loop_doacross_runtime_start, DOACROSS)
UNSUP(GOMP_loop_ull_doacross_start, DOACROSS)
UNSUP(GOMP_loop_ull_doacross_static_start, DOACROSS)
UNSUP(GOMP_loop_ull_doacross_dynamic_start, DOACROSS)
UNSUP(GOMP_loop_ull_doacross_guided_start, DOACROSS)
UNSUP(GOMP_loop_ull_doacross_runtime_start, DOACROSS)

UNSUP(GOMP_target, "target")
UNSUP(GOMP_target_ext, "target")
UNSUP(GOMP_target_data, "target data")
UNSUP(GOMP_target_data_ext, "target data")
UNSUP(GOMP_target_end_data, "target data")
UNSUP(GOMP_target_update, "target update")
UNSUP(GOMP_target_update_ext, "target update")
UNSUP(GOMP_target_enter_exit_data, "target enter/exit data")
UNSUP(GOMP_teams, "teams")
UNSUP(GOMP_teams4, "teams")
UNSUP(GOMP_teams_reg, "teams")

#define TASKRED "task reductions (reduction(task, ...), in_reduction, task_reduction)"
UNSUP(GOMP_parallel_reductions, TASKRED)
UNSUP(GOMP_taskgroup_reduction_register, TASKRED)
UNSUP(GOMP_taskgroup_reduction_unregister, TASKRED)
UNSUP(GOMP_task_reduction_remap, TASKRED)
UNSUP(GOMP_workshare_task_reduction_unregister, TASKRED)
UNSUP(GOMP_scope_start, "scope with reductions")

/* Offload images register at start-up, before any region: nothing to
 * offload to, so registering is harmless and a later target region stops. */
void GOMP_offload_register_ver(unsigned version, const void *host_table, int device_type,
                               const void *target_data)
{
    (void)version, (void)host_table, (void)device_type, (void)target_data;
}
void GOMP_offload_unregister_ver(unsigned version, const void *host_table, int device_type,
                                 const void *target_data)
{
    (void)version, (void)host_table, (void)device_type, (void)target_data;
}

/* allocate directive: shared memory, as omp_alloc (api.c). */
void *GOMP_alloc(size_t alignment, size_t size, uintptr_t allocator)
{
    return omp_aligned_alloc(alignment, size, (omp_allocator_handle_t)allocator);
}

void GOMP_free(void *ptr, uintptr_t allocator) { omp_free(ptr, (omp_allocator_handle_t)allocator); }
