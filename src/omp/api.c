/*
 * api.c - the omp_* calls of omp.h.
 *
 * The team is fixed (every compute thread of every rank), so the calls
 * that would change its size accept only that size or 1.  Locks: an
 * omp_lock_t (4 bytes) holds an sdsm lock id handed out from a counter in
 * the control block; the object lives in the program's shared data, so
 * every thread finds the same id in it.  The lock's data lock is held from
 * omp_set_lock to omp_unset_lock (so under ibec the protected writes
 * travel with it); between ranks under hlrc and update that is all, and
 * omp_test_lock asks for it with a bounded wait; elsewhere a held flag in
 * shared memory, guarded by a second lock, lets omp_test_lock answer
 * without waiting.  A nest lock's owner and
 * count are the owning thread's own business and stay in that thread.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "sdsm.h"

/* --- team and ICVs ------------------------------------------------------ */

int omp_get_thread_num(void) { return rt_self()->tid; }
int omp_get_num_threads(void) { return rt_self()->nthreads; }
int omp_get_max_threads(void) { return rt_self()->nthreads_var; }
int omp_in_parallel(void) { return rt_self()->active_level > 0; }
int omp_get_level(void) { return rt_self()->level; }
int omp_get_active_level(void) { return rt_self()->active_level; }
int omp_in_final(void) { return rt_self()->final; }
int omp_get_cancellation(void) { return 0; }

/* The team's size: the processors the job gives OpenMP (so the common
 * omp_set_num_threads(omp_get_num_procs()) asks for the team it gets). */
int omp_get_num_procs(void) { return rt_team_size > 0 ? rt_team_size : 1; }

int omp_get_thread_limit(void)
{
    return rt_env.thread_limit < rt_team_size ? rt_env.thread_limit : rt_team_size;
}

void omp_set_num_threads(int n)
{
    if (n != 1 && n != rt_team_size)
        rt_fatal("omp_set_num_threads",
                 "%d threads: the team on sdsm is every compute thread of "
                 "every rank, %d (%d ranks x %d); only %d or 1 can be asked for",
                 n, rt_team_size, sdsm_nprocs(), rt_team_size / sdsm_nprocs(), rt_team_size);
    rt_self()->nthreads_var = n;
}

int omp_get_ancestor_thread_num(int level)
{
    rt_thread_t *m = rt_self();
    if (level < 0 || level > m->level)
        return -1;
    return level <= RT_MAX_LEVELS ? m->tids[level] : 0;
}

int omp_get_team_size(int level)
{
    rt_thread_t *m = rt_self();
    if (level < 0 || level > m->level)
        return -1;
    return level <= RT_MAX_LEVELS ? m->sizes[level] : 1;
}

void omp_set_dynamic(int v) { rt_self()->dyn_var = v != 0; }
int omp_get_dynamic(void) { return rt_self()->dyn_var; }
void omp_set_nested(int v) { rt_self()->nest_var = v != 0; }
int omp_get_nested(void) { return rt_self()->nest_var && rt_self()->max_active_levels > 1; }
int omp_get_supported_active_levels(void) { return 1; }
int omp_get_max_active_levels(void) { return rt_self()->max_active_levels; }

void omp_set_max_active_levels(int n)
{
    if (n >= 0)
        rt_self()->max_active_levels = n > 1 ? 1 : n;
}

void omp_set_schedule(omp_sched_t kind, int chunk)
{
    unsigned k = (unsigned)kind & ~RT_SCHED_MONOTONIC;
    if (k < RT_SCHED_STATIC || k > RT_SCHED_AUTO)
        rt_fatal("omp_set_schedule", "unknown schedule kind %d", (int)kind);
    rt_thread_t *m = rt_self();
    m->sched_kind = (int)kind;
    m->sched_chunk = chunk >= 1 ? chunk : (k == RT_SCHED_STATIC ? 0 : 1);
}

void omp_get_schedule(omp_sched_t *kind, int *chunk)
{
    rt_thread_t *m = rt_self();
    *kind = (omp_sched_t)m->sched_kind;
    *chunk = (int)m->sched_chunk;
}

