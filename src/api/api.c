/*
 * api.c - the public API entry points and the order in which the layers
 * are brought up and down.  This file is the composition root: the only
 * one that sees every layer.  Each entry point checks its arguments and the
 * runtime state, and reports misuse through one function (report) that
 * either stops the job or returns the code, per SDSM_ERRORS.
 */
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "core/coll.h"
#include "core/config.h"
#include "core/fatal.h"
#include "core/status.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/wait.h"
#include "mem/alloc.h"
#include "mem/fault.h"
#include "mem/page.h"
#include "mem/wptrack.h"
#include "net/net.h"
#include "proto/home.h"
#include "proto/proto.h"
#include "proto/zcopy.h"
#include "sdsm.h"
#include "sync/quiet.h"
#include "sync/sync.h"
#include "sync/watch.h"
#include "thread/sched.h"
#include "thread/thread.h"

extern char **environ;

enum { ST_NEW, ST_RUNNING, ST_DONE };
static int state = ST_NEW;
static sdsm_boot_t boot;

/* Statistics gathered at rank 0 during finalize (service thread writes). */
static sdsm_stats_snap_t *snaps;
static _Atomic uint32_t snaps_in;

void sdsm_abort(int code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt ? fmt : "", ap);
    va_end(ap);
    char what[32];
    snprintf(what, sizeof what, "sdsm_abort(%d)", code);
    sdsm_stop_job(code, what, msg);
}

/* Per thread, like errno: the code of this thread's last failed call. */
static _Thread_local int last_error;

int sdsm_last_error(void) { return last_error; }

/* The error handler (SDSM_ERRORS): stop the job, or note text and return code. */
static int fail(const char *call, int code, const char *text)
{
    last_error = code;
    if (sdsm_cfg.errors == SDSM_ERRMODE_RETURN) {
        sdsm_info("%s: %s", call, text);
        return code;
    }
    sdsm_stop_job(1, call, text);
}

