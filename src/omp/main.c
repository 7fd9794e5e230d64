/*
 * main.c - the program's start and end.  Each rank's original thread boots
 * the job, allocates the control block, starts the rank's compute threads
 * (the OpenMP team), joins them, finalizes and exits with the program's
 * status.  Rank 0's first compute thread is the master: it runs main, on
 * the shared master stack when the memory side provides one.
 *
 * exit() called by the master outside a parallel region ends the job
 * cleanly: an on_exit handler (which runs on the master) records the status
 * and jumps back to where the master started main, as if main had
 * returned; the master then releases the other threads and every rank
 * finalizes.  exit() anywhere else (a worker, or inside a region) cannot be
 * made collective and stops the job with a message.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

static int (*prog_main)(int, char **, char **);
static int prog_argc;
static char **prog_argv, **prog_envp;
static volatile int prog_status;
static ucontext_t master_back;      /* where the master resumes after main */
static volatile int master_in_main; /* main (or its exit) not yet over */
static volatile int finishing;      /* the original thread is exiting */

static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    if (finishing)
        return;
    if (rt_is_compute && sdsm_thread_id() == 0 && master_in_main && rt_me.level == 0) {
        prog_status = status;
        master_in_main = 0;
        setcontext(&master_back); /* back to run_master, as if main returned */
    }
    if (rt_is_compute && rt_me.level > 0)
        rt_fatal("exit",
                 "exit(%d) called inside a parallel region: only the master thread, "
                 "outside parallel regions, can end an OpenMP program on sdsm",
                 status);
    rt_fatal("exit",
             "exit(%d) called by a thread other than the master (OpenMP thread 0, "
             "which runs main)",
             status);
}

static void main_trampoline(void)
{
    prog_status = prog_main(prog_argc, prog_argv, prog_envp);
    master_in_main = 0;
    /* returns to uc_link: master_back */
}

static void run_master(void)
{
    size_t len = 0;
    void *stack = sdsm_omp_master_stack(&len);
    static ucontext_t main_ctx;
    master_in_main = 1;
    if (getcontext(&master_back))
        rt_fatal("start", "getcontext failed");
    if (master_in_main) {
        if (stack) {
            if (getcontext(&main_ctx))
                rt_fatal("start", "getcontext failed");
            main_ctx.uc_stack.ss_sp = stack;
            main_ctx.uc_stack.ss_size = len;
            main_ctx.uc_link = &master_back;
            makecontext(&main_ctx, main_trampoline, 0);
            setcontext(&main_ctx);
            rt_fatal("start", "setcontext to the master stack failed");
        }
        main_trampoline();
    }
}

int sdsm__omp_my_tls(uintptr_t *lo, uintptr_t *hi);

static void *team_thread(void *arg)
{
    (void)arg;
    rt_is_compute = 1;
    rt_thread_init(1, 0);
    if (sdsm_thread_id() == 0) {
        uintptr_t tls[2] = {0, 0}; /* the workers learn it at the first region (team.c) */
        if (!sdsm__omp_my_tls(&tls[0], &tls[1]))
            memcpy(rt_ctl->master_tls, tls, sizeof tls);
        run_master();
        if (pt_mode)
            pt_finish(prog_status);
        else
            rt_release_workers(RT_EXIT, prog_status);
    } else if (pt_mode) {
        pt_worker_loop();
    } else {
        rt_worker_loop();
    }
    return NULL;
}

/*
 * Rank 0's first thread, the master, starts on a stack in shared memory
 * (mem.c), where the C library also puts its TLS: gcc's copyin makes every
 * thread read the master's threadprivate variables at the master's
 * addresses, and copyprivate of a threadprivate variable hands those
 * addresses to the team.  Private TLS made rank 1 die of a SIGSEGV there,
 * or read its own thread's zeros at the same address.
 */
static void start_thread(sdsm_thread_t *t, int k)
{
    size_t len = 0;
    void *stack = sdsm_omp_master_thread_stack(&len);
    if (sdsm_rank() == 0 && k == 0 && stack)
        rt_check(sdsm__omp_thread_create(t, team_thread, NULL, stack, len), "sdsm_thread_create");
    else
        rt_check(sdsm_thread_create(t, 0, team_thread, NULL), "sdsm_thread_create");
}

int sdsm_omp_main(int argc, char **argv, char **envp, int (*real_main)(int, char **, char **))
{
    rt_env_threads();
    sdsm_omp_boot(&argc, &argv);
    int threads = sdsm_thread_count() / sdsm_nprocs();
    if (!pt_mode) /* OMP_NUM_THREADS says nothing to a pthreads program */
        rt_env_check_team(sdsm_nprocs(), threads);
    rt_env_read();
    rt_team_size = sdsm_thread_count();
    prog_main = real_main;
    prog_argc = argc;
    prog_argv = argv;
    prog_envp = envp;
    rt_ctl = sdsm_alloc(sizeof *rt_ctl, 0);
    rt_held = sdsm_alloc(RT_USER_LOCKS, SDSM_HOME_BLOCK);
    if (!rt_ctl || !rt_held)
        rt_fatal("start", "cannot allocate the control block: %s", sdsm_strerror(sdsm_last_error()));
    if (pt_mode)
        pt_start();
    on_exit(on_exit_handler, NULL);

    sdsm_thread_t t[threads];
    for (int k = 0; k < threads; k++)
        start_thread(&t[k], k);
    for (int k = 0; k < threads; k++)
        rt_check(sdsm_thread_join(t[k], NULL), "sdsm_thread_join");
    /* Every rank ends with the status the master's main gave. */
    int status = sdsm_rank() == 0 ? prog_status : rt_exit_status;
    finishing = 1;
    sdsm_omp_fence_stop();
    sdsm_finalize();
    return status;
}
