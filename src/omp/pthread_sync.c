/*
 * pthread_sync.c - the synchronization objects of pthreads programs
 * (pthread.c has the design): mutexes, condition variables, barriers,
 * rwlocks, spinlocks and unnamed semaphores.
 *
 * An object is keyed by its address, which is the same in every rank: a
 * registry in shared memory (guarded by PT_LK_REGISTRY, memoized per rank)
 * gives each address an sdsm lock id, so no rank has to initialize an
 * object before another uses it and a static initializer is enough.  A
 * mutex is its sdsm lock, held from lock to unlock (one copy: a futex word
 * in the mutex); the other objects' state (a condition's sequence; a
 * barrier's arrivals) lives in the object itself, in shared memory,
 * changed only with the object's sdsm lock held, and waiters sleep on the
 * sdsm condition of the same id.  So a mutex's unlock is a release of the
 * rank's writes and its lock an acquire, under hlrc and update alike.
 * Timed waits (timedlock, timedwait, ...) poll: sdsm conditions have no
 * timeout.  An object outside shared memory (a library's, or memory the
 * program mapped itself) would be a different object in each rank: it is
 * refused, naming the call.
 */
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

/* --- the registry -------------------------------------------------------- */

static uintptr_t *reg; /* [PT_OBJECTS] addresses, then the count */
#define CACHE (1 << 16)
static struct {
    uintptr_t key;
    int idx;
} cache[CACHE];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

size_t pt_registry_size(void) { return (PT_OBJECTS + 1) * sizeof(uintptr_t); }
void pt_registry_init(void *shared, int create)
{
    (void)create;
    reg = shared;
}

static unsigned hash(uintptr_t a) { return (unsigned)(((a >> 3) * 0x9e3779b97f4a7c15ull) >> 40); }

/* Readers take no lock: an entry's index is written before its key, which
 * is published with a release store, and an entry never changes again. */
static int cache_find(uintptr_t key)
{
    for (unsigned i = hash(key) % CACHE, n = 0; n < CACHE; i = (i + 1) % CACHE, n++) {
        uintptr_t k = __atomic_load_n(&cache[i].key, __ATOMIC_ACQUIRE);
        if (!k)
            break;
        if (k == key)
            return cache[i].idx;
    }
    return -1;
}

static void cache_add(uintptr_t key, int idx)
{
    pthread_mutex_lock(&cache_mu);
    for (unsigned i = hash(key) % CACHE, n = 0; n < CACHE; i = (i + 1) % CACHE, n++) {
        if (cache[i].key == key)
            break;
        if (!cache[i].key) {
            cache[i].idx = idx;
            __atomic_store_n(&cache[i].key, key, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&cache_mu);
}

static int registry_find(uintptr_t key, const char *call)
{
    pt_enter(PT_LK_REGISTRY, call);
    unsigned i = hash(key) % PT_OBJECTS;
    while (reg[i] && reg[i] != key)
        i = (i + 1) % PT_OBJECTS;
    if (!reg[i]) {
        if (reg[PT_OBJECTS] >= PT_OBJECTS - PT_OBJECTS / 8)
            rt_fatal(call, "more than %d synchronization objects in one run", PT_OBJECTS - PT_OBJECTS / 8);
        reg[i] = key;
        reg[PT_OBJECTS]++;
    }
    pt_leave(PT_LK_REGISTRY, call);
    return (int)i;
}

int pt_obj_id(const void *obj, const char *what, const char *call)
{
    if (!reg)
        rt_fatal(call, "called before main");
    if (!sdsm_omp_is_shared(obj))
        rt_fatal(call,
                 "the %s at %p is not in shared memory (the program's globals, its heap, main's and "
                 "the threads' stacks): it would be a different object in each rank",
                 what, obj);
    uintptr_t key = (uintptr_t)obj;
    int idx = cache_find(key);
    if (idx < 0) {
        idx = registry_find(key, call);
        cache_add(key, idx);
    }
    return PT_LK_OBJ + idx;
}

void pt_enter(int id, const char *call) { rt_check(rt_lock(id), call); }
void pt_leave(int id, const char *call) { rt_check(sdsm_unlock(id), call); }
void pt_wake(int id, int all, const char *call)
{
    rt_check(all ? sdsm_cond_broadcast(id) : sdsm_cond_signal(id), call);
}

static long ns_until(clockid_t clock, const struct timespec *abs)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (abs->tv_sec - now.tv_sec) * 1000000000l + (abs->tv_nsec - now.tv_nsec);
}

int pt_wait(int id, clockid_t clock, const struct timespec *abs, const char *call)
{
    if (!abs) {
        rt_check(rt_cond_wait(id, id), call);
        return 0;
    }
    if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000l)
        return EINVAL;
    long left = ns_until(clock, abs);
    if (left <= 0)
        return ETIMEDOUT;
    struct timespec nap = {0, left < 2000000 ? left : 2000000};
    pt_leave(id, call);
    nanosleep(&nap, NULL);
    pt_enter(id, call);
    return 0;
}