/* A call failed: the message, then what the code means in parentheses. */
static int report(const char *call, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int report(const char *call, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char full[1200];
    code = sdsm_status_public(code); /* what the program sees: an SDSM_E* code */
    snprintf(full, sizeof full, "%s (%s)", msg, sdsm_strerror(code));
    return fail(call, code, full);
}

/* A compute thread that gave its run slot up while the call waited takes
 * one again when the call returns (no runtime lock is held there). */
static void resume_at_return(int *unused)
{
    (void)unused;
    sdsm_wait_resume();
}
#define RESUME_AT_RETURN int resume_guard_ __attribute__((cleanup(resume_at_return), unused)) = 0

#define REQUIRE_RUNNING(call)                                                                                \
    if (state != ST_RUNNING)                                                                                 \
        return report(call, SDSM_ENOINIT, "called %s sdsm_init",                                             \
                      state == ST_NEW ? "before" : "after sdsm_finalize, not within");                       \
    RESUME_AT_RETURN

static void warn_cb(const char *m) { sdsm_warn("%s", m); }

/* Why ranks' addresses differ (sdsm_init's check), or "" when they agree. */
static char addr_mismatch[768];

static int first_object(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    *(uint64_t *)out = (uint64_t)info->dlpi_addr;
    return 1; /* the main program comes first */
}

/*
 * Programs written for TreadMarks, JIAJIA or PARMACS hand private pointers
 * (globals, functions, the C library's stdout) from one rank to another;
 * that is only right if every rank has the program and its libraries at
 * the same addresses.  One round trip to rank 0, which compares them; a
 * difference is not an error until something relies on it (a job launched
 * by srun may have address randomization on and never need it).
 */
static int check_addresses(void)
{
    uint64_t prog = 0;
    dl_iterate_phdr(first_object, &prog);
    uint64_t lib = (uint64_t)(uintptr_t)&sdsm_init ^ ((uint64_t)(uintptr_t)sdsm_region.app >> 12);
    uint32_t digest = (uint32_t)(lib ^ (lib >> 32));
    sdsm_coll_begin(SDSM_COLL_INIT, 0, 0, 0);
    int rc = sdsm_alloc_agree_addrs(prog, (uint64_t)(uintptr_t)stdout, digest, addr_mismatch,
                                    sizeof addr_mismatch);
    if (rc == SDSM_EMISMATCH)
        sdsm_info("sdsm_init: %s", addr_mismatch);
    else if (rc)
        addr_mismatch[0] = '\0';
    return rc == SDSM_EMISMATCH ? 0 : rc;
}

static int on_stats(int src, const sdsm_hdr_t *h, const uint8_t *p)
{
    if (!snaps || h->len != sizeof(sdsm_stats_snap_t) || src == 0)
        return SDSM_EPROTO;
    memcpy(&snaps[src], p, sizeof snaps[src]);
    atomic_fetch_add(&snaps_in, 1);
    sdsm_wake_all(&snaps_in);
    return 0;
}

/* The runtime's parts over the reserved region: statistics, protocol,
 * allocation, synchronization, zero-copy, written-page tracking.  0, or
 * the first part's failure. */
static int init_runtime(void)
{
    int rc;
    snaps = boot.rank == 0 ? calloc((size_t)boot.nprocs, sizeof *snaps) : NULL;
    sdsm_msg_set_handler(SDSM_MSG_STATS, on_stats);
    if ((rc = sdsm_proto_select((int)sdsm_cfg.protocol)) || (rc = sdsm_alloc_init()) ||
        (rc = sdsm_sync_init(boot.host_of)) || (rc = sdsm_zcopy_init(boot.same_host)) ||
        (rc = sdsm_cfg.home_hot != 0 && sdsm_cfg.protocol != SDSM_PROTO_IBEC && !sdsm_region.host_shared
                  ? sdsm_wpt_init()
                  : 0))
        return rc;
    if (sdsm_cfg.home_hot < 0) /* auto: hot home pages where the kernel tells which were written */
        sdsm_cfg.home_hot = sdsm_wpt_on() ? 3 : 0;
    return 0;
}

int sdsm_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[256];
    if (state != ST_NEW)
        return report("sdsm_init", SDSM_ESTATE, "called twice");
    sdsm_fatal_notify(sdsm_boot_abort, sdsm_boot_lost);  /* the launcher hears why a rank stops */
    sdsm_log_rank = (int)sdsm_config_peek_rank(environ); /* so even a bad variable names the rank */
    if (sdsm_config_load(&sdsm_cfg, environ, err, sizeof err, NULL))
        return report("sdsm_init", SDSM_EINVAL, "%s", err);
    sdsm_log_rank = sdsm_cfg.rank < 0 ? 0 : (int)sdsm_cfg.rank;
    sdsm_coll_reset();
    int rc = sdsm_boot_start(&boot);
    if (rc)
        return report("sdsm_init", rc, "could not set up the job");
    if (boot.rank == 0) /* once per job, not once per rank */
        sdsm_config_check_names(environ, warn_cb);
    uintptr_t base = sdsm_cfg.heap_base;
    if (sdsm_region_adopt.len) { /* an OpenMP program's data opens the region (omp.c) */
        if (sdsm_cfg.page_size != 4096)
            return report("sdsm_init", SDSM_EINVAL,
                          "SDSM_PAGE_SIZE=%zu: an OpenMP program's "
                          "globals share pages of 4096 bytes, the page size it needs",
                          sdsm_cfg.page_size);
        base = sdsm_region_adopt.start;
    }
    int host = boot.local_nprocs == boot.nprocs && sdsm_cfg.host_share;
    sdsm_region_host_tail = host ? sdsm_hostbar_bytes(boot.nprocs) : 0;
    if (host && boot.rank > 0 && (rc = sdsm_boot_share_fd(&boot, &sdsm_region_host_fd)))
        return report("sdsm_init", rc, "could not map rank 0's shared memory");
    if (sdsm_region_init(sdsm_cfg.heap_size, sdsm_cfg.page_size, base, boot.rank, boot.nprocs))
        return report("sdsm_init", SDSM_ENOMEM, "could not reserve the shared region");
    if (host && boot.rank == 0) {
        if ((rc = sdsm_boot_share_fd(&boot, &sdsm_region.memfd)))
            return report("sdsm_init", rc, "could not share the memory with the ranks of this host");
        sdsm_region.host_shared = 1;
    }
    /* Where each rank keeps a copy, the tree barrier's host stage (sync/hoststage.c). */
    if (!host && sdsm_cfg.barrier_shm && sdsm_cfg.barrier_kind != SDSM_BARRIER_CENTRAL &&
        (rc = sdsm_boot_stage_fd(&boot, sdsm_stage_bytes(boot.local_nprocs), &sdsm_stage_fd)))
        return report("sdsm_init", rc, "could not share the barrier's block with the ranks of this host");
    sdsm_stats_header_note =
        host ? "one copy of the memory for this host, no page moves: SDSM_HOST_SHARE=0 runs "
               "the protocol"
             : NULL;
    if ((rc = init_runtime()))
        return report("sdsm_init", SDSM_ENOMEM, "could not initialize the runtime: %s",
                      sdsm_strerror(sdsm_status_public(rc)));
    sdsm_net_setup_t ns = {.rank = boot.rank,
                           .nprocs = boot.nprocs,
                           .peer_fds = boot.peer_fds,
                           .listen_fd = boot.listen_fd,
                           .ctrl_fd = boot.ctrl_fd,
                           .page_size = sdsm_cfg.page_size,
                           .same_host = boot.same_host,
                           .local_nprocs = boot.local_nprocs,
                           .cpu_sharers = boot.cpu_sharers};
    if (sdsm_cfg.trace_dir) /* before the service thread, so it is traced from its start */
        sdsm_trace_init(sdsm_cfg.trace_dir, boot.rank, boot.nprocs, sdsm_cfg.trace_interval_ms,
                        sdsm_cfg.trace_buffer, sdsm_msg_name);
    if (sdsm_net_start(&ns))
        return report("sdsm_init", SDSM_ESYS, "could not start the service thread");
    sdsm_zcopy_announce();
    if (sdsm_fault_install(sdsm_proto->fault))
        return report("sdsm_init", SDSM_ESYS, "could not install the fault handler");
    sdsm_thread_init(boot.rank, boot.nprocs, (int)sdsm_cfg.threads, (int)sdsm_cfg.run_threads,
                     boot.cpu_sharers);
    sdsm_watch_start();
    sdsm_quiet_start();
    addr_mismatch[0] = '\0';
    if ((rc = check_addresses()))
        return report("sdsm_init", rc, "could not compare the ranks' addresses");
    state = ST_RUNNING;
    return 0;
}

