/*
 * pm_sum.C - a PARMACS program (m4 with parmacs.m4 makes it C).
 *
 *   pm_sum P [splash3]
 *
 * The master parses P, allocates and fills shared data after MAIN_INITENV
 * (code the other processes never run: they see the pointers through the
 * globals CREATE copies), creates P-1 processes (or P with the SPLASH-3
 * form) and works as process 0.  Each process takes an id under a lock,
 * sums its slice into a locked total and into 8 array-locked bins, meets
 * the others at barriers, and process 0 hands a value through a pause.
 * The master checks everything after WAIT_FOR_END and prints "OK pm_sum".
 */
MAIN_ENV
#include <string.h>

#define NBINS 8

struct global {
    LOCKDEC(idlock)
    LOCKDEC(sumlock)
    ALOCKDEC(binlock, NBINS)
    BARDEC(bar)
    PAUSEDEC(ready)
    GSDEC(gs)
    long nextid, sum, handed, taken;
    long bins[NBINS];
};

static struct global *G;
static long *data, *partial;
static long N;
static int P;
static const char *label = "unset";

static void fail(const char *what, long want, long got)
{
    fprintf(stderr, "pm_sum: %s: expected %ld, got %ld\n", what, want, got);
    exit(1);
}

static void Work(void)
{
    long id, s = 0, sub;
    LOCK(G->idlock)
    id = G->nextid++;
    UNLOCK(G->idlock)
    if (strcmp(label, "master's") != 0) /* a global set by the master after MAIN_INITENV */
        fail("label copied at CREATE", 0, 1);
    for (long i = id; i < N; i += P)
        s += data[i];
    partial[id] = s;
    LOCK(G->sumlock)
    G->sum += s;
    UNLOCK(G->sumlock)
    for (long i = id; i < N; i += P) {
        ALOCK(G->binlock, i % NBINS)
        G->bins[i % NBINS] += data[i];
        AULOCK(G->binlock, i % NBINS)
    }
    /* Dynamic subscripts: every one of 0..99 is taken exactly once. */
    for (;;) {
        GETSUB(G->gs, sub, 99, P)
        if (sub < 0)
            break;
        LOCK(G->sumlock)
        G->taken += sub + 1;
        UNLOCK(G->sumlock)
    }
    BARRIER(G->bar, P)
    if (id == 0) {
        LOCK(G->sumlock)
        G->handed = 4242;
        UNLOCK(G->sumlock)
        SETPAUSE(G->ready)
    } else {
        WAITPAUSE(G->ready)
        LOCK(G->sumlock)
        if (G->handed != 4242)
            fail("value handed through the pause", 4242, G->handed);
        UNLOCK(G->sumlock)
    }
    BARRIER(G->bar, P)
}

int main(int argc, char **argv)
{
    unsigned long start, end;
    P = argc > 1 ? atoi(argv[1]) : 1;
    int splash3 = argc > 2 && strcmp(argv[2], "splash3") == 0;
    MAIN_INITENV(,1000000)
    N = 10007;
    label = "master's";
    G = G_MALLOC(sizeof *G);
    data = G_MALLOC(N * sizeof *data);
    partial = G_MALLOC(P * sizeof *partial);
    for (long i = 0; i < N; i++)
        data[i] = 3 * i + 1;
    LOCKINIT(G->idlock)
    LOCKINIT(G->sumlock)
    ALOCKINIT(G->binlock, NBINS)
    BARINIT(G->bar)
    PAUSEINIT(G->ready)
    CLEARPAUSE(G->ready)
    GSINIT(G->gs)
    CLOCK(start)
    if (splash3) {
        CREATE(Work, P)
        WAIT_FOR_END(P)
    } else {
        for (int i = 1; i < P; i++)
            CREATE(Work)
        Work();
        WAIT_FOR_END(P - 1)
    }
    CLOCK(end)
    long want = 0, bins[NBINS] = {0};
    for (long i = 0; i < N; i++) {
        want += 3 * i + 1;
        bins[i % NBINS] += 3 * i + 1;
    }
    if (G->sum != want)
        fail("sum", want, G->sum);
    long total = 0;
    for (int p = 0; p < P; p++)
        total += partial[p];
    if (total != want)
        fail("sum of the partial sums", want, total);
    for (int b = 0; b < NBINS; b++)
        if (G->bins[b] != bins[b])
            fail("bin", bins[b], G->bins[b]);
    if (G->taken != 100 * 101 / 2)
        fail("subscripts taken", 100 * 101 / 2, G->taken);
    if (end < start)
        fail("CLOCK goes forward", 1, 0);
    printf("OK pm_sum\n");
    MAIN_END
}