/* --- mutexes ------------------------------------------------------------- */

/* glibc's fields, which sdsm uses its own way with one copy (below): the
 * owner and depth; the kind, set by pthread_mutex_init or the initializer,
 * is read in both ways. */
#define M_OWNER(m) ((m)->__data.__owner)
#define M_COUNT(m) ((m)->__data.__count)
#define M_KIND(m)  ((m)->__data.__kind & 3)

/* Under the protocol (below mutex_take): the holder of each registry
 * index's mutex, at this rank. */
static struct {
    _Atomic int owner; /* pt_self_id of the holding thread, 0 */
    unsigned count;    /* its recursion depth */
} holder[PT_OBJECTS];

/*
 * One copy of the memory for the host (sdsm__omp_one_copy): the mutex is a
 * futex word, __lock itself (0 free, 1 held, 2 held and maybe sleepers),
 * taken and given with one atomic instruction; the processor keeps the
 * one copy coherent, so there is nothing to release or acquire.  Only a
 * taker that finds it held calls into the runtime (sdsm__omp_word_take:
 * polls, then sleeps, reported as the mutex's lock id).  BARNES's 2.2
 * million cell locks took 2.6 s at one rank through the lock ids (two
 * sdsm locks a mutex call) against the native build's 0.42 s.
 */
int sdsm__omp_one_copy(void);
int sdsm__omp_word_take(void *word, int report_id, int clock, const struct timespec *abs);
void sdsm__omp_word_wake(void *word);

static int one_copy(void)
{
    static _Atomic int known = -1; /* fixed at sdsm_init, which runs before main */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0)
        atomic_store_explicit(&known, k = sdsm__omp_one_copy(), memory_order_relaxed);
    return k;
}

#define M_WORD(m) ((_Atomic uint32_t *)&(m)->__data.__lock)

static int owner_of(const pthread_mutex_t *m) { return __atomic_load_n(&M_OWNER(m), __ATOMIC_RELAXED); }

static int word_take(pthread_mutex_t *m, int wait, clockid_t clock, const struct timespec *abs,
                     const char *call)
{
    if (!sdsm_omp_in_region(m))
        pt_obj_id(m, "mutex", call); /* refused, naming the call */
    int self = pt_self_id();
    uint32_t free_word = 0;
    if (!atomic_compare_exchange_strong(M_WORD(m), &free_word, 1)) {
        if (owner_of(m) == self) { /* only this thread writes its own id there */
            if (M_KIND(m) == PTHREAD_MUTEX_RECURSIVE) {
                M_COUNT(m)++;
                return 0;
            }
            if (M_KIND(m) == PTHREAD_MUTEX_ERRORCHECK || !wait)
                return M_KIND(m) == PTHREAD_MUTEX_ERRORCHECK ? EDEADLK : EBUSY;
            rt_fatal(call, "the mutex at %p is locked already by this thread: it would deadlock", m);
        }
        if (!wait)
            return EBUSY;
        if (abs && (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000l))
            return EINVAL;
        int rc = sdsm__omp_word_take(M_WORD(m), pt_obj_id(m, "mutex", call), (int)clock, abs);
        if (rc)
            return rc;
    }
    __atomic_store_n(&M_OWNER(m), self, __ATOMIC_RELAXED);
    M_COUNT(m) = 1;
    return 0;
}

