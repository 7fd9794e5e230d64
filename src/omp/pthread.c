/*
 * pthread.c - pthreads programs on sdsm: `sdsmcc -pthread prog.c` and the
 * program's threads run on the compute threads of every rank.
 *
 * Linking.  sdsmcc -pthread (without -fopenmp) links the program with
 * --wrap for each pthread, sem_* and fork call it serves, so the program's
 * own calls land in the __wrap_* functions here and in pthread_sync.c, while
 * libraries, libsdsm and this runtime keep the C library's (sdsm's service
 * threads use real mutexes).  It also pulls start/pthread_start.c into the
 * executable, whose constructor sets pt_mode before main.
 *
 * Threads.  The job is started as for OpenMP (main.c): every rank runs
 * SDSM_THREADS compute threads (in a pthreads program 8 unless set: a
 * thread that waits for a lock gives its run slot up, so idle ones cost
 * nothing), and rank 0's first runs main.  The others wait in their rank's
 * queue (in shared memory, guarded by PT_LK_RANK + rank).  pthread_create
 * puts a descriptor (fn, arg; in the shared heap) on the queue of the rank
 * SDSM_PTHREAD_PLACE chooses (round robin from the next rank by default):
 * the unlock of the queue's lock is the creator's release, the worker's
 * lock the new thread's acquire, so the thread sees what its creator wrote.
 * A compute thread runs one program thread at a time, to its end, then
 * takes the next; a rank runs at most SDSM_THREADS - (rank 0: 1) program
 * threads at once and the rest wait in its queue, so a program whose
 * threads wait for threads still queued (a barrier of more threads than
 * the rank has compute threads) hangs: raise --threads.
 *
 * Stacks.  Each compute thread runs its program threads on a stack of its
 * own in shared memory (PT_STACK, homed at its rank, never write-protected
 * there as the master's stack is, above a guard), so a pointer to a stack
 * variable handed to another thread works on every rank.  Thread-local
 * storage stays private: the program's own __thread variables get their
 * initial values again as each thread starts.
 *
 * End.  When main returns (or the master calls exit) each rank's queue is
 * closed: the compute threads finish the program thread they run and stop,
 * and the job ends with main's status.  pthread_exit in main waits for
 * every thread to end, then exits with status 0.
 *
 * Synchronization objects (pthread_sync.c) are keyed by their address.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

void *sdsm__omp_stacks_alloc(size_t len, size_t guard, int home, int count, const char *overflow);

#define PT_QLEN       500 /* threads waiting to start on one rank */
#define PT_KEYS       128 /* pthread_key_create calls per run */
#define PT_STACK      (2ul << 20)
#define PT_GUARD      (64ul << 10)
#define PT_DEF_THREAD "8"
#define PT_MAGIC      0x7074687264736d31ull

typedef struct {
    _Alignas(RT_PAGE) int head, tail; /* ring[head % PT_QLEN] starts next */
    int closed, status;               /* main has ended, with this status */
    void *ring[PT_QLEN];
} pt_queue_t;

typedef struct {
    _Alignas(RT_PAGE) int live; /* threads created and not yet ended */
    int keys;                   /* keys created */
    void (*dtor[PT_KEYS])(void *);
} pt_ctl_t;

typedef struct {
    uint64_t magic;
    void *(*fn)(void *);
    void *arg;
    int id, detached, done;
    void *ret;
    void *keys[PT_KEYS];
} pt_desc_t;

static pt_ctl_t *ctl;
static pt_queue_t *queues;
static char *my_stacks; /* this rank's row of stacks */
static pt_desc_t *main_desc;
static int next_seq = 1, placed;
static pthread_mutex_t seq_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const void *image;
    size_t filesz, memsz;
    void *handle;
} tls;

static __thread pt_desc_t *pt_cur;
static __thread ucontext_t worker_ctx, thread_ctx;

/* Called by the executable's constructor (start/pthread_start.c). */
void sdsm_omp_pthread_mode(void);
void sdsm_omp_pthread_mode(void)
{
    pt_mode = 1;
    if (!getenv("SDSM_THREADS"))
        setenv("SDSM_THREADS", PT_DEF_THREAD, 1);
}

