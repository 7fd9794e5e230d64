/*
 * crash.c - rank 1 crashes in program code, in one of several ways; the
 * runtime must print one line saying what the faulting address is (and
 * where the program was), then let the rank die of the same signal.
 *
 *   mp_crash null|freed|rodata|guard|tls|fpe|ill|abort|bus
 *
 *   null    writes through a NULL pointer
 *   freed   writes to a shared block that every rank has freed
 *   rodata  writes to a string literal (mapped, read-only)
 *   guard   a compute thread recurses until it reaches its stack's guard
 *   tls     reads a __thread variable of a compute thread that has ended
 *           (its 64 MiB stack, larger than the C library keeps, is unmapped)
 *   fpe     divides by zero; ill: an invalid instruction; abort: abort();
 *   bus     reads past the end of a mapped empty file
 *
 * The other ranks wait in a barrier rank 1 never reaches.  tests/mp/
 * crash_test.sh checks the line and the launcher's verdict.
 */
#define _GNU_SOURCE
#define MP_NAME "crash"
#include "mp.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

static __thread long tls_var;
static long *volatile published;
static volatile int zero; /* the compiler must not see the division by zero */

static __attribute__((noinline)) void crash_null(void) { *(volatile long *)(uintptr_t)zero = 42; }

static __attribute__((noinline)) int recurse(int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    if (depth < 0) /* never: but the compiler cannot tell the recursion has no end */
        return zero;
    return recurse(depth + 1) + frame[0];
}

static void *overflow_thread(void *arg)
{
    (void)arg;
    recurse(0);
    return NULL;
}

static void *tls_thread(void *arg)
{
    (void)arg;
    tls_var = 7;
    published = &tls_var;
    return NULL;
}

static void run_thread(void *(*fn)(void *), size_t stack)
{
    pthread_attr_t a;
    if (stack &&
        (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, stack) || pthread_setattr_default_np(&a)))
        sdsm_abort(1, "%s: cannot set the default stack size", MP_NAME);
    sdsm_thread_t t;
    MP_OK(sdsm_thread_create(&t, 0, fn, NULL));
    MP_OK(sdsm_thread_join(t, NULL));
}

static void crash(const char *how)
{
    if (!strcmp(how, "null")) {
        crash_null();
    } else if (!strcmp(how, "rodata")) {
        volatile char *s = (volatile char *)(uintptr_t) "a string literal";
        s[zero] = 'A';
    } else if (!strcmp(how, "guard")) {
        run_thread(overflow_thread, 0);
    } else if (!strcmp(how, "tls")) {
        run_thread(tls_thread, 64ul << 20);
        fprintf(stderr, "crash: rank 1 read %ld\n", *published);
    } else if (!strcmp(how, "fpe")) {
        volatile int num = 100; /* 1 / x would become a comparison: no division */
        fprintf(stderr, "crash: rank 1 computed %d\n", num / zero);
    } else if (!strcmp(how, "ill")) {
        __builtin_trap();
    } else if (!strcmp(how, "abort")) {
        abort();
    } else if (!strcmp(how, "bus")) {
        int fd = memfd_create("crash", 0);
        volatile char *p = fd < 0 ? NULL : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        if (!p || p == MAP_FAILED)
            sdsm_abort(1, "%s: cannot map an empty file", MP_NAME);
        fprintf(stderr, "crash: rank 1 read %d\n", p[zero]);
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    const char *how = argc > 1 ? argv[1] : "null";
    int me = sdsm_rank();
    volatile long *v = sdsm_alloc(4096, 1 % sdsm_nprocs());
    MP_NONNULL(v);
    *v = 5; /* the runtime's own faults on shared memory work first */
    MP_OK(sdsm_barrier());
    if (!strcmp(how, "freed")) {
        MP_OK(sdsm_free((void *)v));
        MP_OK(sdsm_barrier());
    }
    if (me == 1) {
        if (!strcmp(how, "freed"))
            *v = 6;
        else
            crash(how);
        sdsm_abort(1, "%s: rank %d: '%s' did not crash", MP_NAME, me, how);
    }
    sdsm_barrier(); /* rank 1 never arrives */
    sdsm_abort(1, "%s: rank %d: passed a barrier rank 1 never reached", MP_NAME, me);
}
