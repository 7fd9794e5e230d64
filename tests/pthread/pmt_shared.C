/*
 * pmt_shared.C - a PARMACS program whose workers share globals the master's
 * own share writes after CREATE, as SPLASH-3's FMM (Grid) and VOLREND (the
 * view) do.  m4 with parmacs_threads.m4 makes it a pthreads program (built
 * with sdsmcc -pthread, or natively); with parmacs.m4 (the fork model) the
 * workers on other ranks never see those globals, which the program reports.
 *
 *   pmt_shared P
 *
 * Three phases of P workers, started by CREATE(fn, P) and the last by P-1
 * CREATE(fn) calls, the first two never waited for until the end:
 *  1. worker 0 builds a table and publishes it in the globals `table' and
 *     `scale'; after a barrier every worker sums its share of it under a
 *     lock, with subscripts from GETSUB, and the last worker's SETPAUSE
 *     lets the others past WAITPAUSE;
 *  2. a turn goes round ROUNDS times through a condition variable waited on
 *     with a lock of an array (AGETL), each holder checking the note of the
 *     one before; worker 0 moves `scale' again and fences;
 *  3. every worker reads the new `scale' and adds it to its slot of a
 *     G_MALLOC array.
 * Prints "OK pmt_shared" or what went wrong; the output does not depend on
 * where the workers ran.
 */
MAIN_ENV
include(pmt_shared.H)
#include <string.h>

#define N      4096
#define ROUNDS 8

static struct shared *S;
static long *table, *slots;
static long scale, P;

static long take_id(void)
{
    long id;
    LOCK(S->idlock)
    id = S->nextid++;
    if (S->nextid == P)
        S->nextid = 0;
    UNLOCK(S->idlock)
    return id;
}

static void report(long id, const char *what)
{
    printf("worker %ld: %s\n", id, what);
    LOCK(S->idlock)
    S->errors++;
    UNLOCK(S->idlock)
}

static void Publish(void)
{
    long id = take_id(), s, mine = 0;
    if (id == 0) {
        table = G_MALLOC(N * sizeof *table)
        for (long i = 0; i < N; i++)
            table[i] = i;
        scale = 3;
    }
    BARRIER(S->bar, P)
    if (!table || scale != 3) {
        report(id, "the table worker 0 published after the start is not there");
    } else {
        for (;;) {
            GETSUB(S->gs, s, N - 1, P)
            if (s < 0)
                break;
            mine += scale * table[s];
        }
    }
    ALOCK(S->locks, 0)
    S->sum += mine;
    AULOCK(S->locks, 0)
    BARRIER(S->bar, P)
    if (id == P - 1)
        SETPAUSE(S->pause)
    else
        WAITPAUSE(S->pause)
}

static void Ring(void)
{
    long id = take_id();
    for (long r = 0; r < ROUNDS; r++) {
        ALOCK(S->locks, 1)
        while (S->turn % P != id)
            CONDVARWAIT(S->cv, AGETL(S->locks, 1))
        if (S->last != S->turn - 1)
            report(id, "the note of the previous turn is missing");
        S->last = S->turn;
        S->turn++;
        CONDVARBCAST(S->cv)
        AULOCK(S->locks, 1)
    }
    BARRIER(S->bar, P)
    if (id == 0) {
        scale = 5;
        FULL_FENCE()
    }
    BARRIER(S->bar, P)
}

static void Add(void)
{
    long id = take_id();
    ACQUIRE_FENCE()
    slots[id] += scale;
    RELEASE_FENCE()
    BARRIER(S->bar, P)
}

int main(int argc, char **argv)
{
    unsigned long t0, t1;
    P = argc > 1 ? atol(argv[1]) : 2;
    S = G_MALLOC(sizeof *S)
    slots = G_MALLOC_F(P * sizeof *slots);
    MAIN_INITENV(, 1000000)
    CLOCK(t0)
    memset(S, 0, sizeof *S);
    memset(slots, 0, P * sizeof *slots);
    LOCKINIT(S->idlock)
    ALOCKINIT(S->locks, 4)
    BARINIT(S->bar, P)
    CONDVARINIT(S->cv)
    PAUSEINIT(S->pause)
    GSINIT(S->gs)
    S->last = -1;
    SPLASH3_ROI_BEGIN()
    CREATE(Publish, P)
    CREATE(Ring, P)
    for (long i = 1; i < P; i++)
        CREATE(Add)
    Add();
    WAIT_FOR_END(P - 1)
    SPLASH3_ROI_END()
    CLOCK(t1)
    long want = 3 * (long)N * (N - 1) / 2, bad = S->errors;
    if (S->sum != want) {
        printf("sum %ld, expected %ld\n", S->sum, want);
        bad++;
    }
    if (S->turn != ROUNDS * P) {
        printf("turns %ld, expected %ld\n", S->turn, ROUNDS * P);
        bad++;
    }
    for (long i = 0; i < P; i++)
        if (slots[i] != 5) {
            printf("slot %ld: %ld, expected 5\n", i, slots[i]);
            bad++;
        }
    if (t1 < t0)
        bad++;
    G_FREE(slots)
    printf(bad ? "FAIL pmt_shared\n" : "OK pmt_shared\n");
    if (bad)
        exit(1);
    MAIN_END
}
