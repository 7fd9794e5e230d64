/*
 * nullderef.c - a rank dereferences NULL: the fault is the program's own,
 * so it must reach the default action (death by SIGSEGV), not be swallowed
 * or turned into something else by the runtime's fault handler.
 *
 *   mp_nullderef ADDRESS [read]
 *
 * ADDRESS is the number to dereference, given on the command line ("0") so
 * the compiler cannot see it is NULL.  Rank 1 writes (or reads) it after
 * init, a shared allocation and a barrier; the others wait in a barrier.
 * Expected: sdsmrun exits 128+11 naming rank 1 and the signal.
 */
#define MP_NAME "nullderef"
#include "mp.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    uintptr_t addr = argc > 1 ? (uintptr_t)strtoull(argv[1], NULL, 0) : 0;
    int do_read = argc > 2 && strcmp(argv[2], "read") == 0;
    int me = sdsm_rank();
    volatile long *v = sdsm_alloc(sizeof(long), 1 % sdsm_nprocs());
    MP_NONNULL(v);
    *v = 5; /* the runtime's own faults on shared memory work first */
    MP_OK(sdsm_barrier());
    if (me == 1) {
        volatile long *bad = (volatile long *)addr;
        if (do_read)
            fprintf(stderr, "nullderef: rank 1 read %ld\n", *bad);
        else
            *bad = 42;
        sdsm_abort(1, "%s: rank %d: dereferencing %p did not fault", MP_NAME, me, (void *)bad);
    }
    sdsm_barrier(); /* rank 1 never arrives */
    sdsm_abort(1, "%s: rank %d: passed a barrier rank 1 never reached", MP_NAME, me);
}