int sdsm_check_addresses(void)
{
    REQUIRE_RUNNING("sdsm_check_addresses");
    /* Not SDSM_EMISMATCH's meaning (different arguments to a collective
     * call): the message says why the addresses differ. */
    return addr_mismatch[0] ? fail("sdsm_check_addresses", SDSM_EMISMATCH, addr_mismatch) : 0;
}

static void print_stats(void)
{
    if (boot.rank != 0) {
        sdsm_stats_snap_t s;
        sdsm_stats_snapshot(&s);
        sdsm_net_send(0, SDSM_MSG_STATS, 0, 0, &s, sizeof s, NULL, 0);
        return;
    }
    sdsm_stats_snapshot(&snaps[0]); /* as the others: before their snapshots arrive */
    uint32_t v;
    while ((v = atomic_load(&snaps_in)) < (uint32_t)boot.nprocs - 1)
        sdsm_wait_change(&snaps_in, v);
    fflush(stdout);
    sdsm_stats_print(stderr, snaps, boot.nprocs, sdsm_msg_name, (sdsm_stats_mode_t)sdsm_cfg.stats);
}

/*
 * A lock still held at finalize would leave any rank waiting for it waiting
 * forever (its holder never releases it, and the waiter never reaches the
 * final barrier): report it here, where the cause is, and in return mode
 * release the locks so the job can still end.
 */
static int check_locks_at_finalize(void)
{
    char ids[256];
    int n = sdsm_lock_held_list(ids, sizeof ids);
    if (!n)
        return 0;
    int rc = report("sdsm_finalize", SDSM_ESTATE,
                    "lock%s %s still held by this rank: release %s "
                    "before sdsm_finalize (another rank waiting for %s would wait forever)",
                    n > 1 ? "s" : "", ids, n > 1 ? "them" : "it", n > 1 ? "them" : "it");
    sdsm_lock_release_all();
    return rc;
}