static int word_give(pthread_mutex_t *m, int all, unsigned *count)
{
    if (!atomic_load_explicit(M_WORD(m), memory_order_relaxed) || owner_of(m) != pt_self_id())
        return EPERM;
    if (count)
        *count = M_COUNT(m);
    if (!all && M_COUNT(m) > 1) {
        M_COUNT(m)--;
        return 0;
    }
    __atomic_store_n(&M_OWNER(m), 0, __ATOMIC_RELAXED);
    M_COUNT(m) = 0;
    if (atomic_exchange(M_WORD(m), 0) == 2) /* a taker may sleep */
        sdsm__omp_word_wake(M_WORD(m));
    return 0;
}

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int kind = PTHREAD_MUTEX_DEFAULT, robust = PTHREAD_MUTEX_STALLED;
    if (a) {
        pthread_mutexattr_gettype(a, &kind);
        pthread_mutexattr_getrobust(a, &robust);
    }
    if (robust != PTHREAD_MUTEX_STALLED)
        rt_fatal("pthread_mutex_init", "robust mutexes are not supported");
    memset(m, 0, sizeof *m);
    m->__data.__kind = kind;
    return 0;
}

int __wrap_pthread_mutex_destroy(pthread_mutex_t *m);
int __wrap_pthread_mutex_destroy(pthread_mutex_t *m)
{
    int id = pt_obj_id(m, "mutex", "pthread_mutex_destroy");
    if (one_copy())
        return atomic_load(M_WORD(m)) ? EBUSY : 0;
    /* Held by a thread of this rank (the lock is not asked for: destroying
     * a mutex another thread holds is undefined). */
    return atomic_load_explicit(&holder[id - PT_LK_OBJ].owner, memory_order_relaxed) ? EBUSY : 0;
}

/*
 * The protocol between the ranks: the mutex is its lock id, held from
 * pthread_mutex_lock to pthread_mutex_unlock, so a lock is one acquire and
 * an unlock one release, and the mutex's own memory is never written (a
 * state kept there under the lock id made each call an acquire and a
 * release of its own and the mutex's page a diff at every one: RADIOSITY
 * at 2 ranks took 6 times its 1-rank time).  Which thread holds it and how
 * deep is the holder's own business, kept by the rank per registry index:
 * a thread reads its own id there only if it wrote it.  trylock and
 * timedlock use rt_lock_try: a mutex held or waited for by a thread
 * of this rank is busy at once; one held elsewhere is asked for and waited
 * for at most RT_TRY_NS (timedlock: till its time), and a grant that comes
 * later leaves the lock at this rank, free, for the next try.
 */
