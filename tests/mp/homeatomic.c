/*
 * homeatomic.c - atomic operations done at a page's home (the path
 * libsdsm-omp takes for an OpenMP program's atomics): every rank hammers
 * counters on pages homed at rank 0, at the last rank and by first touch,
 * with fetch-add, compare-exchange loops on doubles, exchange and or; its
 * own plain read right after its own operation must see it, and after a
 * barrier everyone's plain reads must see every operation.  Under ibec the
 * path is refused (the runtime locks instead), which is checked too.
 *
 * Usage: homeatomic ITERS
 */
#define MP_NAME "homeatomic"
#include "mp.h"

#include <errno.h>

enum { AOP_LOAD, AOP_STORE, AOP_XCHG, AOP_CAS, AOP_ADD, AOP_SUB, AOP_AND, AOP_OR };
int sdsm__omp_atomic(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old);

/* As the OpenMP runtime calls it (omp/atomic.c, rt_home_atomic): -EAGAIN
 * asks again.  The home refuses while it does not know it is the home
 * yet: a first-touch page's manager may tell another rank who won the
 * claim before its answer reaches the winner. */
static int home_op(void *addr, unsigned size, unsigned op, uint64_t val, uint64_t expected, uint64_t *old)
{
    int rc, tries = 0;
    while ((rc = sdsm__omp_atomic(addr, size, op, val, expected, old)) == -EAGAIN && ++tries < 10000)
        mp_sleep_ms(0);
    return rc;
}

static void add_double(double *d, double x)
{
    uint64_t old, want, seen;
    if (home_op(d, 8, AOP_LOAD, 0, 0, &old) != 1)
        sdsm_abort(1, "homeatomic: rank %d: load refused", sdsm_rank());
    for (;;) {
        double v;
        memcpy(&v, &old, 8);
        v += x;
        memcpy(&want, &v, 8);
        int ok = home_op(d, 8, AOP_CAS, want, old, &seen);
        if (ok == 1)
            return;
        MP_ASSERT(ok == 0, "compare-exchange status %d", ok);
        old = seen;
    }
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs(), iters = argc > 1 ? atoi(argv[1]) : 100;
    const char *proto = getenv("SDSM_PROTOCOL");
    int ibec = proto && !strcmp(proto, "ibec");
    long *c0 = sdsm_calloc(512, sizeof(long), 0);
    long *cl = sdsm_calloc(512, sizeof(long), n - 1);
    long *ft = sdsm_calloc(512, sizeof(long), SDSM_HOME_FIRST_TOUCH);
    double *d = sdsm_calloc(512, sizeof(double), SDSM_HOME_CYCLIC);
    uint32_t *bits = sdsm_calloc(1024, sizeof(uint32_t), 0);
    uint64_t old;
    if (ibec) {
        MP_ASSERT(sdsm__omp_atomic(c0, 8, AOP_ADD, 1, 0, &old) < 0, "ibec must refuse");
        sdsm_finalize();
        if (me == 0)
            printf("OK homeatomic\n");
        return 0;
    }
    sdsm_barrier();
    for (int i = 0; i < iters; i++) {
        long *targets[3] = {&c0[7], &cl[100], &ft[3]};
        for (int t = 0; t < 3; t++) {
            int rc = home_op(targets[t], 8, AOP_ADD, (uint64_t)(me + 1), 0, &old);
            MP_ASSERT(rc == 1, "fetch-add on counter %d at iteration %d refused: %d", t, i, rc);
            /* Its own operation is visible to its own plain read at once
             * (its copy, if it holds one, got the result; else it fetches
             * the home's, which may be newer still). */
            long seen = *(volatile long *)targets[t];
            MP_ASSERT(seen >= (long)old + me + 1,
                      "own read of counter %d: %ld, below its own "
                      "result %ld",
                      t, seen, (long)old + me + 1);
        }
        add_double(&d[5], 0.5);
        MP_ASSERT(home_op(&bits[me % 1024], 4, AOP_OR, 1u << (i % 32), 0, &old) == 1, "or");
    }
    /* A page this rank also writes plainly (twinned): the operation's bytes
     * must not travel back home in this rank's diff (rounds, so that a
     * diff carrying them would be caught overwriting newer values). */
    for (int round = 1; round <= 20; round++) {
        c0[9 + me % 8] = round;
        MP_ASSERT(home_op(&c0[8], 8, AOP_ADD, 5, 0, &old) == 1, "add");
        c0[9 + me % 8] = -round;
        sdsm_barrier();
        MP_CHECK("twinned c0", 8, 5L * n * round, c0[8]);
        sdsm_barrier();
    }
    long want = (long)iters * n * (n + 1) / 2;
    MP_CHECK("c0", 7, want, c0[7]);
    MP_CHECK("cl", 100, want, cl[100]);
    MP_CHECK("ft", 3, want, ft[3]);
    MP_CHECK("d", 5, (long)(iters * n), (long)(d[5] * 2));
    MP_CHECK("bits", me, iters >= 32 ? 0xffffffffL : (long)((1u << iters) - 1), (long)bits[me]);
    sdsm_barrier();
    /* Exchange: each rank swaps its id in; the values seen form a chain. */
    if (me == 0)
        c0[20] = -1;
    sdsm_barrier();
    MP_ASSERT(home_op(&c0[20], 8, AOP_XCHG, (uint64_t)me, 0, &old) == 1, "xchg");
    c0[32 + me] = (long)old;
    sdsm_barrier();
    if (me == 0) {
        int minus = 0;
        long seen = 0;
        for (int r = 0; r < n; r++) {
            minus += c0[32 + r] == -1;
            seen += c0[32 + r] + (c0[32 + r] == -1);
        }
        MP_CHECK("xchg chain", 0, 1, minus);
        MP_CHECK("xchg sum", 0, (long)n * (n - 1) / 2 - c0[20], seen);
    }
    /* A plain read after an acquire sees an atomic another rank did (not its own). */
    sdsm_barrier();
    sdsm_finalize();
    if (me == 0)
        printf("OK homeatomic\n");
    return 0;
}
