/* Included by sdsmcc into every file it compiles: the marker that lets a
 * link tell objects built by sdsmcc (atomics as calls) from others. */
#ifndef SDSM_OMP_MARKER_H
#define SDSM_OMP_MARKER_H
__attribute__((used, section(".sdsm_omp"))) static const char sdsm_omp_built_[] = "sdsmcc";

/* gcc inlines the legacy __sync builtins even under -fno-inline-atomics:
 * a `lock add` on this rank's copy of a shared word lost other ranks'
 * updates.  As their __atomic equivalents they become calls, done at the
 * word's home like every other atomic.  (__sync_synchronize stays: a fence,
 * which the flag support looks for.) */
#define SDSM_SYNC_OP_(op, p, v)     __atomic_##op((p), (v), __ATOMIC_SEQ_CST)
#define __sync_fetch_and_add(p, v)  SDSM_SYNC_OP_(fetch_add, p, v)
#define __sync_fetch_and_sub(p, v)  SDSM_SYNC_OP_(fetch_sub, p, v)
#define __sync_fetch_and_or(p, v)   SDSM_SYNC_OP_(fetch_or, p, v)
#define __sync_fetch_and_and(p, v)  SDSM_SYNC_OP_(fetch_and, p, v)
#define __sync_fetch_and_xor(p, v)  SDSM_SYNC_OP_(fetch_xor, p, v)
#define __sync_fetch_and_nand(p, v) SDSM_SYNC_OP_(fetch_nand, p, v)
#define __sync_add_and_fetch(p, v)  SDSM_SYNC_OP_(add_fetch, p, v)
#define __sync_sub_and_fetch(p, v)  SDSM_SYNC_OP_(sub_fetch, p, v)
#define __sync_or_and_fetch(p, v)   SDSM_SYNC_OP_(or_fetch, p, v)
#define __sync_and_and_fetch(p, v)  SDSM_SYNC_OP_(and_fetch, p, v)
#define __sync_xor_and_fetch(p, v)  SDSM_SYNC_OP_(xor_fetch, p, v)
#define __sync_nand_and_fetch(p, v) SDSM_SYNC_OP_(nand_fetch, p, v)
#define __sync_bool_compare_and_swap(p, o, n)                                                                \
    __extension__({                                                                                          \
        __typeof__(*(p)) sdsm_e_ = (o);                                                                      \
        __atomic_compare_exchange_n((p), &sdsm_e_, (n), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
    })
#define __sync_val_compare_and_swap(p, o, n)                                                                 \
    __extension__({                                                                                          \
        __typeof__(*(p)) sdsm_e_ = (o);                                                                      \
        __atomic_compare_exchange_n((p), &sdsm_e_, (n), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);              \
        sdsm_e_;                                                                                             \
    })
#define __sync_lock_test_and_set(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define __sync_lock_release(p)         __atomic_store_n((p), 0, __ATOMIC_RELEASE)
#endif