/* wait: 0 trylock, 1 lock (until abs, if given). */
static int mutex_take(pthread_mutex_t *m, int wait, clockid_t clock, const struct timespec *abs,
                      const char *call)
{
    if (one_copy())
        return word_take(m, wait, clock, abs, call);
    int id = pt_obj_id(m, "mutex", call), self = pt_self_id();
    __typeof__(holder[0]) *h = &holder[id - PT_LK_OBJ];
    if (atomic_load_explicit(&h->owner, memory_order_relaxed) == self) {
        if (M_KIND(m) == PTHREAD_MUTEX_RECURSIVE) {
            h->count++;
            return 0;
        }
        if (M_KIND(m) == PTHREAD_MUTEX_ERRORCHECK || !wait)
            return M_KIND(m) == PTHREAD_MUTEX_ERRORCHECK ? EDEADLK : EBUSY;
        rt_fatal(call, "the mutex at %p is locked already by this thread: it would deadlock", m);
    }
    if (!wait) {
        if (!rt_lock_try(id, RT_TRY_NS, call))
            return EBUSY;
    } else if (abs) {
        if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000l)
            return EINVAL;
        for (;;) {
            long left = ns_until(clock, abs);
            if (left <= 0)
                return ETIMEDOUT;
            if (rt_lock_try(id, left, call))
                break;
            struct timespec nap = {0, left < 200000 ? left : 200000}; /* a thread of this rank has it */
            nanosleep(&nap, NULL);
        }
    } else {
        pt_enter(id, call);
    }
    atomic_store_explicit(&h->owner, self, memory_order_relaxed);
    h->count = 1;
    return 0;
}

/* all: give up every recursion level (a condition wait); *count gets them. */
static int mutex_give(pthread_mutex_t *m, int all, unsigned *count, const char *call)
{
    if (one_copy()) {
        if (!sdsm_omp_in_region(m))
            pt_obj_id(m, "mutex", call); /* refused, naming the call */
        return word_give(m, all, count);
    }
    int id = pt_obj_id(m, "mutex", call);
    __typeof__(holder[0]) *h = &holder[id - PT_LK_OBJ];
    if (atomic_load_explicit(&h->owner, memory_order_relaxed) != pt_self_id())
        return EPERM;
    if (count)
        *count = h->count;
    if (!all && h->count > 1) {
        h->count--;
        return 0;
    }
    h->count = 0;
    atomic_store_explicit(&h->owner, 0, memory_order_relaxed);
    pt_leave(id, call);
    return 0;
}

/* After a condition wait: the recursion depth the mutex had before it. */
static void mutex_set_count(pthread_mutex_t *m, unsigned count)
{
    if (one_copy())
        M_COUNT(m) = count;
    else
        holder[pt_obj_id(m, "mutex", "pthread_cond_wait") - PT_LK_OBJ].count = count;
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
    return mutex_take(m, 1, CLOCK_REALTIME, NULL, "pthread_mutex_lock");
}
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
    return mutex_take(m, 0, CLOCK_REALTIME, NULL, "pthread_mutex_trylock");
}
int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs);
int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abs)
{
    return mutex_take(m, 1, CLOCK_REALTIME, abs, "pthread_mutex_timedlock");
}
int __wrap_pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs);
int __wrap_pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abs)
{
    return mutex_take(m, 1, clock, abs, "pthread_mutex_clocklock");
}
int __wrap_pthread_mutex_unlock(pthread_mutex_t *m);
int __wrap_pthread_mutex_unlock(pthread_mutex_t *m) { return mutex_give(m, 0, NULL, "pthread_mutex_unlock"); }

/* --- condition variables ------------------------------------------------- */

/* A signal or broadcast bumps seq; a waiter returns once seq moved. */
typedef struct {
    unsigned seq, waiters;
    int clock, monotonic;
} pt_cond_t;
_Static_assert(sizeof(pt_cond_t) <= sizeof(pthread_cond_t), "pt_cond_t fits pthread_cond_t");

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    clockid_t clock = CLOCK_REALTIME;
    if (a)
        pthread_condattr_getclock(a, &clock);
    memset(c, 0, sizeof *c);
    ((pt_cond_t *)c)->monotonic = clock == CLOCK_MONOTONIC;
    return 0;
}

int __wrap_pthread_cond_destroy(pthread_cond_t *c);
int __wrap_pthread_cond_destroy(pthread_cond_t *c)
{
    (void)c;
    return 0;
}