static pt_desc_t *me(const char *call)
{
    if (pt_cur)
        return pt_cur;
    if (rt_is_compute && sdsm_thread_id() == 0 && main_desc)
        return pt_cur = main_desc; /* the master runs no other thread: kept */
    rt_fatal(call, "called outside the program's threads (before main, or from a thread the "
                   "program did not create with pthread_create)");
}

int pt_self_id(void) { return me("pthread")->id; }

static int threads_per_rank(void) { return sdsm_thread_count() / sdsm_nprocs(); }

static pt_desc_t *new_desc(void *(*fn)(void *), void *arg)
{
    pt_desc_t *d = sdsm_omp_heap_alloc(sizeof *d, 1);
    if (!d)
        rt_fatal("pthread_create", "no room in the shared heap for a thread (SDSM_OMP_HEAP)");
    pthread_mutex_lock(&seq_mu);
    int seq = next_seq++;
    pthread_mutex_unlock(&seq_mu);
    d->magic = PT_MAGIC;
    d->fn = fn;
    d->arg = arg;
    d->id = seq * sdsm_nprocs() + sdsm_rank() + 1;
    return d;
}

static int scan_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS) {
            tls.image = (const void *)(info->dlpi_addr + ph->p_vaddr);
            tls.filesz = ph->p_filesz;
            tls.memsz = ph->p_memsz;
        }
    }
    return 1; /* the first object is the program */
}

/* Collective, before the compute threads start. */
void pt_start(void)
{
    int n = sdsm_nprocs(), t = threads_per_rank();
    ctl = sdsm_calloc(1, sizeof *ctl, 0);
    queues = sdsm_calloc((size_t)n, sizeof *queues, SDSM_HOME_BLOCK);
    void *reg = sdsm_calloc(1, pt_registry_size(), 0);
    if (!ctl || !queues || !reg)
        rt_fatal("start", "cannot allocate the threads' queues: %s", sdsm_strerror(sdsm_last_error()));
    pt_registry_init(reg, 1);
    char what[200];
    snprintf(what, sizeof what,
             "fatal: a thread overflowed its stack: the program's threads run on %luK stacks in "
             "shared memory (pthread_attr_setstacksize is not honoured)",
             PT_STACK >> 10);
    for (int r = 0; r < n; r++) {
        char *p = sdsm__omp_stacks_alloc(PT_STACK, PT_GUARD, r, t, what);
        if (!p)
            rt_fatal("start", "cannot allocate the threads' stacks in shared memory (SDSM_HEAP_SIZE)");
        if (r == sdsm_rank())
            my_stacks = p;
    }
    if (sdsm_rank() == 0)
        main_desc = new_desc(NULL, NULL);
    dl_iterate_phdr(scan_tls, NULL);
    if (tls.memsz)
        tls.handle = dlopen(NULL, RTLD_NOW | RTLD_NOLOAD);
}

/* A new thread starts with the program's __thread variables as the
 * program's image has them, not as the compute thread's last one left them. */
static void reset_tls(void)
{
    void *blk = NULL;
    if (!tls.handle || dlinfo(tls.handle, RTLD_DI_TLS_DATA, &blk) || !blk)
        return;
    memcpy(blk, tls.image, tls.filesz);
    memset((char *)blk + tls.filesz, 0, tls.memsz - tls.filesz);
}

static int join_lock(const pt_desc_t *d) { return PT_LK_JOIN + d->id % PT_JOIN_LOCKS; }

static void run_keys_dtors(pt_desc_t *d)
{
    void (*dtor[PT_KEYS])(void *);
    pt_enter(PT_LK_GLOBAL, "pthread_exit");
    int n = ctl->keys;
    memcpy(dtor, ctl->dtor, sizeof dtor);
    pt_leave(PT_LK_GLOBAL, "pthread_exit");
    for (int round = 0, again = 1; again && round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        again = 0;
        for (int k = 0; k < n; k++) {
            void *v = d->keys[k];
            if (v && dtor[k]) {
                d->keys[k] = NULL;
                dtor[k](v);
                again = 1;
            }
        }
    }
}