int sdsm_finalize(void)
{
    REQUIRE_RUNNING("sdsm_finalize");
    char terr[512];
    if (sdsm_thread_is_compute())
        return report("sdsm_finalize", SDSM_ESTATE,
                      "called from a compute thread: call it from "
                      "the thread that called sdsm_init, after joining the compute threads");
    int rc = sdsm_thread_check_finalize(terr, sizeof terr);
    if (rc)
        return report("sdsm_finalize", rc, "%s", terr);
    rc = check_locks_at_finalize();
    sdsm_quiet_stop();
    sdsm_coll_begin(SDSM_COLL_FINALIZE, 0, 0, 0);
    sdsm_barrier_run();
    sdsm_trace_stop(); /* its last sample is the statistics' snapshot */
    if (sdsm_cfg.stats)
        print_stats();
    sdsm_watch_stop();
    sdsm_net_shutdown();
    sdsm_trace_fini(); /* the service thread has stopped recording */
    sdsm_fault_uninstall();
    sdsm_boot_done();
    sdsm_boot_close(&boot);
    sdsm_alloc_fini();
    sdsm_zcopy_fini();
    sdsm_hostbar_fini();
    sdsm_stage_fini();
    sdsm_topo_fini();
    sdsm_wpt_shutdown();
    sdsm_region_fini();
    state = ST_DONE;
    return rc;
}

/* After finalize the answers stay true, so code printing results after
 * sdsm_finalize ("if rank 0, print") keeps working. */
int sdsm_rank(void) { return state != ST_NEW ? boot.rank : 0; }
int sdsm_nprocs(void) { return state != ST_NEW ? boot.nprocs : 1; }
double sdsm_wtime(void) { return (double)sdsm_now_ns() * 1e-9; }

void *sdsm_alloc(size_t size, int home)
{
    if (state != ST_RUNNING) {
        report("sdsm_alloc", SDSM_ENOINIT, "called outside sdsm_init/sdsm_finalize");
        return NULL;
    }
    RESUME_AT_RETURN;
    char why[600];
    int err = 0;
    sdsm_coll_begin(SDSM_COLL_ALLOC, size, 1, (uint64_t)(int64_t)home);
    void *p = sdsm_alloc_collective(size, 1, home, &err, why, sizeof why);
    if (!p)
        report("sdsm_alloc", err, "%s", why);
    return p;
}

void *sdsm_calloc(size_t n, size_t elem_size, int home)
{
    if (state != ST_RUNNING) {
        report("sdsm_calloc", SDSM_ENOINIT, "called outside sdsm_init/sdsm_finalize");
        return NULL;
    }
    RESUME_AT_RETURN;
    char why[600];
    int err = 0;
    size_t size;
    int overflow = __builtin_mul_overflow(n, elem_size, &size);
    /* An overflow still takes part in the collective (so a rank alone in
     * error cannot hang the others), as a size every rank rejects. */
    if (overflow)
        size = SIZE_MAX;
    sdsm_coll_begin(SDSM_COLL_ALLOC, size, elem_size ? elem_size : 1, (uint64_t)(int64_t)home);
    void *p = sdsm_alloc_collective(size, elem_size ? elem_size : 1, home, &err, why, sizeof why);
    if (!p && overflow && err == SDSM_EINVAL)
        report("sdsm_calloc", err, "n %zu x elem_size %zu overflows size_t", n, elem_size);
    else if (!p)
        report("sdsm_calloc", err, "n %zu x elem_size %zu: %s", n, elem_size, why);
    return p; /* fresh address space is zero */
}

int sdsm_free(void *ptr)
{
    REQUIRE_RUNNING("sdsm_free");
    char why[600];
    sdsm_coll_begin(SDSM_COLL_FREE, (uint64_t)(uintptr_t)ptr, 0, 0);
    sdsm_barrier_run(); /* nobody may still be using the block */
    int rc = sdsm_free_collective(ptr, why, sizeof why);
    return rc ? report("sdsm_free", rc, "%s", why) : 0;
}

void *sdsm_alloc_local(size_t size)
{
    if (state != ST_RUNNING) {
        report("sdsm_alloc_local", SDSM_ENOINIT, "called outside sdsm_init/sdsm_finalize");
        return NULL;
    }
    RESUME_AT_RETURN;
    char why[600];
    int err = 0;
    void *p = sdsm_alloc_local_block(size, &err, why, sizeof why);
    if (!p)
        report("sdsm_alloc_local", err, "%s", why);
    return p;
}

int sdsm_free_local(void *ptr)
{
    REQUIRE_RUNNING("sdsm_free_local");
    char why[600];
    int rc = sdsm_free_local_block(ptr, why, sizeof why);
    return rc ? report("sdsm_free_local", rc, "%s", why) : 0;
}

/*
 * Private bytes travel through a temporary shared block homed at root:
 * root copies them in, a barrier publishes them, everyone copies them out,
 * and the free's barrier keeps root from reusing the block too early.  The
 * allocation's agreement checks len and root on every rank.
 */