static int cond_wait(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock, const struct timespec *abs,
                     const char *call)
{
    pt_cond_t *c = (pt_cond_t *)cv;
    int id = pt_obj_id(cv, "condition variable", call), rc = 0;
    unsigned count = 0;
    pt_enter(id, call);
    unsigned seq = c->seq;
    if (mutex_give(m, 1, &count, call)) {
        pt_leave(id, call);
        return EPERM;
    }
    c->waiters++;
    while (c->seq == seq && !rc)
        rc = pt_wait(id, clock, abs, call);
    c->waiters--;
    pt_leave(id, call);
    mutex_take(m, 1, CLOCK_REALTIME, NULL, call);
    mutex_set_count(m, count);
    return rc;
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return cond_wait(c, m, CLOCK_REALTIME, NULL, "pthread_cond_wait");
}
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs);
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abs)
{
    clockid_t clock = ((pt_cond_t *)c)->monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return cond_wait(c, m, clock, abs, "pthread_cond_timedwait");
}
int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *abs);
int __wrap_pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                  const struct timespec *abs)
{
    return cond_wait(c, m, clock, abs, "pthread_cond_clockwait");
}

static int cond_wake(pthread_cond_t *cv, int all, const char *call)
{
    pt_cond_t *c = (pt_cond_t *)cv;
    int id = pt_obj_id(cv, "condition variable", call);
    pt_enter(id, call);
    if (c->waiters) {
        c->seq++;
        pt_wake(id, all, call);
    }
    pt_leave(id, call);
    return 0;
}

int __wrap_pthread_cond_signal(pthread_cond_t *c);
int __wrap_pthread_cond_signal(pthread_cond_t *c) { return cond_wake(c, 0, "pthread_cond_signal"); }
int __wrap_pthread_cond_broadcast(pthread_cond_t *c);
int __wrap_pthread_cond_broadcast(pthread_cond_t *c) { return cond_wake(c, 1, "pthread_cond_broadcast"); }

/* --- barriers ------------------------------------------------------------ */

typedef struct {
    unsigned count, arrived, round;
} pt_barrier_t;
_Static_assert(sizeof(pt_barrier_t) <= sizeof(pthread_barrier_t), "pt_barrier_t fits");

int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count);
int __wrap_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count)
{
    (void)a;
    if (!count)
        return EINVAL;
    /* Each waiting thread keeps its compute thread: more than the job's
     * compute threads can never all arrive, and the job would hang. */
    if ((int)count > sdsm_thread_count())
        rt_fatal(
            "pthread_barrier_init",
            "a barrier of %u threads, but the job runs at most %d threads at once (%d ranks x %d compute "
            "threads, main's included): give sdsmrun --threads %d or more",
            count, sdsm_thread_count(), sdsm_nprocs(), sdsm_thread_count() / sdsm_nprocs(),
            ((int)count + sdsm_nprocs() - 1) / sdsm_nprocs());
    memset(b, 0, sizeof *b);
    ((pt_barrier_t *)b)->count = count;
    return 0;
}

int __wrap_pthread_barrier_destroy(pthread_barrier_t *b);
int __wrap_pthread_barrier_destroy(pthread_barrier_t *b)
{
    (void)b;
    return 0;
}

int __wrap_pthread_barrier_wait(pthread_barrier_t *bar);
int __wrap_pthread_barrier_wait(pthread_barrier_t *bar)
{
    const char *call = "pthread_barrier_wait";
    pt_barrier_t *b = (pt_barrier_t *)bar;
    int id = pt_obj_id(bar, "barrier", call), rc = 0;
    pt_enter(id, call);
    if (!b->count)
        rt_fatal(call, "the barrier at %p was not initialized (pthread_barrier_init)", (void *)bar);
    unsigned round = b->round;
    if (++b->arrived == b->count) {
        b->arrived = 0;
        b->round++;
        pt_wake(id, 1, call);
        rc = PTHREAD_BARRIER_SERIAL_THREAD;
    } else {
        while (b->round == round)
            pt_wait(id, CLOCK_REALTIME, NULL, call);
    }
    pt_leave(id, call);
    return rc;
}