static void thread_ended(pt_desc_t *d, void *ret)
{
    run_keys_dtors(d);
    int j = join_lock(d);
    pt_enter(j, "pthread_exit");
    d->ret = ret;
    d->done = 1;
    int detached = d->detached;
    pt_wake(j, 1, "pthread_exit");
    pt_leave(j, "pthread_exit");
    if (detached)
        sdsm_omp_heap_free(d);
    pt_enter(PT_LK_GLOBAL, "pthread_exit");
    if (--ctl->live == 0)
        pt_wake(PT_LK_GLOBAL, 1, "pthread_exit");
    pt_leave(PT_LK_GLOBAL, "pthread_exit");
}

static __thread void *thread_ret;

static void trampoline(void) { thread_ret = pt_cur->fn(pt_cur->arg); }

static void run_thread(pt_desc_t *d, char *stack)
{
    reset_tls();
    pt_cur = d;
    thread_ret = NULL;
    if (getcontext(&thread_ctx))
        rt_fatal("pthread_create", "getcontext failed");
    thread_ctx.uc_stack.ss_sp = stack;
    thread_ctx.uc_stack.ss_size = PT_STACK;
    thread_ctx.uc_link = &worker_ctx;
    makecontext(&thread_ctx, trampoline, 0);
    if (swapcontext(&worker_ctx, &thread_ctx))
        rt_fatal("pthread_create", "swapcontext failed");
    thread_ended(d, thread_ret);
    pt_cur = NULL;
}

/* A compute thread other than the master: run the rank's threads until main ends. */
void pt_worker_loop(void)
{
    int r = sdsm_rank(), q = PT_LK_RANK + r;
    size_t one = PT_GUARD + PT_STACK;
    char *stack = my_stacks + (size_t)(sdsm_thread_id() % threads_per_rank()) * one + PT_GUARD;
    pt_queue_t *my = &queues[r];
    for (;;) {
        pt_enter(q, "pthread_create");
        while (my->head == my->tail && !my->closed)
            pt_wait(q, CLOCK_REALTIME, NULL, "pthread_create");
        if (my->closed) {
            rt_exit_status = my->status;
            pt_leave(q, "pthread_create");
            return;
        }
        pt_desc_t *d = my->ring[my->head++ % PT_QLEN];
        pt_leave(q, "pthread_create");
        run_thread(d, stack);
    }
}

/* main has returned (or the master called exit): every rank's queue closes. */
void pt_finish(int status)
{
    for (int r = 0; r < sdsm_nprocs(); r++) {
        pt_enter(PT_LK_RANK + r, "exit");
        queues[r].closed = 1;
        queues[r].status = status;
        pt_wake(PT_LK_RANK + r, 1, "exit");
        pt_leave(PT_LK_RANK + r, "exit");
    }
}

static int place(void)
{
    int n = sdsm_nprocs(), mine = sdsm_rank();
    const char *s = getenv("SDSM_PTHREAD_PLACE");
    if (!s || !*s || !strcmp(s, "roundrobin")) {
        pthread_mutex_lock(&seq_mu);
        int k = ++placed;
        pthread_mutex_unlock(&seq_mu);
        return (mine + k) % n;
    }
    if (!strcmp(s, "local"))
        return mine;
    char *end;
    long r = strtol(s, &end, 10);
    if (*end || end == s || r < 0 || r >= n)
        rt_fatal("pthread_create", "SDSM_PTHREAD_PLACE=%s: give roundrobin, local or a rank from 0 to %d", s,
                 n - 1);
    return (int)r;
}