int sdsm_distribute(void *ptr, size_t len, int root)
{
    REQUIRE_RUNNING("sdsm_distribute");
    uint32_t pg;
    if (root < 0 || root >= boot.nprocs)
        return report("sdsm_distribute", SDSM_EINVAL, "root %d is not a rank below %d", root, boot.nprocs);
    if (len && (!ptr || sdsm_region_page_of(ptr, &pg)))
        return report("sdsm_distribute", SDSM_EINVAL, "%p is %s: use sdsm_bcast for shared memory", ptr,
                      ptr ? "in the shared region" : "NULL");
    if (addr_mismatch[0])
        return fail("sdsm_distribute", SDSM_EMISMATCH, addr_mismatch);
    if (len == 0)
        return sdsm_barrier();
    uint8_t *tmp = sdsm_alloc(len, root);
    if (!tmp)
        return sdsm_last_error();
    if (boot.rank == root)
        memcpy(tmp, ptr, len);
    int rc = sdsm_barrier();
    if (!rc && boot.rank != root)
        memcpy(ptr, tmp, len);
    int rc2 = sdsm_free(tmp);
    return rc ? rc : rc2;
}

int sdsm_home_of(const void *addr)
{
    REQUIRE_RUNNING("sdsm_home_of");
    uint32_t pg;
    if (!sdsm_region_page_of(addr, &pg) || !sdsm_alloc_find(pg))
        return report("sdsm_home_of", SDSM_EINVAL, "%p is not in a live shared block", addr);
    sdsm_page_lock(pg); /* a claim being decided writes the home under it */
    int h = sdsm_page_home(pg);
    sdsm_page_unlock(pg);
    if (h >= 0)
        return h;
    if (sdsm_region.host_shared) /* one copy for the host: nobody claims pages */
        return SDSM_ENOHOME;
    /* First touch: the manager knows; ask it without claiming. */
    return sdsm_proto_home_query(pg);
}

static int rank_barrier(void)
{
    sdsm_coll_begin(SDSM_COLL_BARRIER, sdsm_cfg.barrier_manager % (uint64_t)boot.nprocs, 0, 0);
    return sdsm_status_public(sdsm_barrier_run());
}

int sdsm_barrier(void)
{
    REQUIRE_RUNNING("sdsm_barrier");
    char err[512];
    if (sdsm_thread_is_compute()) {
        int rc = sdsm_thread_barrier(rank_barrier, err, sizeof err);
        return rc ? report("sdsm_barrier", rc, "%s", err) : 0;
    }
    int alive = sdsm_thread_alive();
    if (alive > 0)
        return report("sdsm_barrier", SDSM_ESTATE,
                      "called from a thread that is not a compute "
                      "thread while %d compute thread%s of rank %d run%s: with compute threads, "
                      "every compute thread calls sdsm_barrier and no other thread does",
                      alive, alive == 1 ? "" : "s", boot.rank, alive == 1 ? "s" : "");
    return rank_barrier();
}

static int thread_create(sdsm_thread_t *t, int group, void *(*fn)(void *), void *arg, void *stack,
                         size_t stack_len)
{
    char err[512];
    int h = -1, rc = sdsm_thread_start(&h, group, fn, arg, stack, stack_len, err, sizeof err);
    if (rc)
        return report("sdsm_thread_create", rc, "%s", err);
    *t = (sdsm_thread_t)h;
    return 0;
}

int sdsm_thread_create(sdsm_thread_t *t, int group, void *(*fn)(void *), void *arg)
{
    REQUIRE_RUNNING("sdsm_thread_create");
    return thread_create(t, group, fn, arg, NULL, 0);
}

/*
 * For libsdsm-omp only (not in sdsm.h): sdsm_thread_create on the caller's
 * [stack, stack + len), where the C library also puts the thread's TLS.  The
 * OpenMP master runs on shared memory there, so that the other ranks can
 * read its threadprivate variables (copyin, copyprivate) by address.
 */
SDSM_API int sdsm__omp_thread_create(sdsm_thread_t *t, void *(*fn)(void *), void *arg, void *stack,
                                     size_t len);
SDSM_API int sdsm__omp_thread_create(sdsm_thread_t *t, void *(*fn)(void *), void *arg, void *stack,
                                     size_t len)
{
    REQUIRE_RUNNING("sdsm_thread_create");
    if (!stack || len == 0)
        return report("sdsm_thread_create", SDSM_EINVAL, "no stack given");
    return thread_create(t, 0, fn, arg, stack, len);
}

