/*
 * prodcons.c - a bounded buffer through condition variables, and broadcast.
 *
 *   mp_prodcons [M]     (default M = 40 items per producer)
 *
 * Part 1: an 8-slot ring in shared memory under lock 1, conditions
 * "not_full" (1) and "not_empty" (2).  Rank 0 consumes; ranks 1..N-1 each
 * produce M items valued rank*100000+k, k = 0..M-1.  The consumer checks each
 * producer's items arrive exactly once and in order (k increasing by one),
 * and the count and the sum of everything.  Waits are Mesa loops.
 *
 * Part 2: broadcast.  For rounds g = 1..3, rank 0 (after a short pause so the
 * others are asleep) sets a generation and a payload under lock 2 and calls
 * sdsm_cond_broadcast(3); every other rank waits in a loop on cond 3 until it
 * sees generation g and checks the payload.  One wakeup too few hangs the job
 * (and the launcher's timeout fails it).
 */
#define MP_NAME "prodcons"
#include "mp.h"

#define SLOTS          8
#define LOCK_BUF       1
#define COND_NOT_FULL  1
#define COND_NOT_EMPTY 2
#define LOCK_FLAG      2
#define COND_FLAG      3

typedef struct ring {
    long slot[SLOTS];
    long head, tail, count; /* take at head, put at tail */
    long puts, takes;
} ring_t;

typedef struct flag {
    long gen;
    long payload;
    long seen; /* how many ranks saw the current generation */
} flag_t;

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long M = argc > 1 ? atol(argv[1]) : 40;
    int n = sdsm_nprocs(), me = sdsm_rank();

    volatile ring_t *b = sdsm_alloc(sizeof(ring_t), 0);
    volatile flag_t *f = sdsm_alloc(sizeof(flag_t), n - 1);
    MP_NONNULL(b);
    MP_NONNULL(f);
    MP_OK(sdsm_barrier());

    if (me == 0) {
        long total = (long)(n - 1) * M, sum = 0, count = 0;
        long *next = calloc((size_t)n, sizeof(long));
        MP_ASSERT(next, "out of memory");
        for (long t = 0; t < total; t++) {
            MP_OK(sdsm_lock(LOCK_BUF));
            while (b->count == 0)
                MP_OK(sdsm_cond_wait(COND_NOT_EMPTY, LOCK_BUF));
            MP_ASSERT(b->count > 0 && b->count <= SLOTS, "count %ld out of range", b->count);
            long v = b->slot[b->head];
            b->head = (b->head + 1) % SLOTS;
            b->count--;
            b->takes++;
            MP_OK(sdsm_cond_signal(COND_NOT_FULL));
            MP_OK(sdsm_unlock(LOCK_BUF));

            long p = v / 100000, k = v % 100000;
            MP_ASSERT(p >= 1 && p < n && v >= 0, "item %ld (number %ld) from no producer", v, t);
            MP_CHECK("next item of producer", p, next[p], k);
            next[p]++;
            sum += v;
            count++;
        }
        long want_sum = 0;
        for (int p = 1; p < n; p++) {
            MP_CHECK("items of producer", p, M, next[p]);
            want_sum += (long)p * 100000 * M + M * (M - 1) / 2;
        }
        MP_CHECK("item count", 0, total, count);
        MP_CHECK("item sum", 0, want_sum, sum);
        free(next);
    } else {
        for (long k = 0; k < M; k++) {
            MP_OK(sdsm_lock(LOCK_BUF));
            while (b->count == SLOTS)
                MP_OK(sdsm_cond_wait(COND_NOT_FULL, LOCK_BUF));
            MP_ASSERT(b->count >= 0 && b->count < SLOTS, "count %ld out of range", b->count);
            b->slot[b->tail] = (long)me * 100000 + k;
            b->tail = (b->tail + 1) % SLOTS;
            b->count++;
            b->puts++;
            MP_OK(sdsm_cond_signal(COND_NOT_EMPTY));
            MP_OK(sdsm_unlock(LOCK_BUF));
        }
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("buffer count after", 0, 0, b->count);
    MP_CHECK("buffer puts", 0, (long)(n - 1) * M, b->puts);
    MP_CHECK("buffer takes", 0, (long)(n - 1) * M, b->takes);
    MP_OK(sdsm_barrier());

    /* Part 2: broadcast. */
    for (long g = 1; g <= 3; g++) {
        if (me == 0) {
            mp_sleep_ms(100); /* let the others go to sleep on the condition */
            MP_OK(sdsm_lock(LOCK_FLAG));
            f->gen = g;
            f->payload = g * 7919 + 11;
            f->seen = 0;
            MP_OK(sdsm_cond_broadcast(COND_FLAG));
            MP_OK(sdsm_unlock(LOCK_FLAG));
        } else {
            MP_OK(sdsm_lock(LOCK_FLAG));
            while (f->gen < g)
                MP_OK(sdsm_cond_wait(COND_FLAG, LOCK_FLAG));
            MP_CHECK("broadcast generation", g, g, f->gen);
            MP_CHECK("broadcast payload", g, g * 7919 + 11, f->payload);
            f->seen++;
            MP_OK(sdsm_unlock(LOCK_FLAG));
        }
        MP_OK(sdsm_barrier());
        MP_CHECK("ranks woken by broadcast", g, n - 1, f->seen);
        MP_OK(sdsm_barrier());
    }
    return mp_finish("prodcons");
}