static void check_attr(const pthread_attr_t *attr, int *detached)
{
    size_t size = 0;
    void *addr = NULL;
    /* A stack size is not honoured (the default attribute's is the stack
     * limit's 8M): a thread that outgrows PT_STACK meets its guard. */
    if (!attr)
        return;
    pthread_attr_getdetachstate(attr, detached);
    *detached = *detached == PTHREAD_CREATE_DETACHED;
    pthread_attr_getstack(attr, &addr, &size);
    if (addr)
        rt_fatal("pthread_create",
                 "a stack of the program's own (pthread_attr_setstack) is not supported: threads run "
                 "on stacks of sdsm's in shared memory");
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    const char *call = "pthread_create";
    me(call);
    int detached = 0, r = place();
    check_attr(attr, &detached);
    if (r == 0 && threads_per_rank() == 1)
        rt_fatal(call, "rank 0 has one compute thread, which runs main: a thread placed there would "
                       "never start (sdsmrun --threads T, T > 1, or SDSM_PTHREAD_PLACE)");
    pt_desc_t *d = new_desc(fn, arg);
    d->detached = detached;
    pt_enter(PT_LK_GLOBAL, call);
    ctl->live++;
    pt_leave(PT_LK_GLOBAL, call);
    pt_queue_t *q = &queues[r];
    pt_enter(PT_LK_RANK + r, call);
    if (q->tail - q->head >= PT_QLEN)
        rt_fatal(call, "more than %d threads waiting to start on rank %d", PT_QLEN, r);
    q->ring[q->tail++ % PT_QLEN] = d;
    pt_wake(PT_LK_RANK + r, 0, call);
    pt_leave(PT_LK_RANK + r, call);
    *th = (pthread_t)d;
    return 0;
}

static pt_desc_t *desc_of(pthread_t t)
{
    pt_desc_t *d = (pt_desc_t *)t;
    if (!d || !sdsm_omp_heap_has(d) || d->magic != PT_MAGIC)
        return NULL;
    return d;
}

int __wrap_pthread_join(pthread_t t, void **ret);
int __wrap_pthread_join(pthread_t t, void **ret)
{
    const char *call = "pthread_join";
    pt_desc_t *d = desc_of(t);
    if (!d)
        return ESRCH;
    if (d == me(call) || d == main_desc)
        return EDEADLK;
    int j = join_lock(d);
    pt_enter(j, call);
    if (d->detached) {
        pt_leave(j, call);
        return EINVAL;
    }
    while (!d->done)
        pt_wait(j, CLOCK_REALTIME, NULL, call);
    void *v = d->ret;
    d->magic = 0;
    pt_leave(j, call);
    sdsm_omp_heap_free(d);
    if (ret)
        *ret = v;
    return 0;
}

int __wrap_pthread_detach(pthread_t t);
int __wrap_pthread_detach(pthread_t t)
{
    pt_desc_t *d = desc_of(t);
    if (!d || d == main_desc)
        return d ? 0 : ESRCH;
    int j = join_lock(d);
    pt_enter(j, "pthread_detach");
    int done = d->done, was = d->detached;
    d->detached = 1;
    if (done)
        d->magic = 0;
    pt_leave(j, "pthread_detach");
    if (done && !was)
        sdsm_omp_heap_free(d);
    return was ? EINVAL : 0;
}

pthread_t __wrap_pthread_self(void);
pthread_t __wrap_pthread_self(void)
{
    if (pt_cur)
        return (pthread_t)pt_cur;
    if (rt_is_compute && sdsm_thread_id() == 0 && main_desc)
        return (pthread_t)main_desc;
    return pthread_self(); /* the C library's: this library is linked without --wrap */
}

__attribute__((noreturn)) void __wrap_pthread_exit(void *ret);
__attribute__((noreturn)) void __wrap_pthread_exit(void *ret)
{
    pt_desc_t *d = me("pthread_exit");
    if (d == main_desc) { /* the process lives on until every thread has ended */
        pt_enter(PT_LK_GLOBAL, "pthread_exit");
        while (ctl->live)
            pt_wait(PT_LK_GLOBAL, CLOCK_REALTIME, NULL, "pthread_exit");
        pt_leave(PT_LK_GLOBAL, "pthread_exit");
        exit(0);
    }
    thread_ret = ret;
    setcontext(&worker_ctx);
    rt_fatal("pthread_exit", "setcontext failed");
}