int sdsm_thread_join(sdsm_thread_t t, void **ret)
{
    REQUIRE_RUNNING("sdsm_thread_join");
    char err[512];
    int rc = sdsm_thread_wait((int)t, ret, err, sizeof err);
    return rc ? report("sdsm_thread_join", rc, "%s", err) : 0;
}

int sdsm_thread_id(void)
{
    REQUIRE_RUNNING("sdsm_thread_id");
    char err[512];
    int id = sdsm_thread_self_id(err, sizeof err);
    return id < 0 ? report("sdsm_thread_id", id, "%s", err) : id;
}

int sdsm_thread_count(void)
{
    if (state == ST_NEW)
        return report("sdsm_thread_count", SDSM_ENOINIT, "called before sdsm_init");
    return sdsm_thread_total();
}

int sdsm_group_barrier(int group)
{
    REQUIRE_RUNNING("sdsm_group_barrier");
    char err[512];
    int rc = sdsm_thread_group_barrier(group, err, sizeof err);
    return rc ? report("sdsm_group_barrier", rc, "%s", err) : 0;
}

int sdsm_comp_wait(void)
{
    REQUIRE_RUNNING("sdsm_comp_wait");
    if (!sdsm_thread_is_compute())
        return report("sdsm_comp_wait", SDSM_ESTATE, "called from a thread that is not a compute thread");
    sdsm_sched_comp_wait();
    return 0;
}

int sdsm_lock(int id)
{
    REQUIRE_RUNNING("sdsm_lock");
    if (id < 0)
        return report("sdsm_lock", SDSM_EINVAL, "lock id %d is negative", id);
    if (sdsm_lock_held(id))
        return report("sdsm_lock", SDSM_EHELD, "lock %d is already held by this thread", id);
    return sdsm_status_public(sdsm_lock_acquire(id));
}

int sdsm_unlock(int id)
{
    REQUIRE_RUNNING("sdsm_unlock");
    if (id < 0)
        return report("sdsm_unlock", SDSM_EINVAL, "lock id %d is negative", id);
    if (!sdsm_lock_held(id))
        return report("sdsm_unlock", SDSM_ENOTHELD, "lock %d is not held by this thread", id);
    int rc = sdsm_lock_release(id, 1);
    sdsm_sched_spin_point();
    return sdsm_status_public(rc);
}

int sdsm_cond_wait(int cond, int lock)
{
    REQUIRE_RUNNING("sdsm_cond_wait");
    if (cond < 0 || lock < 0)
        return report("sdsm_cond_wait", SDSM_EINVAL, "negative id (cond %d, lock %d)", cond, lock);
    if (!sdsm_lock_held(lock))
        return report("sdsm_cond_wait", SDSM_ENOTHELD, "lock %d is not held by this thread", lock);
    return sdsm_status_public(sdsm_cond_wait_run(cond, lock));
}

int sdsm_cond_signal(int cond)
{
    REQUIRE_RUNNING("sdsm_cond_signal");
    if (cond < 0)
        return report("sdsm_cond_signal", SDSM_EINVAL, "cond id %d is negative", cond);
    return sdsm_status_public(sdsm_cond_signal_run(cond, 0));
}

int sdsm_cond_broadcast(int cond)
{
    REQUIRE_RUNNING("sdsm_cond_broadcast");
    if (cond < 0)
        return report("sdsm_cond_broadcast", SDSM_EINVAL, "cond id %d is negative", cond);
    return sdsm_status_public(sdsm_cond_signal_run(cond, 1));
}

/* Pages covering [addr, addr + len), all in live blocks.  0 or SDSM_EINVAL. */
static int range_pages(const void *addr, size_t len, uint32_t *first, uint32_t *count)
{
    uint32_t a, b;
    /* len is checked against the room left in the region before addr + len
     * is formed: a huge len would wrap around back into the region. */
    if (len == 0 || !sdsm_region_page_of(addr, &a) ||
        len > sdsm_region.size - (size_t)((const uint8_t *)addr - sdsm_region.app) ||
        !sdsm_region_page_of((const uint8_t *)addr + len - 1, &b))
        return SDSM_EINVAL;
    for (uint32_t pg = a; pg <= b;) {
        const sdsm_alloc_rec_t *r = sdsm_alloc_find(pg);
        if (!r)
            return SDSM_EINVAL;
        pg = r->first + r->npages;
    }
    *first = a;
    *count = b - a + 1;
    return 0;
}

