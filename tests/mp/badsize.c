/*
 * badsize.c - allocation sizes that do not fit are errors, never a block.
 *
 *   mp_badsize return   SDSM_ERRORS=return: SIZE_MAX, a negative int
 *                       converted to size_t, sizes that wrap when rounded to
 *                       pages, sizes beyond the heap and calloc overflows all
 *                       return NULL with the documented code in
 *                       sdsm_last_error(); ranges whose end wraps are
 *                       rejected; allocation still works after.  "OK badsize".
 *   mp_badsize alloc    default mode: sdsm_alloc(SIZE_MAX) stops the job.
 *   mp_badsize calloc   default mode: an overflowing sdsm_calloc stops the job
 *                       with a message giving n and elem_size.
 */
#define MP_NAME "badsize"
#include "mp.h"

#include <stdint.h>

/* The call must return NULL and leave `code` in sdsm_last_error(). */
#define MP_ALLOC_FAILS(what, code, call)                                                                     \
    do {                                                                                                     \
        void *mp_p_ = (call);                                                                                \
        MP_ASSERT(mp_p_ == NULL, "%s returned %p instead of NULL", what, mp_p_);                             \
        MP_CHECK(what, 0, code, sdsm_last_error());                                                          \
    } while (0)

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t ps = mp_page_size();
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "alloc") == 0) {
        void *p = sdsm_alloc(SIZE_MAX, 0);
        sdsm_abort(1, "%s: rank %d: sdsm_alloc(SIZE_MAX) returned %p in abort mode", MP_NAME, me, p);
    }
    if (strcmp(mode, "calloc") == 0) {
        void *p = sdsm_calloc((size_t)1 << 62, 16, 0);
        sdsm_abort(1, "%s: rank %d: overflowing sdsm_calloc returned %p in abort mode", MP_NAME, me, p);
    }

    MP_CHECK("sdsm_last_error before any failure", 0, 0, sdsm_last_error());
    unsigned char *a = sdsm_alloc(ps, 0);
    MP_NONNULL(a);
    int minus_one = -1;
    MP_ALLOC_FAILS("sdsm_alloc(SIZE_MAX)", SDSM_EINVAL, sdsm_alloc(SIZE_MAX, 0));
    MP_ALLOC_FAILS("sdsm_alloc((size_t)-1 from an int)", SDSM_EINVAL, sdsm_alloc((size_t)minus_one, 0));
    MP_ALLOC_FAILS("sdsm_alloc(SIZE_MAX - page + 2): wraps when rounded", SDSM_EINVAL,
                   sdsm_alloc(SIZE_MAX - ps + 2, 0));
    MP_ALLOC_FAILS("sdsm_alloc(PTRDIFF_MAX + 1)", SDSM_EINVAL, sdsm_alloc((size_t)PTRDIFF_MAX + 1, 0));
    MP_ALLOC_FAILS("sdsm_alloc(0)", SDSM_EINVAL, sdsm_alloc(0, 0));
    /* Larger than the heap (64 GiB by default) yet a valid size. */
    MP_ALLOC_FAILS("sdsm_alloc(1 TiB)", SDSM_ENOMEM, sdsm_alloc((size_t)1 << 40, SDSM_HOME_BLOCK));
    MP_ALLOC_FAILS("sdsm_calloc(2^62, 16)", SDSM_EINVAL, sdsm_calloc((size_t)1 << 62, 16, 0));
    MP_ALLOC_FAILS("sdsm_calloc(SIZE_MAX, SIZE_MAX)", SDSM_EINVAL, sdsm_calloc(SIZE_MAX, SIZE_MAX, 0));
    MP_ALLOC_FAILS("sdsm_calloc(0, 8)", SDSM_EINVAL, sdsm_calloc(0, 8, 0));

    /* Ranges whose end wraps around the address space. */
    MP_CHECK("sdsm_flush(a, SIZE_MAX)", 0, SDSM_EINVAL, sdsm_flush(a, SIZE_MAX));
    MP_CHECK("sdsm_refresh(a + 1, SIZE_MAX)", 0, SDSM_EINVAL, sdsm_refresh(a + 1, SIZE_MAX));
    MP_CHECK("sdsm_set_home(a, SIZE_MAX - 8)", 0, SDSM_EINVAL, sdsm_set_home(a, SIZE_MAX - 8, 0));
    MP_CHECK("sdsm_bcast(a, SIZE_MAX)", 0, SDSM_EINVAL, sdsm_bcast(a, SIZE_MAX, 0));

    /* The failures took no address space: the next block follows a, and works. */
    volatile long *b = sdsm_alloc((size_t)n * sizeof(long), SDSM_HOME_CYCLIC);
    MP_NONNULL(b);
    MP_ASSERT((unsigned char *)b == a + ps, "next block at %p, expected %p", (void *)b, (void *)(a + ps));
    b[me] = 1000 + me;
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        MP_CHECK("b", r, 1000 + r, b[r]);
    MP_OK(sdsm_barrier());
    return mp_finish("badsize");
}
