/*
 * atomic.c - the __atomic_* calls that sdsmcc's -fno-inline-atomics makes
 * gcc emit for omp atomic, reductions and C11 atomics in the program.
 *
 * An inline atomic instruction on shared memory would act on this rank's
 * copy of the page only.  On a shared address (sdsm_omp_is_shared) inside
 * the team's parallel region, a 1- to 8-byte operation is done at the
 * page's home (sdsm__omp_atomic: one round trip, applied to the master
 * copy under its page lock; the caller's next release announces the
 * change).  A store, and an operation asking for release order, first
 * publishes this rank's unreleased writes (sdsm__omp_publish: diffs to
 * their homes, every other copy of those pages gone before it returns), so
 * whoever reads the new value at the home, with any order, already finds
 * no stale copy of the data written before it (shared_op).  Under ibec,
 * whose writes are bound to locks, and for 16-byte, odd-sized or
 * misaligned data, the operation is done on this rank's copy under an sdsm
 * lock chosen by the address (16-byte granules hashed over RT_ADDR_LOCKS
 * locks): the acquire makes the location's latest value visible here, the
 * release sends the new one on.  Which path an address takes depends only
 * on the protocol, its size and alignment, so the two never mix on one
 * location.
 * Everywhere else (private data, or outside parallel regions, where no
 * other thread runs) they are ordinary atomics: this file is compiled
 * without -fno-inline-atomics, so the builtins below are instructions.
 * 16-byte and odd-sized operations on private data use process-local
 * mutexes, as libatomic does.
 */
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "omp_int.h"
#include "omp_rt.h"
#include "pt_int.h"
#include "sdsm.h"

typedef unsigned __int128 u128;

extern __thread unsigned char sdsm_omp_flushed
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Shared data other ranks' threads may touch at once: inside a parallel
 * region, or anywhere in a pthreads program (its threads run on every
 * rank from the start; done on this rank's copy, their atomics lost
 * updates). */
static int is_shared(const volatile void *p)
{
    return (rt_self()->active_level > 0 || pt_mode) && sdsm_omp_is_shared((const void *)p);
}

int rt_home_atomic(volatile void *p, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                   uint64_t *old)
{
    for (int tries = 0;; tries++) {
        int rc = sdsm__omp_atomic((void *)p, size, op, val, expected, old);
        if (rc >= 0)
            return rc;
        if (rc != -EAGAIN) /* ibec, or misaligned: always so for this address */
            return SDSM_ENOTSUP;
        /* The home moved (at a barrier): ask the new one.  Never the lock
         * path here, which would not be atomic against the home's. */
        if (tries == 10000)
            rt_fatal("atomic", "the home of %p refused the operation %d times", (void *)p, tries);
        sched_yield();
    }
}

/* A thread spinning on an atomic read (a flag another thread sets: the
 * OpenMP flush/atomic idiom) never waits when the data's home is its own
 * rank, and would keep its rank's run slot (SDSM_RUN_THREADS) from the
 * thread it waits for.  Every 64th such call gives the slot to a ready
 * thread of the rank until one has to wait (sdsm_comp_wait; immediate
 * when none is ready). */
static __thread unsigned spin_calls;

static void spin_point(void)
{
    if ((++spin_calls & 63) == 0)
        sdsm_comp_wait();
}

static int addr_lock(const volatile void *p)
{
    uintptr_t a = (uintptr_t)p >> 4;
    a ^= a >> 13;
    return RT_LK_ADDR + (int)(a % RT_ADDR_LOCKS);
}

static void shared_lock(const volatile void *p) { rt_check(rt_lock(addr_lock(p)), "atomic: sdsm_lock"); }

static void shared_unlock(const volatile void *p)
{
    rt_check(sdsm_unlock(addr_lock(p)), "atomic: sdsm_unlock");
}

