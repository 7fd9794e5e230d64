/*
 * tmk_basic.c - a TreadMarks-style program on Tmk.h: process 0 allocates
 * and distributes the pointers, every process fills its slice, a lock
 * guards a shared counter, and everyone checks everything after a barrier.
 * Prints "OK tmk_basic" from process 0.
 */
#include <Tmk.h>

#include <stdio.h>
#include <stdlib.h>

#define N      5000
#define ROUNDS 20

static int *grid;     /* shared, from Tmk_malloc on process 0 */
static long *counter; /* shared */
static int scale;     /* private, set by process 0 and distributed */

static void fail(const char *what, long i, long want, long got)
{
    fprintf(stderr, "tmk_basic: process %u: %s[%ld]: expected %ld, got %ld\n", Tmk_proc_id, what, i, want,
            got);
    exit(1); /* the launcher stops the other processes */
}

int main(int argc, char **argv)
{
    Tmk_startup(argc, argv);
    if (Tmk_proc_id == 0) {
        grid = Tmk_malloc(N * sizeof *grid);
        counter = Tmk_malloc(sizeof *counter);
        scale = 7;
        if (!grid || !counter)
            fail("Tmk_malloc", 0, 1, 0);
        /* TreadMarks' way: the allocating process alone distributes, the
         * others have the values after the next barrier. */
        Tmk_distribute(&grid, sizeof grid);
        Tmk_distribute(&counter, sizeof counter);
        Tmk_distribute(&scale, sizeof scale);
    }
    Tmk_barrier(0);
    if (!grid || !counter || scale != 7)
        fail("distributed values present", 0, 1, 0);
    unsigned me = Tmk_proc_id, np = Tmk_nprocs;
    for (long i = me; i < N; i += np)
        grid[i] = scale * (int)i + 1;
    for (int r = 0; r < ROUNDS; r++) {
        Tmk_lock_acquire(3);
        *counter += 1;
        Tmk_lock_release(3);
    }
    Tmk_barrier(0);
    for (long i = 0; i < N; i++)
        if (grid[i] != scale * (int)i + 1)
            fail("grid", i, scale * i + 1, grid[i]);
    if (*counter != (long)np * ROUNDS)
        fail("counter", 0, (long)np * ROUNDS, *counter);
    Tmk_barrier(1);
    if (me == 0) {
        Tmk_free(grid);
        Tmk_free(counter);
        printf("OK tmk_basic\n");
        fflush(stdout);
    }
    Tmk_exit(0);
}
