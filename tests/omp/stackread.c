/*
 * stackread.c - main's variables, on the master's stack in shared memory,
 * read by the whole team while the master runs on (locks, its own locals).
 *
 *   stackread ROUNDS
 *
 * main holds a table of 3 pages, written before the region only.  In the
 * region every thread sums it ROUNDS times inside a critical section, and
 * writes locals of its own in between.  Every exit from the critical
 * section on rank 0 is a release of the master's stack; the table is not written,
 * so the other ranks must keep their copies (read faults about the table's
 * pages, not about ROUNDS: the statistics show it), and the sums must be
 * right.  Prints "OK stackread ROUNDS" when they are.  Built with sdsmcc
 * only.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS (3 * 4096 / (int)sizeof(long))

static long busy(long seed)
{
    volatile long local[64]; /* the thread's own frame, rewritten each round */
    for (int i = 0; i < 64; i++)
        local[i] = seed * i;
    return local[seed & 63];
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    long table[WORDS];
    long want = 0;
    for (int i = 0; i < WORDS; i++) {
        table[i] = i % 97;
        want += table[i];
    }
    long bad = 0, junk = 0;
#pragma omp parallel reduction(+ : bad, junk)
    for (int r = 0; r < rounds; r++) {
        long s = 0;
#pragma omp critical
        for (int i = 0; i < WORDS; i++)
            s += table[i];
        bad += s != want;
        junk += busy(r);
    }
    if (bad) {
        printf("FAILED stackread: %ld wrong sums\n", bad);
        return 1;
    }
    printf("OK stackread %d%s\n", rounds, junk < 0 ? " (?)" : "");
    return 0;
}
