/*
 * placement.c - where an OpenMP program's globals are homed.
 *
 * A static loop's iterations go to the same thread in every loop with the
 * same bounds, so the rank whose thread first touches a part of a global
 * array is the one that keeps using it: under first touch (SDSM_OMP_HOME
 * unset) that part must be homed there, as on a NUMA machine.  Checked with
 * sdsm_home_of from inside the region, for every page wholly inside a
 * thread's share, of a zero-initialized array (.bss) and of an initialized
 * one (.data, whose contents every rank must still read right after another
 * rank became the home of a page).
 *
 *   omp_placement_sdsm [first-touch|cyclic|RANK] [differ]
 *
 * The first argument is the placement expected (SDSM_OMP_HOME's value).
 * "differ": a constructor leaves a rank-specific value in the data before
 * main, so the ranks' images differ and every page must stay at rank 0,
 * whose value every thread then reads.  Built with -DPLACEMENT_FLUSH, the
 * program holds an omp flush (the flag support's programs), whose globals
 * stay at rank 0 unless SDSM_OMP_HOME says otherwise: run it with "0".
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdsm.h"

#define PAGE  4096
#define PAGES 64
#define N     (PAGES * PAGE / (int)sizeof(long))

static long zeroed[N] __attribute__((aligned(PAGE)));
static long seeded[N] __attribute__((aligned(PAGE))) = {[0 ... N - 1] = 7};
static long rank_stamp = -1; /* set before main by a constructor ("differ") */

__attribute__((constructor)) static void stamp(void)
{
    const char *r = getenv("SDSM_RANK");
    const char *d = getenv("PLACEMENT_DIFFER");
    if (d && *d == '1')
        rank_stamp = r ? atol(r) : 0;
}

/* The home page pg of array a must have: -2 for "the toucher".  Cyclic
 * counts pages from the start of the program's data, not of a. */
static int expected_home(const char *policy, const long *a, int pg, int nprocs)
{
    if (!strcmp(policy, "first-touch"))
        return -2;
    if (!strcmp(policy, "cyclic"))
        return (sdsm_home_of(a) + pg) % nprocs; /* both arrays start on a page of their own */
    return atoi(policy);
}

/* Pages wholly inside [lo, hi) of array a whose home is not what it must be. */
static int wrong_pages(const long *a, int lo, int hi, const char *policy, int rank)
{
    int bad = 0;
    uintptr_t first = ((uintptr_t)&a[lo] + PAGE - 1) / PAGE, last = (uintptr_t)&a[hi] / PAGE;
    for (uintptr_t pg = first; pg < last; pg++) {
        int want = expected_home(policy, a, (int)(pg - (uintptr_t)a / PAGE), sdsm_nprocs());
        int home = sdsm_home_of((void *)(pg * PAGE));
        if (home != (want == -2 ? rank : want)) {
            fprintf(stderr, "page %lu of %s: home %d, expected %d\n",
                    (unsigned long)(pg - (uintptr_t)a / PAGE), a == zeroed ? "zeroed" : "seeded", home,
                    want == -2 ? rank : want);
            bad++;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *policy = argc > 1 ? argv[1] : "first-touch";
    int differ = argc > 2 && !strcmp(argv[2], "differ");
    if (differ)
        policy = "0";
    long sum = 0;
    int bad = 0;
#pragma omp parallel reduction(+ : sum, bad)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int lo = (int)((long)N * t / nt), hi = (int)((long)N * (t + 1) / nt);
        /* first touch: a write of .bss, a read of .data */
        for (int i = lo; i < hi; i++)
            zeroed[i] = i;
        for (int i = lo; i < hi; i++)
            sum += seeded[i];
        if (omp_get_thread_num() % (nt / sdsm_nprocs()) == 0) /* one thread per rank checks */
            bad += wrong_pages(zeroed, lo, hi, policy, sdsm_rank()) +
                   wrong_pages(seeded, lo, hi, policy, sdsm_rank());
    }
#ifdef PLACEMENT_FLUSH
#pragma omp flush
#endif
    /* the serial code reads every rank's part */
    long zs = 0;
    for (int i = 0; i < N; i++)
        zs += zeroed[i];
    long stamp_seen = 0;
#pragma omp parallel reduction(+ : stamp_seen)
    stamp_seen += rank_stamp != (differ ? 0 : -1);
    if (sum != 7L * N || zs != (long)N * (N - 1) / 2 || bad || stamp_seen) {
        printf("FAILED placement: sum %ld (want %ld), zeroed %ld (want %ld), %d pages misplaced, "
               "%ld threads saw another stamp\n",
               sum, 7L * N, zs, (long)N * (N - 1) / 2, bad, stamp_seen);
        return 1;
    }
    printf("OK placement %s over %d ranks\n", differ ? "differ" : policy, sdsm_nprocs());
    return 0;
}