double omp_get_wtime(void) { return sdsm_wtime(); }

double omp_get_wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts))
        return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* No devices, teams or places: the host is the only device. */
int omp_get_num_devices(void) { return 0; }
int omp_get_default_device(void) { return 0; }
void omp_set_default_device(int d) { (void)d; }
int omp_is_initial_device(void) { return 1; }
int omp_get_initial_device(void) { return 0; }
int omp_get_device_num(void) { return 0; }
int omp_get_num_teams(void) { return 1; }
int omp_get_team_num(void) { return 0; }
int omp_get_max_teams(void) { return 1; }
void omp_set_num_teams(int n) { (void)n; }
int omp_get_teams_thread_limit(void) { return omp_get_thread_limit(); }
void omp_set_teams_thread_limit(int n) { (void)n; }
int omp_get_max_task_priority(void) { return 0; }
omp_proc_bind_t omp_get_proc_bind(void) { return omp_proc_bind_false; }
int omp_get_num_places(void) { return 0; }
int omp_get_place_num_procs(int place)
{
    (void)place;
    return 0;
}
void omp_get_place_proc_ids(int place, int *ids) { (void)place, (void)ids; }
int omp_get_place_num(void) { return -1; }
int omp_get_partition_num_places(void) { return 0; }
void omp_get_partition_place_nums(int *places) { (void)places; }
int omp_pause_resource(omp_pause_resource_t kind, int dev)
{
    (void)kind, (void)dev;
    return 0;
}
int omp_pause_resource_all(omp_pause_resource_t kind)
{
    (void)kind;
    return 0;
}

void omp_fulfill_event(omp_event_handle_t ev)
{
    (void)ev;
    rt_fatal("omp_fulfill_event", "detachable tasks are not supported on sdsm");
}

void omp_display_env(int verbose)
{
    (void)verbose;
    rt_thread_t *m = rt_self();
    static const char *kinds[] = {"RUNTIME", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
    unsigned k = (unsigned)m->sched_kind & ~RT_SCHED_MONOTONIC;
    fprintf(stderr,
            "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '201511'\n"
            "  OMP_NUM_THREADS = '%d'\n  OMP_SCHEDULE = '%s,%ld'\n  OMP_DYNAMIC = '%s'\n"
            "  OMP_NESTED = '%s'\n  OMP_MAX_ACTIVE_LEVELS = '%d'\n  OMP_STACKSIZE = '%zuB'\n"
            "  OMP_THREAD_LIMIT = '%d'\n  OMP_CANCELLATION = 'FALSE'\n"
            "OPENMP DISPLAY ENVIRONMENT END\n",
            m->nthreads_var, k <= 4 ? kinds[k] : "?", m->sched_chunk, m->dyn_var ? "TRUE" : "FALSE",
            m->nest_var ? "TRUE" : "FALSE", m->max_active_levels, rt_env.stacksize, omp_get_thread_limit());
}

/* --- memory allocators ---------------------------------------------------
 * A block must be shared memory, as the program may hand it to any thread;
 * the C library's malloc called from this library would be private, so
 * blocks come from this rank's local arena of the shared region
 * (sdsm_alloc_local: page-aligned, whole pages).  Only the allocating rank
 * can free one (another rank's omp_free stops the job with sdsm's message). */

static omp_allocator_handle_t default_allocator = omp_default_mem_alloc;

static void free_block(void *p)
{
    if (p && sdsm_omp_is_shared(p))
        sdsm_free_local(p);
    else
        free(p);
}

void *omp_aligned_alloc(size_t align, size_t size, omp_allocator_handle_t a)
{
    (void)a;
    if (align > 4096 || (align & (align - 1)))
        return NULL;
    if (!rt_ctl) { /* before the runtime started: no shared memory yet */
        void *p = NULL;
        return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1) ? NULL
                                                                                                    : p;
    }
    return sdsm_alloc_local(size ? size : 1);
}
void *omp_alloc(size_t size, omp_allocator_handle_t a) { return omp_aligned_alloc(0, size, a); }
void *omp_aligned_calloc(size_t align, size_t n, size_t size, omp_allocator_handle_t a)
{
    if (size && n > (size_t)-1 / size)
        return NULL;
    void *p = omp_aligned_alloc(align, n * size, a);
    if (p)
        memset(p, 0, n * size);
    return p;
}
void *omp_calloc(size_t n, size_t size, omp_allocator_handle_t a)
{
    return omp_aligned_calloc(0, n, size, a);
}
void *omp_realloc(void *p, size_t size, omp_allocator_handle_t a, omp_allocator_handle_t fa)
{
    (void)fa;
    if (!p)
        return omp_alloc(size, a);
    if (!size) {
        free_block(p);
        return NULL;
    }
    if (!sdsm_omp_is_shared(p))
        return realloc(p, size);
    void *q = omp_alloc(size, a);
    if (q) { /* the old block's pages: its size is not kept, so copy what fits */
        size_t have = 0;
        while (have < size && sdsm_omp_is_shared((char *)p + have))
            have += 4096;
        memcpy(q, p, have < size ? have : size);
        free_block(p);
    }
    return q;
}
void omp_free(void *p, omp_allocator_handle_t a)
{
    (void)a;
    free_block(p);
}
void omp_set_default_allocator(omp_allocator_handle_t a) { default_allocator = a; }
omp_allocator_handle_t omp_get_default_allocator(void) { return default_allocator; }
omp_allocator_handle_t omp_init_allocator(omp_memspace_handle_t m, int n, const omp_alloctrait_t t[])
{
    (void)m, (void)n, (void)t;
    return omp_default_mem_alloc;
}
void omp_destroy_allocator(omp_allocator_handle_t a) { (void)a; }