/* --- rwlocks (readers first, as glibc's default) ------------------------- */

typedef struct {
    int readers, writer; /* writer: the owner's id */
    unsigned waiters;
} pt_rwlock_t;
_Static_assert(sizeof(pt_rwlock_t) <= sizeof(pthread_rwlock_t), "pt_rwlock_t fits");

int __wrap_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a);
int __wrap_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
    (void)a;
    memset(l, 0, sizeof *l);
    return 0;
}

int __wrap_pthread_rwlock_destroy(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_destroy(pthread_rwlock_t *l)
{
    (void)l;
    return 0;
}

/* wait: 0 try, 1 wait (until abs, if given). */
static int rw_take(pthread_rwlock_t *rw, int write, int wait, const struct timespec *abs, const char *call)
{
    pt_rwlock_t *l = (pt_rwlock_t *)rw;
    int id = pt_obj_id(rw, "rwlock", call), self = pt_self_id(), rc = 0;
    pt_enter(id, call);
    if (l->writer == self)
        rc = EDEADLK;
    while (!rc && (l->writer || (write && l->readers))) {
        if (!wait) {
            rc = EBUSY;
            break;
        }
        l->waiters++;
        rc = pt_wait(id, CLOCK_REALTIME, abs, call);
        l->waiters--;
    }
    if (!rc) {
        if (write)
            l->writer = self;
        else
            l->readers++;
    }
    pt_leave(id, call);
    return rc;
}

#define RW(name, write, wait, abs)                                                                           \
    int __wrap_pthread_rwlock_##name(pthread_rwlock_t *l);                                                   \
    int __wrap_pthread_rwlock_##name(pthread_rwlock_t *l)                                                    \
    {                                                                                                        \
        return rw_take(l, write, wait, abs, "pthread_rwlock_" #name);                                        \
    }
RW(rdlock, 0, 1, NULL)
RW(tryrdlock, 0, 0, NULL)
RW(wrlock, 1, 1, NULL)
RW(trywrlock, 1, 0, NULL)

int __wrap_pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs);
int __wrap_pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    return rw_take(l, 0, 1, abs, "pthread_rwlock_timedrdlock");
}
int __wrap_pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs);
int __wrap_pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abs)
{
    return rw_take(l, 1, 1, abs, "pthread_rwlock_timedwrlock");
}

int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *rw);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
    const char *call = "pthread_rwlock_unlock";
    pt_rwlock_t *l = (pt_rwlock_t *)rw;
    int id = pt_obj_id(rw, "rwlock", call), rc = 0;
    pt_enter(id, call);
    if (l->writer == pt_self_id())
        l->writer = 0;
    else if (l->readers > 0)
        l->readers--;
    else
        rc = EPERM;
    if (!rc && !l->readers && l->waiters)
        pt_wake(id, 1, call);
    pt_leave(id, call);
    return rc;
}

/* --- spinlocks: bit 0 the held flag, the bits above it the sleeping waiters */

int __wrap_pthread_spin_init(pthread_spinlock_t *s, int pshared);
int __wrap_pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
    (void)pshared; /* every object is the job's */
    *s = 0;
    return 0;
}

int __wrap_pthread_spin_destroy(pthread_spinlock_t *s);
int __wrap_pthread_spin_destroy(pthread_spinlock_t *s)
{
    (void)s;
    return 0;
}

static int spin_take(pthread_spinlock_t *s, int wait, const char *call)
{
    int id = pt_obj_id((void *)s, "spinlock", call), rc = 0;
    pt_enter(id, call);
    while ((*s & 1) && !rc) {
        if (!wait) {
            rc = EBUSY;
            break;
        }
        *s += 2;
        rc = pt_wait(id, CLOCK_REALTIME, NULL, call);
        *s -= 2;
    }
    if (!rc)
        *s |= 1;
    pt_leave(id, call);
    return rc;
}

