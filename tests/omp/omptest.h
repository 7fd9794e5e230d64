/*
 * omptest.h - what the OpenMP test programs share.
 *
 * Each program is plain OpenMP C, built twice: with the system compiler's
 * -fopenmp (the reference, run on one machine) and with sdsmcc (run by
 * sdsmrun over several processes).  compare.sh checks that the two print
 * the same bytes, so a program prints only what does not depend on the team
 * size, the thread numbering or the timing: results, and checks derived
 * from thread numbers ("ids are 0..n-1") as ok/FAILED.  Floating-point sums
 * use values whose sum is exact in any order (integers, dyadic fractions).
 *
 * Printing happens in serial code only: under sdsm a region's threads run
 * in other processes, whose output would interleave with rank 0's.
 */
#ifndef OMPTEST_H
#define OMPTEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int ot_failed;

/* "check <what>: ok" or "check <what>: FAILED"; a failure also makes the
 * exit status 1 (ot_done). */
__attribute__((format(printf, 2, 3), unused)) static void ot_check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("check ", stdout);
    vprintf(fmt, ap);
    va_end(ap);
    printf(": %s\n", ok ? "ok" : "FAILED");
    if (!ok)
        ot_failed++;
}

/* FNV-1a over bytes: a digest of an array, printed instead of the array. */
__attribute__((unused)) static uint64_t ot_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The last line and the exit status. */
__attribute__((unused)) static int ot_done(void)
{
    printf("%s\n", ot_failed ? "FAILED" : "done");
    fflush(stdout);
    return ot_failed ? 1 : 0;
}

#endif