/* --- locks --------------------------------------------------------------- */

static int *lock_id_of(void *lock) { return (int *)lock; }

/* The shared held flags (one byte per lock), guarded by RT_LK_USERMETA + id % 4096. */
static int meta_lock(int id) { return RT_LK_USERMETA + id % 4096; }

static int lock_id(void *lock, const char *call)
{
    int id = *lock_id_of(lock);
    if (id <= 0 || id >= RT_USER_LOCKS)
        rt_fatal(call, "lock %p is not initialized (omp_init_lock) or was destroyed", lock);
    return id;
}

static void init_lock(void *lock, const char *call)
{
    if (!rt_ctl)
        rt_fatal(call, "called before the OpenMP runtime started");
    rt_check(rt_lock(RT_LK_REGISTRY), "omp_init_lock: sdsm_lock");
    int id = ++rt_ctl->user_locks;
    rt_check(sdsm_unlock(RT_LK_REGISTRY), "omp_init_lock: sdsm_unlock");
    if (id >= RT_USER_LOCKS)
        rt_fatal(call, "more than %d OpenMP locks initialized", RT_USER_LOCKS - 1);
    *lock_id_of(lock) = id;
}

/*
 * Between ranks under hlrc and update (sdsm__omp_locks_direct), a lock is
 * its data lock alone, held from set to unset; omp_test_lock asks for it
 * and waits at most RT_TRY_NS (rt_lock_try: a grant that comes later
 * leaves it free at this rank for the next test).  No held flag is written:
 * a set and an unset are one acquire and one release.  With one copy for
 * the host and under ibec (whose grants carry the protected writes and
 * cannot be left behind), the held flag below.
 */
int sdsm__omp_locks_direct(void);

static int direct(void)
{
    static _Atomic int known = -1; /* fixed at sdsm_init */
    int d = atomic_load_explicit(&known, memory_order_relaxed);
    if (d < 0)
        atomic_store_explicit(&known, d = sdsm__omp_locks_direct(), memory_order_relaxed);
    return d;
}

