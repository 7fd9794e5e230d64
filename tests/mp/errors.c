/*
 * errors.c - misuse of the API is reported with the documented codes.
 *
 *   mp_errors return    run with SDSM_ERRORS=return: every misuse returns its
 *                       code and the job goes on; prints "OK errors".
 *   mp_errors abort     default error mode: rank 1 unlocks a lock it does
 *                       not hold; the job must stop with a message naming
 *                       sdsm_unlock and the rank.  Never prints OK.
 */
#define MP_NAME "errors"
#include "mp.h"

static void check_strerror(void)
{
    static const int codes[] = {SDSM_OK,        SDSM_EINVAL, SDSM_ENOINIT, SDSM_ENOMEM,  SDSM_EMISMATCH,
                                SDSM_ENOTHELD,  SDSM_EPEER,  SDSM_EPROTO,  SDSM_ENOTSUP, SDSM_ESYS,
                                SDSM_ETIMEDOUT, SDSM_ESTATE, SDSM_EHELD,   SDSM_ENOHOME, SDSM_EAUTH};
    const int nc = (int)(sizeof codes / sizeof *codes);
    for (int i = 0; i < nc; i++) {
        const char *s = sdsm_strerror(codes[i]);
        MP_ASSERT(s != NULL && s[0] != '\0', "sdsm_strerror(%d) is empty", codes[i]);
        for (int j = 0; j < i; j++)
            MP_ASSERT(strcmp(s, sdsm_strerror(codes[j])) != 0,
                      "sdsm_strerror(%d) == sdsm_strerror(%d) == \"%s\"", codes[i], codes[j], s);
    }
    /* Unknown codes still get a string. */
    const char *u = sdsm_strerror(-1000);
    MP_ASSERT(u != NULL && u[0] != '\0', "sdsm_strerror(-1000) is empty");
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size();
    volatile long *res = sdsm_alloc((size_t)n * sizeof(long), 0);
    MP_NONNULL(res);
    MP_OK(sdsm_barrier());

    if (argc < 2 || strcmp(argv[1], "return") != 0) {
        /* Default mode: rank 1 releases a lock it never took. */
        if (me == 1) {
            int rc = sdsm_unlock(21);
            fprintf(stderr, "errors: rank 1: sdsm_unlock of a free lock returned %d in abort mode\n", rc);
            sdsm_finalize();
            return 3;
        }
        sdsm_barrier(); /* rank 1 never arrives */
        sdsm_abort(1, "%s: rank %d: passed a barrier rank 1 never reached", MP_NAME, me);
    }

    check_strerror();

    /* sdsm_init again: wrong state. */
    MP_CHECK("sdsm_init twice", 0, SDSM_ESTATE, sdsm_init(NULL, NULL));

    /* Locks: not held, held twice, negative ids. */
    int L = 30 + me; /* each rank its own lock, so nobody blocks */
    MP_CHECK("unlock of a lock never taken", L, SDSM_ENOTHELD, sdsm_unlock(L));
    MP_CHECK("lock", L, 0, sdsm_lock(L));
    MP_CHECK("lock twice by the same thread", L, SDSM_EHELD, sdsm_lock(L));
    MP_CHECK("unlock", L, 0, sdsm_unlock(L));
    MP_CHECK("unlock after the unlock", L, SDSM_ENOTHELD, sdsm_unlock(L));
    MP_CHECK("lock again after the errors", L, 0, sdsm_lock(L));
    MP_CHECK("unlock again after the errors", L, 0, sdsm_unlock(L));
    MP_CHECK("lock(-1)", -1, SDSM_EINVAL, sdsm_lock(-1));
    MP_CHECK("lock(INT_MIN)", 0, SDSM_EINVAL, sdsm_lock(-2147483647 - 1));
    MP_CHECK("unlock(-1)", -1, SDSM_EINVAL, sdsm_unlock(-1));
    MP_CHECK("cond_signal(-1)", -1, SDSM_EINVAL, sdsm_cond_signal(-1));
    MP_CHECK("cond_broadcast(-5)", -5, SDSM_EINVAL, sdsm_cond_broadcast(-5));
    MP_CHECK("lock before the cond_wait checks", L, 0, sdsm_lock(L));
    MP_CHECK("cond_wait(-1, L) with L held", -1, SDSM_EINVAL, sdsm_cond_wait(-1, L));
    MP_CHECK("cond_wait(3, -1)", -1, SDSM_EINVAL, sdsm_cond_wait(3, -1));
    MP_CHECK("unlock after cond_wait errors", L, 0, sdsm_unlock(L));
    MP_CHECK("cond_wait with the lock not held", L, SDSM_ENOTHELD, sdsm_cond_wait(3, L));

    /* A lock held by another rank is not "held by the calling thread". */
    if (me == 0)
        MP_OK(sdsm_lock(40));
    MP_OK(sdsm_barrier());
    if (me != 0)
        MP_CHECK("unlock of a lock another rank holds", 40, SDSM_ENOTHELD, sdsm_unlock(40));
    MP_OK(sdsm_barrier());
    if (me == 0)
        MP_OK(sdsm_unlock(40));

    /* sdsm_home_of outside shared memory. */
    long local = 0;
    MP_CHECK("sdsm_home_of(stack address)", 0, SDSM_EINVAL, sdsm_home_of(&local));
    MP_CHECK("sdsm_home_of(NULL)", 0, SDSM_EINVAL, sdsm_home_of(NULL));
    long *heap = malloc(64);
    MP_ASSERT(heap != NULL, "out of memory");
    MP_CHECK("sdsm_home_of(heap address)", 0, SDSM_EINVAL, sdsm_home_of(heap));
    free(heap);

    /* sdsm_free of pointers that are not block starts (same bad pointer on every rank). */
    unsigned char *blk = sdsm_alloc(3 * ps, SDSM_HOME_CYCLIC);
    MP_NONNULL(blk);
    MP_CHECK("home of a live block", 0, 0, sdsm_home_of(blk));
    MP_CHECK("sdsm_free(block + 1)", 0, SDSM_EINVAL, sdsm_free(blk + 1));
    MP_CHECK("sdsm_free(block + page)", 0, SDSM_EINVAL, sdsm_free(blk + ps));
    MP_CHECK("sdsm_free(non-shared address)", 0, SDSM_EINVAL, sdsm_free((void *)(uintptr_t)0x10000));
    /* The block survived the bad frees. */
    blk[(size_t)me * 8] = (unsigned char)(0x40 + me);
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        MP_CHECK("block byte after bad frees", r * 8, 0x40 + r, blk[(size_t)r * 8]);
    MP_CHECK("sdsm_free(block)", 0, 0, sdsm_free(blk));
    MP_CHECK("sdsm_home_of(freed block)", 0, SDSM_EINVAL, sdsm_home_of(blk));
    MP_CHECK("sdsm_free(freed block) again", 0, SDSM_EINVAL, sdsm_free(blk));

    /* Bad allocation arguments, the same on every rank: NULL everywhere. */
    MP_ASSERT(sdsm_alloc(ps, n) == NULL, "sdsm_alloc(home = nprocs) returned non-NULL");
    MP_ASSERT(sdsm_alloc(ps, -4) == NULL, "sdsm_alloc(home = -4) returned non-NULL");
    MP_ASSERT(sdsm_calloc((size_t)1 << 62, 16, 0) == NULL, "sdsm_calloc overflow returned non-NULL");

    /* After all that, the runtime still works: lock counter and barrier. */
    volatile long *ctr = sdsm_alloc(sizeof(long), n - 1);
    MP_NONNULL(ctr);
    for (int k = 0; k < 5; k++) {
        MP_OK(sdsm_lock(7));
        *ctr += 1;
        MP_OK(sdsm_unlock(7));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("counter after the errors", 0, 5L * n, *ctr);
    MP_OK(sdsm_barrier());
    return mp_finish("errors");
}
