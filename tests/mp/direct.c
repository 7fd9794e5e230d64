/*
 * direct.c - a job started by a PMIx launcher (mpirun) instead of sdsmrun.
 *
 *   mp_direct N [abort]
 *
 * Every rank checks the job has N ranks and that the ranks are 0..N-1 once
 * each (a process that fell back to a job of one would see N = 1 or a
 * duplicate rank), writes its rank into its own slot of a shared array,
 * and after a barrier everyone checks every slot.  With "abort", the last
 * rank then calls sdsm_abort(3) while the others wait at a barrier: the
 * launcher must stop the whole job, non-zero.
 */
#define MP_NAME "direct"
#include "mp.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long want = argc > 1 ? atol(argv[1]) : 1;
    int abort_mode = argc > 2 && !strcmp(argv[2], "abort");
    int n = sdsm_nprocs(), me = sdsm_rank();
    MP_CHECK("nprocs", 0, want, n);

    volatile long *slot = sdsm_alloc((size_t)n * sizeof(long), SDSM_HOME_BLOCK);
    volatile long *seen = sdsm_alloc((size_t)n * sizeof(long), 0);
    MP_NONNULL(slot);
    MP_NONNULL(seen);
    slot[me] = 1000 + me;
    MP_OK(sdsm_lock(1));
    seen[me] += 1; /* a duplicate rank would count twice */
    MP_OK(sdsm_unlock(1));
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++) {
        MP_CHECK("slot", r, 1000 + r, slot[r]);
        MP_CHECK("seen", r, 1, seen[r]);
    }
    if (abort_mode) {
        if (me == n - 1)
            sdsm_abort(3, "direct: rank %d stops the job on purpose", me);
        MP_OK(sdsm_barrier()); /* never completes: the launcher ends the job */
    }
    return mp_finish("direct");
}