int __wrap_pthread_spin_lock(pthread_spinlock_t *s);
int __wrap_pthread_spin_lock(pthread_spinlock_t *s) { return spin_take(s, 1, "pthread_spin_lock"); }
int __wrap_pthread_spin_trylock(pthread_spinlock_t *s);
int __wrap_pthread_spin_trylock(pthread_spinlock_t *s) { return spin_take(s, 0, "pthread_spin_trylock"); }
int __wrap_pthread_spin_unlock(pthread_spinlock_t *s);
int __wrap_pthread_spin_unlock(pthread_spinlock_t *s)
{
    int id = pt_obj_id((void *)s, "spinlock", "pthread_spin_unlock");
    pt_enter(id, "pthread_spin_unlock");
    *s &= ~1;
    if (*s)
        pt_wake(id, 0, "pthread_spin_unlock");
    pt_leave(id, "pthread_spin_unlock");
    return 0;
}

/* --- unnamed semaphores -------------------------------------------------- */

typedef struct {
    unsigned value, waiters;
} pt_sem_t;
_Static_assert(sizeof(pt_sem_t) <= sizeof(sem_t), "pt_sem_t fits");

int __wrap_sem_init(sem_t *s, int pshared, unsigned value);
int __wrap_sem_init(sem_t *s, int pshared, unsigned value)
{
    (void)pshared;
    memset(s, 0, sizeof *s);
    ((pt_sem_t *)s)->value = value;
    return 0;
}

int __wrap_sem_destroy(sem_t *s);
int __wrap_sem_destroy(sem_t *s)
{
    (void)s;
    return 0;
}

/* wait: 0 try, 1 wait (until abs, if given); -1 with errno as sem_wait's. */
static int sem_take(sem_t *sem, int wait, const struct timespec *abs, const char *call)
{
    pt_sem_t *s = (pt_sem_t *)sem;
    int id = pt_obj_id(sem, "semaphore", call), rc = 0;
    pt_enter(id, call);
    s->waiters++;
    while (!s->value && !rc)
        rc = wait ? pt_wait(id, CLOCK_REALTIME, abs, call) : EAGAIN;
    s->waiters--;
    if (!rc)
        s->value--;
    pt_leave(id, call);
    if (rc)
        errno = rc;
    return rc ? -1 : 0;
}

int __wrap_sem_wait(sem_t *s);
int __wrap_sem_wait(sem_t *s) { return sem_take(s, 1, NULL, "sem_wait"); }
int __wrap_sem_trywait(sem_t *s);
int __wrap_sem_trywait(sem_t *s) { return sem_take(s, 0, NULL, "sem_trywait"); }
int __wrap_sem_timedwait(sem_t *s, const struct timespec *abs);
int __wrap_sem_timedwait(sem_t *s, const struct timespec *abs)
{
    return sem_take(s, 1, abs, "sem_timedwait");
}

int __wrap_sem_post(sem_t *sem);
int __wrap_sem_post(sem_t *sem)
{
    pt_sem_t *s = (pt_sem_t *)sem;
    int id = pt_obj_id(sem, "semaphore", "sem_post");
    pt_enter(id, "sem_post");
    s->value++;
    if (s->waiters)
        pt_wake(id, 0, "sem_post");
    pt_leave(id, "sem_post");
    return 0;
}

int __wrap_sem_getvalue(sem_t *sem, int *v);
int __wrap_sem_getvalue(sem_t *sem, int *v)
{
    pt_sem_t *s = (pt_sem_t *)sem;
    int id = pt_obj_id(sem, "semaphore", "sem_getvalue");
    pt_enter(id, "sem_getvalue");
    *v = (int)s->value;
    pt_leave(id, "sem_getvalue");
    return 0;
}