static pthread_mutex_t local_mu[64] = {[0 ... 63] = PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t *local_mutex(const volatile void *p) { return &local_mu[((uintptr_t)p >> 4) % 64]; }

/* Serialize an operation on p: the sdsm lock for shared data, else a local
 * mutex (only for sizes the CPU cannot do atomically). */
static void ser_lock(const volatile void *p, int shared)
{
    if (shared)
        shared_lock(p);
    else
        pthread_mutex_lock(local_mutex(p));
}

static void ser_unlock(const volatile void *p, int shared)
{
    if (shared)
        shared_unlock(p);
    else
        pthread_mutex_unlock(local_mutex(p));
}

#define OP_add(a, b)  ((a) + (b))
#define OP_sub(a, b)  ((a) - (b))
#define OP_and(a, b)  ((a) & (b))
#define OP_or(a, b)   ((a) | (b))
#define OP_xor(a, b)  ((a) ^ (b))
#define OP_nand(a, b) (~((a) & (b)))
#define AOP_add       RT_AOP_ADD
#define AOP_sub       RT_AOP_SUB
#define AOP_and       RT_AOP_AND
#define AOP_or        RT_AOP_OR
#define AOP_xor       RT_AOP_XOR
#define AOP_nand      RT_AOP_NAND

/* --- 1, 2, 4, 8 bytes on shared data ----------------------------------- */

/* op on the size-byte integer at p in this rank's copy (lock held). */
static int plain_op(volatile void *p, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                    uint64_t *old)
{
    uint64_t mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1, cur = 0, now;
    memcpy(&cur, (const void *)p, size); /* little-endian: the low bytes */
    *old = cur;
    switch (op) {
    case RT_AOP_LOAD: return 1;
    case RT_AOP_STORE:
    case RT_AOP_XCHG: now = val; break;
    case RT_AOP_CAS:
        if (cur != (expected & mask))
            return 0;
        now = val;
        break;
    case RT_AOP_ADD: now = cur + val; break;
    case RT_AOP_SUB: now = cur - val; break;
    case RT_AOP_AND: now = cur & val; break;
    case RT_AOP_OR: now = cur | val; break;
    case RT_AOP_XOR: now = cur ^ val; break;
    default: now = ~(cur & val); break;
    }
    memcpy((void *)p, &now, size);
    return 1;
}

/*
 * op on shared data; returns the old value, *ok the compare's outcome.
 * Done at the home.  A relaxed read-modify-write needs nothing more (the
 * OpenMP default for atomic updates and what reductions use).  Loads,
 * stores and ordered operations also hold the address's lock around it:
 * a release then makes this rank's earlier writes visible to whoever
 * acquires next, an acquire sees what the holders before released (the
 * flush-and-flag idiom, atomic release/acquire and seq_cst).  Under ibec
 * (no home operations) every operation is a read-modify-write of this
 * rank's copy under that lock.
 */
/*
 * Relaxed loads of shared data repeat: a search reads its bound on every
 * step (tsp), a spin reads its flag.  Each thread keeps the last value it
 * loaded from one address for RELAXED_REUSE_NS and answers repeated relaxed
 * loads of it from there.  The value only ever lags (by that long at most),
 * so a spinning reader still sees the change soon, and a change it does see
 * comes from a real load, with the lock's acquire; any operation of the
 * thread itself on the address drops the cached value first (it reads its
 * own writes).
 */
#define RELAXED_REUSE_NS 200000
static __thread struct {
    const volatile void *p;
    unsigned size, epoch;  /* epoch: rt_sync_epoch when loaded */
    uint64_t val, at, tsc; /* at: CLOCK_MONOTONIC ns, tsc: the counter */
} last_load;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The age of the value is checked on every reuse, so the clock is read on
 * every relaxed load: clock_gettime was a fifth of tsp_omp-sdsm's time.  On
 * x86-64 the time stamp counter is read instead, once its rate is known:
 * reuse_ticks (the counter's ticks in RELAXED_REUSE_NS) is measured between
 * a thread's first real load and one at least CAL_NS later, where the
 * kernel's clock source is the counter (tsc_trusted).  A counter that
 * went backwards (another CPU) reads as a huge age: the value is loaded
 * again, never kept longer.
 */
#define CAL_NS 10000000u
static uint64_t reuse_ticks;
static __thread uint64_t cal_ns, cal_tsc;

static uint64_t tsc_now(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

/* The kernel keeps its own time with the counter only if the counter is
 * steady and agrees between CPUs: otherwise the clock is read as before. */
static int tsc_trusted(void)
{
    static int ok = -1;
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v < 0) {
        char buf[16] = "";
        FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
        if (f) {
            if (!fgets(buf, sizeof buf, f))
                buf[0] = '\0';
            fclose(f);
        }
        v = strcmp(buf, "tsc\n") == 0;
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return v;
}

static void calibrate(uint64_t ns, uint64_t tsc)
{
#if defined(__x86_64__)
    if (__atomic_load_n(&reuse_ticks, __ATOMIC_RELAXED) || !tsc_trusted())
        return;
    if (!cal_ns || tsc <= cal_tsc || ns < cal_ns) {
        cal_ns = ns;
        cal_tsc = tsc;
    } else if (ns - cal_ns >= CAL_NS) {
        uint64_t t = (uint64_t)((unsigned __int128)(tsc - cal_tsc) * RELAXED_REUSE_NS / (ns - cal_ns));
        __atomic_store_n(&reuse_ticks, t ? t : 1, __ATOMIC_RELAXED);
    }
#else
    (void)ns, (void)tsc;
#endif
}

static int reuse_load(const volatile void *p, unsigned size, uint64_t *v)
{
    if (last_load.p != p || last_load.size != size || last_load.epoch != rt_sync_epoch)
        return 0;
    uint64_t ticks = __atomic_load_n(&reuse_ticks, __ATOMIC_RELAXED);
    if (ticks ? tsc_now() - last_load.tsc > ticks : now_ns() - last_load.at > RELAXED_REUSE_NS)
        return 0;
    *v = last_load.val;
    return 1;
}

static uint64_t shared_op(volatile void *p, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                          int release, int *ok);

/*
 * A relaxed load past the reuse time: read at the home (one round trip).
 * It needs no lock for a flag's acquire: the writer published the data
 * before it wrote the flag (shared_op), so a new value seen here means no
 * stale copy of that data is left.  Before, such a load took the address's
 * lock whenever its value changed, which the writer's store had taken
 * around its release; every reduction's combining load (a relaxed load
 * feeding a compare-and-swap, as gcc makes it) at a rank that was not the
 * variable's home then cost a lock round trip and an eager release of all
 * the rank's writes: NPB CG took 848 such locks per rank at 2 ranks.
 */
static uint64_t relaxed_load(const volatile void *p, unsigned size)
{
    uint64_t v = 0;
    if (rt_home_atomic((volatile void *)p, size, RT_AOP_LOAD, 0, 0, &v) < 0)
        v = shared_op((volatile void *)p, size, RT_AOP_LOAD, 0, 0, 0, NULL);
    last_load.p = p;
    last_load.size = size;
    last_load.epoch = rt_sync_epoch;
    last_load.val = v;
    last_load.at = now_ns();
    last_load.tsc = tsc_now();
    calibrate(last_load.at, last_load.tsc);
    return v;
}

static uint64_t shared_op(volatile void *p, unsigned size, unsigned op, uint64_t val, uint64_t expected,
                          int release, int *ok)
{
    uint64_t old = 0;
    if (last_load.p == p)
        last_load.p = NULL;
    /* A store (a flag written with `omp atomic write` after a flush is the
     * OpenMP idiom), a release, or a read-modify-write after a flush of
     * this thread (`data; flush; atomic update` of the flag; fences.c marks
     * the flushes sdsmcc made calls): this rank's writes first.  A
     * reduction's combine, with no flush before it, publishes nothing. */
    if (op == RT_AOP_STORE || release || (op != RT_AOP_LOAD && sdsm_omp_flushed)) {
        sdsm_omp_flushed = 0;
        if (sdsm__omp_publish())
            rt_fatal("atomic", "this rank's writes could not be published");
    }
    int rc = rt_home_atomic(p, size, op, val, expected, &old);
    if (rc >= 0)
        goto out;
    shared_lock(p);
    rc = plain_op(p, size, op, val, expected, &old);
    shared_unlock(p);
out:
    if (ok)
        *ok = rc;
    return old;
}

/* Does memory order m release (the writes before the operation must be
 * seen by whoever sees its result)?  A failed compare-and-swap writes
 * nothing, so only its success order counts. */
static int releases(int m)
{
    m &= 0xffff; /* (gcc's HLE bits above) */
    return m == __ATOMIC_RELEASE || m == __ATOMIC_ACQ_REL || m == __ATOMIC_SEQ_CST;
}

/* Private data: the CPU's atomics (this file is compiled with them inline). */
#define LOCKFREE(N, T)                                                                                       \
    T rt_load_##N(const volatile void *p, int m) __asm__("__atomic_load_" #N);                               \
    T rt_load_##N(const volatile void *p, int m)                                                             \
    {                                                                                                        \
        uint64_t v_;                                                                                         \
        if (m == __ATOMIC_RELAXED && reuse_load(p, N, &v_)) {                                                \
            spin_point(); /* shared, in this region: the epoch changed at its barriers */                    \
            return (T)v_;                                                                                    \
        }                                                                                                    \
        if (!is_shared(p))                                                                                   \
            return __atomic_load_n((const volatile T *)p, __ATOMIC_SEQ_CST);                                 \
        spin_point();                                                                                        \
        if (m == __ATOMIC_RELAXED) /* not kept (above) */                                                    \
            return (T)relaxed_load(p, N);                                                                    \
        return (T)shared_op((volatile void *)p, N, RT_AOP_LOAD, 0, 0, 0, NULL);                              \
    }                                                                                                        \
    void rt_store_##N(volatile void *p, T v, int m) __asm__("__atomic_store_" #N);                           \
    void rt_store_##N(volatile void *p, T v, int m)                                                          \
    {                                                                                                        \
        (void)m;                                                                                             \
        if (!is_shared(p)) {                                                                                 \
            __atomic_store_n((volatile T *)p, v, __ATOMIC_SEQ_CST);                                          \
            return;                                                                                          \
        }                                                                                                    \
        shared_op(p, N, RT_AOP_STORE, v, 0, 1, NULL);                                                        \
    }                                                                                                        \
    T rt_exchange_##N(volatile void *p, T v, int m) __asm__("__atomic_exchange_" #N);                        \
    T rt_exchange_##N(volatile void *p, T v, int m)                                                          \
    {                                                                                                        \
        if (!is_shared(p))                                                                                   \
            return __atomic_exchange_n((volatile T *)p, v, __ATOMIC_SEQ_CST);                                \
        return (T)shared_op(p, N, RT_AOP_XCHG, v, 0, releases(m), NULL);                                     \
    }                                                                                                        \
    bool rt_cas_##N(volatile void *p, void *e, T d, int sm,                                                  \
                    int fm) __asm__("__atomic_compare_exchange_" #N);                                        \
    bool rt_cas_##N(volatile void *p, void *e, T d, int sm, int fm)                                          \
    {                                                                                                        \
        if (!is_shared(p))                                                                                   \
            return __atomic_compare_exchange_n((volatile T *)p, (T *)e, d, false, __ATOMIC_SEQ_CST,          \
                                               __ATOMIC_SEQ_CST);                                            \
        spin_point();                                                                                        \
        int ok;                                                                                              \
        uint64_t o = shared_op(p, N, RT_AOP_CAS, d, *(T *)e, releases(sm), &ok);                             \
        if (!ok)                                                                                             \
            *(T *)e = (T)o;                                                                                  \
        return ok;                                                                                           \
    }

#define LOCKFREE_OP(N, T, op)                                                                                \
    T rt_fetch_##op##_##N(volatile void *p, T v, int m) __asm__("__atomic_fetch_" #op "_" #N);               \
    T rt_fetch_##op##_##N(volatile void *p, T v, int m)                                                      \
    {                                                                                                        \
        if (!is_shared(p))                                                                                   \
            return __atomic_fetch_##op((volatile T *)p, v, __ATOMIC_SEQ_CST);                                \
        return (T)shared_op(p, N, AOP_##op, v, 0, releases(m), NULL);                                        \
    }                                                                                                        \
    T rt_##op##_fetch_##N(volatile void *p, T v, int m) __asm__("__atomic_" #op "_fetch_" #N);               \
    T rt_##op##_fetch_##N(volatile void *p, T v, int m)                                                      \
    {                                                                                                        \
        if (!is_shared(p))                                                                                   \
            return __atomic_##op##_fetch((volatile T *)p, v, __ATOMIC_SEQ_CST);                              \
        T o = (T)shared_op(p, N, AOP_##op, v, 0, releases(m), NULL);                                         \
        return (T)OP_##op(o, v);                                                                             \
    }

/* --- 16 bytes: under a lock everywhere -------------------------------- */

/* Under the address's lock, shared or not: *p becomes NEW, an expression
 * of its old value named old; the old value is the result. */
#define LOCKED_RMW(T, p, old, NEW)                                                                           \
    __extension__({                                                                                          \
        int sh_ = is_shared(p);                                                                              \
        ser_lock(p, sh_);                                                                                    \
        T old = *(volatile T *)(p);                                                                          \
        *(volatile T *)(p) = (T)(NEW);                                                                       \
        ser_unlock(p, sh_);                                                                                  \
        old;                                                                                                 \
    })

#define LOCKED(N, T)                                                                                         \
    T rt_load_##N(const volatile void *p, int m) __asm__("__atomic_load_" #N);                               \
    T rt_load_##N(const volatile void *p, int m)                                                             \
    {                                                                                                        \
        (void)m;                                                                                             \
        int sh = is_shared(p);                                                                               \
        ser_lock(p, sh);                                                                                     \
        T v = *(const volatile T *)p;                                                                        \
        ser_unlock(p, sh);                                                                                   \
        return v;                                                                                            \
    }                                                                                                        \
    void rt_store_##N(volatile void *p, T v, int m) __asm__("__atomic_store_" #N);                           \
    void rt_store_##N(volatile void *p, T v, int m)                                                          \
    {                                                                                                        \
        (void)m;                                                                                             \
        int sh = is_shared(p);                                                                               \
        ser_lock(p, sh);                                                                                     \
        *(volatile T *)p = v;                                                                                \
        ser_unlock(p, sh);                                                                                   \
    }                                                                                                        \
    T rt_exchange_##N(volatile void *p, T v, int m) __asm__("__atomic_exchange_" #N);                        \
    T rt_exchange_##N(volatile void *p, T v, int m)                                                          \
    {                                                                                                        \
        (void)m;                                                                                             \
        return LOCKED_RMW(T, p, old, v);                                                                     \
    }                                                                                                        \
    bool rt_cas_##N(volatile void *p, void *e, T d, int sm,                                                  \
                    int fm) __asm__("__atomic_compare_exchange_" #N);                                        \
    bool rt_cas_##N(volatile void *p, void *e, T d, int sm, int fm)                                          \
    {                                                                                                        \
        (void)sm, (void)fm;                                                                                  \
        int sh = is_shared(p);                                                                               \
        ser_lock(p, sh);                                                                                     \
        T cur = *(volatile T *)p;                                                                            \
        bool ok = cur == *(T *)e;                                                                            \
        if (ok)                                                                                              \
            *(volatile T *)p = d;                                                                            \
        else                                                                                                 \
            *(T *)e = cur;                                                                                   \
        ser_unlock(p, sh);                                                                                   \
        return ok;                                                                                           \
    }

#define LOCKED_OP(N, T, op)                                                                                  \
    T rt_fetch_##op##_##N(volatile void *p, T v, int m) __asm__("__atomic_fetch_" #op "_" #N);               \
    T rt_fetch_##op##_##N(volatile void *p, T v, int m)                                                      \
    {                                                                                                        \
        (void)m;                                                                                             \
        return LOCKED_RMW(T, p, old, OP_##op(old, v));                                                       \
    }                                                                                                        \
    T rt_##op##_fetch_##N(volatile void *p, T v, int m) __asm__("__atomic_" #op "_fetch_" #N);               \
    T rt_##op##_fetch_##N(volatile void *p, T v, int m)                                                      \
    {                                                                                                        \
        (void)m;                                                                                             \
        T old = LOCKED_RMW(T, p, o, OP_##op(o, v));                                                          \
        return (T)OP_##op(old, v);                                                                           \
    }

#define ALL_OPS(K, N, T) K(N, T, add) K(N, T, sub) K(N, T, and) K(N, T, or) K(N, T, xor) K(N, T, nand)

LOCKFREE(1, uint8_t)
LOCKFREE(2, uint16_t)
LOCKFREE(4, uint32_t)
LOCKFREE(8, uint64_t)
LOCKED(16, u128)
ALL_OPS(LOCKFREE_OP, 1, uint8_t)
ALL_OPS(LOCKFREE_OP, 2, uint16_t)
ALL_OPS(LOCKFREE_OP, 4, uint32_t)
ALL_OPS(LOCKFREE_OP, 8, uint64_t)
ALL_OPS(LOCKED_OP, 16, u128)

/* --- any size (structs): the sized calls when they fit, else a lock ---- */

static int sized(size_t n, const volatile void *p)
{
    return (n == 1 || n == 2 || n == 4 || n == 8 || n == 16) && ((uintptr_t)p & (n - 1)) == 0;
}

void rt_load_any(size_t n, const volatile void *p, void *ret, int m) __asm__("__atomic_load");
void rt_load_any(size_t n, const volatile void *p, void *ret, int m)
{
    switch (sized(n, p) ? n : 0) {
    case 1: *(uint8_t *)ret = rt_load_1(p, m); return;
    case 2: *(uint16_t *)ret = rt_load_2(p, m); return;
    case 4: *(uint32_t *)ret = rt_load_4(p, m); return;
    case 8: *(uint64_t *)ret = rt_load_8(p, m); return;
    case 16: *(u128 *)ret = rt_load_16(p, m); return;
    }
    int sh = is_shared(p);
    ser_lock(p, sh);
    memcpy(ret, (const void *)p, n);
    ser_unlock(p, sh);
}

void rt_store_any(size_t n, volatile void *p, void *val, int m) __asm__("__atomic_store");
void rt_store_any(size_t n, volatile void *p, void *val, int m)
{
    switch (sized(n, p) ? n : 0) {
    case 1: rt_store_1(p, *(uint8_t *)val, m); return;
    case 2: rt_store_2(p, *(uint16_t *)val, m); return;
    case 4: rt_store_4(p, *(uint32_t *)val, m); return;
    case 8: rt_store_8(p, *(uint64_t *)val, m); return;
    case 16: rt_store_16(p, *(u128 *)val, m); return;
    }
    int sh = is_shared(p);
    ser_lock(p, sh);
    memcpy((void *)p, val, n);
    ser_unlock(p, sh);
}

void rt_exchange_any(size_t n, volatile void *p, void *val, void *ret, int m) __asm__("__atomic_exchange");
void rt_exchange_any(size_t n, volatile void *p, void *val, void *ret, int m)
{
    switch (sized(n, p) ? n : 0) {
    case 1: *(uint8_t *)ret = rt_exchange_1(p, *(uint8_t *)val, m); return;
    case 2: *(uint16_t *)ret = rt_exchange_2(p, *(uint16_t *)val, m); return;
    case 4: *(uint32_t *)ret = rt_exchange_4(p, *(uint32_t *)val, m); return;
    case 8: *(uint64_t *)ret = rt_exchange_8(p, *(uint64_t *)val, m); return;
    case 16: *(u128 *)ret = rt_exchange_16(p, *(u128 *)val, m); return;
    }
    int sh = is_shared(p);
    ser_lock(p, sh);
    memcpy(ret, (const void *)p, n);
    memcpy((void *)p, val, n);
    ser_unlock(p, sh);
}

bool rt_cas_any(size_t n, volatile void *p, void *e, void *d, int sm,
                int fm) __asm__("__atomic_compare_exchange");
bool rt_cas_any(size_t n, volatile void *p, void *e, void *d, int sm, int fm)
{
    switch (sized(n, p) ? n : 0) {
    case 1: return rt_cas_1(p, e, *(uint8_t *)d, sm, fm);
    case 2: return rt_cas_2(p, e, *(uint16_t *)d, sm, fm);
    case 4: return rt_cas_4(p, e, *(uint32_t *)d, sm, fm);
    case 8: return rt_cas_8(p, e, *(uint64_t *)d, sm, fm);
    case 16: return rt_cas_16(p, e, *(u128 *)d, sm, fm);
    }
    int sh = is_shared(p);
    ser_lock(p, sh);
    bool ok = memcmp((const void *)p, e, n) == 0;
    if (ok)
        memcpy((void *)p, d, n);
    else
        memcpy(e, (const void *)p, n);
    ser_unlock(p, sh);
    return ok;
}

bool rt_is_lock_free(size_t n, const volatile void *p) __asm__("__atomic_is_lock_free");
bool rt_is_lock_free(size_t n, const volatile void *p)
{
    (void)n, (void)p;
    return false; /* shared data goes through a lock */
}

/* C11 floating-point compound assignments on _Atomic raise their exceptions here. */
void rt_feraiseexcept(int e) __asm__("__atomic_feraiseexcept");
void rt_feraiseexcept(int e) { feraiseexcept(e); }
