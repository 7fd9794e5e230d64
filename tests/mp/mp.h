/*
 * mp.h - small helpers shared by the multi-process tests (tests/mp).
 *
 * Every test program follows "someone writes, synchronize, everyone checks"
 * and stops the whole job through sdsm_abort() on the first wrong value,
 * naming the rank, the index, the expected and the actual value.
 */
#ifndef SDSM_TESTS_MP_H
#define SDSM_TESTS_MP_H

/* POSIX interfaces (nanosleep, clock_gettime, sockets) even under -std=c11. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <sdsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Each program defines MP_NAME before including this header. */
#ifndef MP_NAME
#error "define MP_NAME before including mp.h"
#endif

/* Expected == actual, as integers; otherwise stop the job with the details. */
#define MP_CHECK(what, idx, expected, actual)                                                                \
    do {                                                                                                     \
        long long mp_e_ = (long long)(expected), mp_a_ = (long long)(actual);                                \
        if (mp_e_ != mp_a_)                                                                                  \
            sdsm_abort(1, "%s: rank %d: %s[%lld]: expected %lld (0x%llx), got %lld (0x%llx)", MP_NAME,       \
                       sdsm_rank(), (what), (long long)(idx), mp_e_, (unsigned long long)mp_e_, mp_a_,       \
                       (unsigned long long)mp_a_);                                                           \
    } while (0)

/* A condition that must hold; `fmt` describes it. */
#define MP_ASSERT(cond, ...)                                                                                 \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            char mp_m_[512];                                                                                 \
            snprintf(mp_m_, sizeof mp_m_, __VA_ARGS__);                                                      \
            sdsm_abort(1, "%s: rank %d: %s:%d: check failed: %s: %s", MP_NAME, sdsm_rank(), __FILE__,        \
                       __LINE__, #cond, mp_m_);                                                              \
        }                                                                                                    \
    } while (0)

/* An sdsm call that must return 0. */
#define MP_OK(call)                                                                                          \
    do {                                                                                                     \
        int mp_rc_ = (call);                                                                                 \
        if (mp_rc_ != 0)                                                                                     \
            sdsm_abort(1, "%s: rank %d: %s:%d: %s returned %d (%s)", MP_NAME, sdsm_rank(), __FILE__,         \
                       __LINE__, #call, mp_rc_, sdsm_strerror(mp_rc_));                                      \
    } while (0)

/* A pointer returned by an allocator that must not be NULL. */
#define MP_NONNULL(p)                                                                                        \
    do {                                                                                                     \
        if ((p) == NULL)                                                                                     \
            sdsm_abort(1, "%s: rank %d: %s:%d: %s returned NULL", MP_NAME, sdsm_rank(), __FILE__, __LINE__,  \
                       #p);                                                                                  \
    } while (0)

static inline void mp_init(int *argc, char ***argv)
{
    int rc = sdsm_init(argc, argv);
    if (rc != 0) {
        fprintf(stderr, "%s: sdsm_init failed: %d (%s)\n", MP_NAME, rc, sdsm_strerror(rc));
        exit(1);
    }
}

/* This process's resident memory (VmRSS) in kB, or -1. */
static inline long mp_vm_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = atol(line + 6);
            break;
        }
    fclose(f);
    return kb;
}

/* Finalize, then rank 0 reports success (so "OK" means every rank got there). */
static inline int mp_finish(const char *okname)
{
    int rank = sdsm_rank();
    int rc = sdsm_finalize();
    if (rc != 0) {
        fprintf(stderr, "%s: rank %d: sdsm_finalize returned %d\n", MP_NAME, rank, rc);
        return 1;
    }
    if (rank == 0) {
        printf("OK %s\n", okname);
        fflush(stdout);
    }
    return 0;
}

static inline void mp_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The coherence unit: SDSM_PAGE_SIZE if set (e.g. 8192, 16K), else 4096. */
static inline size_t mp_page_size(void)
{
    const char *s = getenv("SDSM_PAGE_SIZE");
    if (!s || !*s)
        return 4096;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v ? (size_t)v : 4096;
}

/* A deterministic pseudo-random 64-bit mix (splitmix64 finalizer). */
static inline uint64_t mp_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#endif