/* Keys are never reused: a key's values in every thread start as NULL. */
int __wrap_pthread_key_create(pthread_key_t *key, void (*dtor)(void *));
int __wrap_pthread_key_create(pthread_key_t *key, void (*dtor)(void *))
{
    me("pthread_key_create");
    pt_enter(PT_LK_GLOBAL, "pthread_key_create");
    int k = ctl->keys;
    if (k < PT_KEYS) {
        ctl->dtor[k] = dtor;
        ctl->keys = k + 1;
    }
    pt_leave(PT_LK_GLOBAL, "pthread_key_create");
    if (k >= PT_KEYS)
        return EAGAIN;
    *key = (pthread_key_t)k;
    return 0;
}

int __wrap_pthread_key_delete(pthread_key_t key);
int __wrap_pthread_key_delete(pthread_key_t key)
{
    if (key >= PT_KEYS)
        return EINVAL;
    pt_enter(PT_LK_GLOBAL, "pthread_key_delete");
    ctl->dtor[key] = NULL;
    pt_leave(PT_LK_GLOBAL, "pthread_key_delete");
    return 0;
}

void *__wrap_pthread_getspecific(pthread_key_t key);
void *__wrap_pthread_getspecific(pthread_key_t key)
{
    return key < PT_KEYS ? me("pthread_getspecific")->keys[key] : NULL;
}

int __wrap_pthread_setspecific(pthread_key_t key, const void *v);
int __wrap_pthread_setspecific(pthread_key_t key, const void *v)
{
    if (key >= PT_KEYS)
        return EINVAL;
    me("pthread_setspecific")->keys[key] = (void *)v;
    return 0;
}

/* 0: not run; 1: running; 2: done.  The init runs outside the object's lock. */
int __wrap_pthread_once(pthread_once_t *once, void (*init)(void));
int __wrap_pthread_once(pthread_once_t *once, void (*init)(void))
{
    const char *call = "pthread_once";
    int id = pt_obj_id(once, "pthread_once_t", call);
    volatile int *st = (volatile int *)once;
    pt_enter(id, call);
    while (*st == 1)
        pt_wait(id, CLOCK_REALTIME, NULL, call);
    if (*st == 0) {
        *st = 1;
        pt_leave(id, call);
        init();
        pt_enter(id, call);
        *st = 2;
        pt_wake(id, 1, call);
    }
    pt_leave(id, call);
    return 0;
}

/* Calls that cannot work when the program's threads are spread over
 * processes: stopped at the call, never a wrong answer. */
#define PT_REFUSE(sym, why)                                                                                  \
    void __wrap_##sym(void);                                                                                 \
    void __wrap_##sym(void) { rt_fatal(#sym, "%s", why); }

PT_REFUSE(fork, "a program built with sdsmcc -pthread cannot fork: the child would be no rank of the "
                "job, and its threads on other ranks would not be copied")
PT_REFUSE(vfork, "a program built with sdsmcc -pthread cannot fork: the child would be no rank of the "
                 "job, and its threads on other ranks would not be copied")
PT_REFUSE(pthread_cancel, "cancellation is not supported: a thread may run on another rank")
PT_REFUSE(pthread_kill, "signals to a thread are not supported: a thread may run on another rank")
PT_REFUSE(pthread_sigqueue, "signals to a thread are not supported: a thread may run on another rank")
PT_REFUSE(pthread_atfork, "fork is not supported in a program built with sdsmcc -pthread")
PT_REFUSE(pthread_getattr_np, "a thread's attributes are not available: threads run on sdsm's stacks")
PT_REFUSE(pthread_tryjoin_np, "not supported yet (pthread_join is)")
PT_REFUSE(pthread_timedjoin_np, "not supported yet (pthread_join is)")
PT_REFUSE(sem_open, "named semaphores are not supported (they would be one per host): use sem_init on "
                    "a sem_t in shared memory")
