/*
 * flagdata.c - data handed from thread to thread behind a plain flag and
 * `omp flush`, checked word by word.  A token goes round the team: thread
 * t waits until its left neighbour's flag shows the round, checks the
 * neighbour's whole block (several pages, every word stamped with the
 * round), stamps its own block and raises its flag.  Under the OpenMP
 * memory model a thread that sees the flag sees the block, so one stale
 * word is a failure: the flag reached the reader before data written
 * before it.  The blocks lie in globals (homed at the first rank under
 * sdsm) and on the heap; the flags share one page, which every thread
 * writes, or lie one per page (argument 2), so a flag's page is now and
 * then fetched while nobody else holds it.  Arguments: rounds (40), wide
 * (0), teams (1: the rounds are run by that many parallel regions in turn,
 * each going on from where the last ended; a thread leaving a team
 * releases its last block and flag).
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "omptest.h"

#define MAXT   16
#define WORDS  1536 /* 12 KiB: three pages */
#define ROUNDS 40

static long gblock[MAXT][WORDS];
static int flag1[MAXT];
static int flagp[MAXT][1024];

static int *flag_of(int wide, int t) { return wide ? &flagp[t][0] : &flag1[t]; }

static int wait_flag(int *f, int want)
{
    int v;
#pragma omp flush
    while ((v = *f) < want) {
#pragma omp flush
    }
    return v;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS;
    int wide = argc > 2 && atoi(argv[2]) != 0;
    int teams = argc > 3 ? atoi(argv[3]) : 1;
    if (rounds < 1)
        rounds = ROUNDS;
    if (teams < 1)
        teams = 1;
    long *hblock = calloc((size_t)MAXT * WORDS, sizeof *hblock);
    if (!hblock)
        return 2;
    int nthreads = 0;
    long stale = 0, hstale = 0, ahead = 0;
    /* Each team goes on from the round the last one ended with. */
    for (int g = 0; g < teams; g++)
#pragma omp parallel reduction(+ : stale, hstale, ahead)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        nthreads = n;
        if (n <= MAXT) {
            int left = (t + n - 1) % n;
            for (int r = g * rounds + 1; r <= (g + 1) * rounds; r++) {
                /* Thread 0 starts a round once the last thread finished
                 * the one before; the others wait for their left neighbour. */
                int want = t == 0 ? r - 1 : r;
                if (n > 1 && (t != 0 || r > 1)) {
                    int got = wait_flag(flag_of(wide, left), want);
                    ahead += got != want;
                    long stamp = (long)want * 1000003 + left;
                    for (int w = 0; w < WORDS; w++) {
                        stale += gblock[left][w] != stamp + w;
                        hstale += hblock[(size_t)left * WORDS + w] != stamp - w;
                    }
                }
                long mine = (long)r * 1000003 + t;
                for (int w = 0; w < WORDS; w++) {
                    gblock[t][w] = mine + w;
                    hblock[(size_t)t * WORDS + w] = mine - w;
                }
#pragma omp flush
                *flag_of(wide, t) = r;
#pragma omp flush
            }
        }
    }
    if (nthreads > MAXT)
        return 2;
    if (stale || hstale)
        fprintf(stderr, "flagdata: %ld stale words in globals, %ld on the heap\n", stale, hstale);
    stale += hstale;
    ot_check(stale == 0, "%d rounds of blocks handed on behind flags, no stale word", rounds * teams);
    ot_check(ahead == 0, "no flag ran ahead of its round");
    free(hblock);
    return ot_done();
}