/* Reserve the lock (held flag), waiting if `wait`; then take its data lock. */
static int acquire(int id, int wait, const char *call)
{
    if (direct()) {
        if (wait) {
            rt_check(rt_lock(RT_LK_USER + id), call);
            return 1;
        }
        return rt_lock_try(RT_LK_USER + id, RT_TRY_NS, call);
    }
    int ml = meta_lock(id);
    volatile unsigned char *held = &rt_held[id];
    rt_check(rt_lock(ml), call);
    while (*held) {
        if (!wait) {
            rt_check(sdsm_unlock(ml), call);
            return 0;
        }
        rt_check(rt_cond_wait(ml, ml), call);
    }
    *held = 1;
    rt_check(sdsm_unlock(ml), call);
    rt_check(rt_lock(RT_LK_USER + id), call);
    return 1;
}

static void release(int id, const char *call)
{
    int ml = meta_lock(id);
    rt_check(sdsm_unlock(RT_LK_USER + id), call);
    if (direct())
        return;
    rt_check(rt_lock(ml), call);
    rt_held[id] = 0;
    rt_check(sdsm_cond_broadcast(ml), call);
    rt_check(sdsm_unlock(ml), call);
}

void omp_init_lock(omp_lock_t *l) { init_lock(l, "omp_init_lock"); }
void omp_init_lock_with_hint(omp_lock_t *l, omp_sync_hint_t h)
{
    (void)h;
    init_lock(l, "omp_init_lock_with_hint");
}
void omp_destroy_lock(omp_lock_t *l)
{
    lock_id(l, "omp_destroy_lock");
    *lock_id_of(l) = 0;
}
void omp_set_lock(omp_lock_t *l) { acquire(lock_id(l, "omp_set_lock"), 1, "omp_set_lock"); }
void omp_unset_lock(omp_lock_t *l) { release(lock_id(l, "omp_unset_lock"), "omp_unset_lock"); }
int omp_test_lock(omp_lock_t *l) { return acquire(lock_id(l, "omp_test_lock"), 0, "omp_test_lock"); }

/* Nest locks this thread holds, with their counts. */
#define NEST_MAX 64
static __thread struct {
    int id, count;
} nest_held[NEST_MAX];
static __thread int nest_n;

static int nest_find(int id)
{
    for (int i = 0; i < nest_n; i++)
        if (nest_held[i].id == id)
            return i;
    return -1;
}

static void nest_add(int id, const char *call)
{
    if (nest_n == NEST_MAX)
        rt_fatal(call, "a thread holds more than %d nest locks", NEST_MAX);
    nest_held[nest_n].id = id;
    nest_held[nest_n++].count = 1;
}

void omp_init_nest_lock(omp_nest_lock_t *l)
{
    memset(l, 0, sizeof *l);
    init_lock(l, "omp_init_nest_lock");
}
void omp_init_nest_lock_with_hint(omp_nest_lock_t *l, omp_sync_hint_t h)
{
    (void)h;
    omp_init_nest_lock(l);
}
void omp_destroy_nest_lock(omp_nest_lock_t *l)
{
    lock_id(l, "omp_destroy_nest_lock");
    *lock_id_of(l) = 0;
}

void omp_set_nest_lock(omp_nest_lock_t *l)
{
    int id = lock_id(l, "omp_set_nest_lock"), i = nest_find(id);
    if (i >= 0) {
        nest_held[i].count++;
        return;
    }
    acquire(id, 1, "omp_set_nest_lock");
    nest_add(id, "omp_set_nest_lock");
}

void omp_unset_nest_lock(omp_nest_lock_t *l)
{
    int id = lock_id(l, "omp_unset_nest_lock"), i = nest_find(id);
    if (i < 0)
        rt_fatal("omp_unset_nest_lock", "lock %p is not held by this thread", (void *)l);
    if (--nest_held[i].count > 0)
        return;
    nest_held[i] = nest_held[--nest_n];
    release(id, "omp_unset_nest_lock");
}

int omp_test_nest_lock(omp_nest_lock_t *l)
{
    int id = lock_id(l, "omp_test_nest_lock"), i = nest_find(id);
    if (i >= 0)
        return ++nest_held[i].count;
    if (!acquire(id, 0, "omp_test_nest_lock"))
        return 0;
    nest_add(id, "omp_test_nest_lock");
    return 1;
}
