/*
 * overflow.c - recursion on main's stack, which under sdsm is the OpenMP
 * master's stack in shared memory (its size: SDSM_OMP_STACK).
 *
 *   overflow DEPTH        a parallel region reads a variable of main, then
 *                         main recurses DEPTH calls of about 1 KiB each and
 *                         prints "OK overflow DEPTH" if the sums are right
 *   overflow array BYTES  the same with an array of BYTES on main's stack
 *                         (one frame far larger than the guard: sdsmcc's
 *                         -fstack-clash-protection touches it page by page)
 *
 * With a stack too small the job must stop with a message naming the
 * master's stack and SDSM_OMP_STACK (a guard lies below the stack), never
 * write into the memory underneath.  Built with sdsmcc only: plain OpenMP
 * would crash without a message.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME 1000

static long down(long n)
{
    volatile char frame[FRAME];
    memset((char *)frame, (int)(n & 0x7f), sizeof frame);
    long r = n ? down(n - 1) : 0;
    return r + frame[n % FRAME];
}

static int array_on_stack(long bytes)
{
    long n = bytes / (long)sizeof(long), seen = 0, got = 0;
    volatile long a[n];
#pragma omp parallel for reduction(+ : seen)
    for (long i = 0; i < n; i++) {
        a[i] = i;
        seen++;
    }
    for (long i = 0; i < n; i++)
        got += a[i];
    if (seen != n || got != n * (n - 1) / 2) {
        printf("FAIL overflow: array sum %ld over %ld elements\n", got, seen);
        return 1;
    }
    printf("OK overflow array %ld\n", bytes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "array"))
        return array_on_stack(atol(argv[2]));
    long depth = argc > 1 ? atol(argv[1]) : 100;
    long seen = 0, want = 0;
#pragma omp parallel reduction(+ : seen)
    seen += depth; /* depth lives on main's stack */
    long got = down(depth);
    for (long k = 0; k <= depth; k++)
        want += k & 0x7f;
    if (got != want || seen != depth * omp_get_max_threads()) {
        printf("FAIL overflow: recursion sum %ld (expected %ld), region read %ld\n", got, want, seen);
        return 1;
    }
    printf("OK overflow %ld\n", depth);
    return 0;
}