int sdsm_set_home(void *addr, size_t len, int rank)
{
    REQUIRE_RUNNING("sdsm_set_home");
    uint32_t first, count;
    if (range_pages(addr, len, &first, &count))
        return report("sdsm_set_home", SDSM_EINVAL, "[%p, +%zu) is not inside live shared blocks", addr, len);
    if (rank < 0 || rank >= boot.nprocs)
        return report("sdsm_set_home", SDSM_EINVAL, "rank %d is not in [0, %d)", rank, boot.nprocs);
    if (sdsm_region.host_shared) /* one copy for the host: homes do not matter */
        return 0;
    return sdsm_barrier_add_move(first, count, rank) ? report("sdsm_set_home", SDSM_ENOMEM, "no memory") : 0;
}

int sdsm_barrier_at(int manager)
{
    REQUIRE_RUNNING("sdsm_barrier_at");
    if (manager < 0 || manager >= boot.nprocs)
        return report("sdsm_barrier_at", SDSM_EINVAL, "manager %d is not a rank in [0, %d)", manager,
                      boot.nprocs);
    sdsm_coll_begin(SDSM_COLL_BARRIER, (uint64_t)manager, 1, 0);
    return sdsm_status_public(sdsm_barrier_run_at(manager));
}

static int flush_common(const char *call, const void *addr, size_t len, int drop)
{
    REQUIRE_RUNNING(call);
    uint32_t first, count;
    if (range_pages(addr, len, &first, &count))
        return report(call, SDSM_EINVAL, "[%p, +%zu) is not inside live shared blocks", addr, len);
    return sdsm_proto->flush(first, count, drop) ? report(call, SDSM_EPROTO, "a home rejected the diffs") : 0;
}

int sdsm_flush(const void *addr, size_t len) { return flush_common("sdsm_flush", addr, len, 0); }
int sdsm_refresh(void *addr, size_t len) { return flush_common("sdsm_refresh", addr, len, 1); }

int sdsm_prefetch(const void *addr, size_t len)
{
    REQUIRE_RUNNING("sdsm_prefetch");
    if (len == 0) /* an empty share of the data (a rank with no rows): nothing to ask for */
        return 0;
    uint32_t first, count;
    if (range_pages(addr, len, &first, &count))
        return report("sdsm_prefetch", SDSM_EINVAL, "[%p, +%zu) is not inside live shared blocks", addr, len);
    sdsm_proto->prefetch(first, count);
    return 0;
}

int sdsm_bcast(void *addr, size_t len, int root)
{
    REQUIRE_RUNNING("sdsm_bcast");
    uint32_t first, count;
    if (range_pages(addr, len, &first, &count))
        return report("sdsm_bcast", SDSM_EINVAL, "[%p, +%zu) is not inside live shared blocks", addr, len);
    if (root < 0 || root >= boot.nprocs)
        return report("sdsm_bcast", SDSM_EINVAL, "root %d is not a rank in [0, %d)", root, boot.nprocs);
    sdsm_coll_begin(SDSM_COLL_BCAST, (uint64_t)(uintptr_t)addr, len, (uint64_t)(int64_t)root);
    uint8_t *snap = NULL;
    if (boot.rank == root) { /* root's contents as of the call */
        if (!(snap = malloc(len)))
            return report("sdsm_bcast", SDSM_ENOMEM, "no memory for a %zu-byte snapshot", len);
        memcpy(snap, addr, len);
    } else if (!sdsm_region.host_shared) {
        sdsm_home_discard(addr, len); /* overridden: never let them into root's snapshot */
    }
    sdsm_barrier_run(); /* everybody's earlier writes are home... */
    int rc = 0;
    if (snap && sdsm_region.host_shared) { /* one copy: root writes it */
        memcpy(addr, snap, len);
    } else if (snap) { /* ...so root's overwrite comes after them, and invalidates all other copies */
        rc = sdsm_home_overwrite(addr, len, snap);
        if (!rc) /* and root's own copies, which a barrier may have refreshed since */
            rc = sdsm_proto->flush(first, count, 1);
    }
    free(snap);
    sdsm_barrier_run();
    return rc ? report("sdsm_bcast", SDSM_EPROTO, "a home rejected the data") : 0;
}
