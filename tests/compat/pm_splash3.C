/*
 * pm_splash3.C - the PARMACS macros of SPLASH-3 programs (m4 with
 * parmacs.m4 makes it C; pm_splash3.H comes in through m4's include).
 *
 *   pm_splash3 P
 *
 * The master allocates and reads the clock before MAIN_INITENV, then runs
 * three phases of P processes each, all started by the SPLASH-3 form of
 * process creation on the same P ranks: the first is never waited for (the
 * master checks its results after its own share, which ends at a barrier);
 * the second passes a turn around a ring through a condition variable
 * waited on with a lock of an array; the third hands out tokens one signal
 * at a time and publishes data behind a flag with fences.  The region of
 * interest spans the phases.  Prints "OK pm_splash3".
 */
include(pm_splash3.H)
MAIN_ENV
#include <string.h>

#define N      4096
#define ROUNDS 10
#define NDATA  64

struct shared {
    LOCKDEC(idlock)
    ALOCKDEC(locks, 4)
    BARDEC(bar)
    CONDVARDEC(token_cv)
    long nextid, tokens, taken;
    long data[NDATA];
    volatile long flag;
};

static struct shared *S;
static struct hand *H;
static long *early, *out;
static long P;

static void fail(const char *what, long want, long got)
{
    fprintf(stderr, "pm_splash3: %s: expected %ld, got %ld\n", what, want, got);
    exit(1);
}

static long take_id(void)
{
    long id;
    LOCK(S->idlock)
    id = S->nextid++;
    UNLOCK(S->idlock)
    return id;
}

/* Each process doubles its slice of the data allocated before MAIN_INITENV. */
static void Fill(void)
{
    long id = take_id();
    for (long i = id; i < N; i += P)
        out[i] = 2 * early[i];
    BARRIER(S->bar, P)
}

/* The turn goes round ROUNDS times; each holder checks its predecessor's note. */
static void Ring(void)
{
    long id = take_id();
    for (long r = 0; r < ROUNDS; r++) {
        ALOCK(S->locks, 1)
        while (H->turn % P != id)
            CONDVARWAIT(H->turn_cv, AGETL(S->locks, 1))
        if (H->last != H->turn - 1)
            fail("note left by the previous turn", H->turn - 1, H->last);
        H->last = H->turn;
        H->turn++;
        CONDVARBCAST(H->turn_cv)
        AULOCK(S->locks, 1)
    }
    BARRIER(S->bar, P)
}

/* Process 0 posts a token per other process, one signal each, then
 * publishes data behind a flag between fences; the others take a token and
 * spin on the flag through acquire fences. */
static void TokensAndFences(void)
{
    long id = take_id();
    if (id == 0) {
        for (long k = 1; k < P; k++) {
            ALOCK(S->locks, 2)
            S->tokens++;
            CONDVARSIGNAL(S->token_cv)
            AULOCK(S->locks, 2)
        }
        for (long i = 0; i < NDATA; i++)
            S->data[i] = 7 * i + 1;
        RELEASE_FENCE();
        S->flag = 1;
        FULL_FENCE();
    } else {
        ALOCK(S->locks, 2)
        while (S->tokens == 0)
            CONDVARWAIT(S->token_cv, S->locks[2])
        S->tokens--;
        S->taken++;
        AULOCK(S->locks, 2)
        do {
            ACQUIRE_FENCE();
        } while (!S->flag);
        for (long i = 0; i < NDATA; i++)
            if (S->data[i] != 7 * i + 1)
                fail("data published before the flag", 7 * i + 1, S->data[i]);
    }
    BARRIER(S->bar, P)
}

int main(int argc, char **argv)
{
    unsigned long before, after;
    P = argc > 1 ? atol(argv[1]) : 1;
    CLOCK(before)
    early = (long *)G_MALLOC(N * sizeof(long))
    for (long i = 0; i < N; i++)
        early[i] = i + 3;
    MAIN_INITENV(, 1000000)
    CLOCK(after)
    if (after < before)
        fail("CLOCK before and after MAIN_INITENV goes forward", 1, 0);
    S = (struct shared *)G_MALLOC(sizeof *S);
    H = (struct hand *)NU_MALLOC(sizeof *H, 0);
    out = (long *)G_MALLOC_F(N * sizeof(long));
    LOCKINIT(S->idlock)
    ALOCKINIT(S->locks, 4)
    BARINIT(S->bar, P)
    CONDVARINIT(S->token_cv);
    CONDVARINIT(H->turn_cv);
    H->last = -1;
    SPLASH3_ROI_BEGIN();
    CREATE(Fill, P)
    for (long i = 0; i < N; i++)
        if (out[i] != 2 * (i + 3))
            fail("element doubled without waiting for the end", 2 * (i + 3), out[i]);
    S->nextid = 0;
    CREATE(Ring, P)
    if (H->turn != ROUNDS * P)
        fail("turns", ROUNDS * P, H->turn);
    S->nextid = 0;
    CREATE(TokensAndFences, P)
    WAIT_FOR_END(P);
    SPLASH3_ROI_END();
    if (S->taken != P - 1 || S->tokens != 0)
        fail("tokens taken", P - 1, S->taken);
    G_FREE(H)
    printf("OK pm_splash3\n");
    MAIN_END
}
