/*
 * mismatch.c - ranks disagree on a collective allocation.
 *
 *   mp_mismatch abort     rank 1 asks sdsm_alloc for twice the size: the job
 *                         must stop (non-zero exit) with a message naming the
 *                         call and the ranks ("disagree").  Never prints OK.
 *   mp_mismatch return    run with SDSM_ERRORS=return: every rank must get
 *                         NULL; the runtime stays usable (the next, agreeing
 *                         allocation works and is shared); prints
 *                         "OK mismatch_return".
 */
#define MP_NAME "mismatch"
#include "mp.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int ret_mode = argc > 1 && strcmp(argv[1], "return") == 0;
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size();

    /* A good allocation first, so the bad one is not the very first call. */
    volatile long *res = sdsm_alloc((size_t)n * sizeof(long), 0);
    MP_NONNULL(res);
    MP_OK(sdsm_barrier());

    size_t size = 4 * ps;
    void *p = sdsm_alloc(me == 1 ? 2 * size : size, SDSM_HOME_CYCLIC);
    if (!ret_mode) {
        /* Not reached by a correct runtime: the job is stopped. */
        fprintf(stderr, "mismatch: rank %d: sdsm_alloc returned %p in abort mode\n", me, p);
        MP_OK(sdsm_barrier());
        if (me == 0)
            printf("mismatch: the job was not stopped\n");
        sdsm_finalize();
        return 3;
    }

    res[me] = p == NULL ? 1 : 2;
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        MP_CHECK("sdsm_alloc returned NULL (1) or not (2) on rank", r, 1, res[r]);

    /* A home mismatch is also a mismatch. */
    p = sdsm_alloc(size, me == n - 1 ? 0 : SDSM_HOME_BLOCK);
    MP_ASSERT(p == NULL, "sdsm_alloc with a different home on rank %d returned %p", n - 1, p);
    /* And calloc with a different element size. */
    p = sdsm_calloc(64, me == 0 ? 8 : 16, 0);
    MP_ASSERT(p == NULL, "sdsm_calloc with different element sizes returned %p", p);

    /* The runtime is still usable: an agreeing allocation works and is shared. */
    volatile long *q = sdsm_alloc(size, SDSM_HOME_CYCLIC);
    MP_NONNULL(q);
    q[me * 8] = 1000 + me;
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        MP_CHECK("shared long after the mismatch", r * 8, 1000 + r, q[r * 8]);
    MP_OK(sdsm_barrier());
    return mp_finish("mismatch_return");
}
