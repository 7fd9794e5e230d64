/*
 * atomics.c - __atomic and __sync builtins on shared counters, next to a
 * counter under a mutex on the same page: every update of every thread
 * counted.  Under sdsmcc -pthread the builtins are done at the counter's
 * home; done on a rank's own copy - the __atomic ones outside an OpenMP
 * region, the __sync ones, which gcc inlines, anywhere - they lost updates
 * at 2 and 4 ranks.
 */
#include <pthread.h>
#include <stdio.h>

#define NT    6
#define ITERS 150

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct {
    long locked;       /* under m */
    long added;        /* __atomic_fetch_add */
    int synced;        /* __sync_fetch_and_add */
    unsigned long ors; /* __atomic_fetch_or: one bit per thread */
    int swaps;         /* __sync_val_compare_and_swap and __sync_bool_compare_and_swap */
    long cas;          /* incremented by a compare-and-swap loop */
} c;

static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&m);
        c.locked++;
        pthread_mutex_unlock(&m);
        __atomic_fetch_add(&c.added, 2, __ATOMIC_SEQ_CST);
        __sync_fetch_and_add(&c.synced, 1);
        int seen = c.swaps;
        while (!__sync_bool_compare_and_swap(&c.swaps, seen, seen + 1))
            seen = __sync_val_compare_and_swap(&c.swaps, seen, seen);
        long old = __atomic_load_n(&c.cas, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&c.cas, &old, old + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            ;
    }
    __atomic_fetch_or(&c.ors, 1ul << id, __ATOMIC_SEQ_CST);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("locked %ld added %ld synced %d swaps %d cas %ld ors %#lx\n", c.locked, c.added, c.synced, c.swaps,
           c.cas, c.ors);
    int ok = c.locked == NT * ITERS && c.added == 2 * NT * ITERS && c.synced == NT * ITERS &&
             c.swaps == NT * ITERS && c.cas == NT * ITERS && c.ors == (1ul << NT) - 1;
    printf("%s\n", ok ? "every update counted" : "updates lost");
    printf("done\n");
    return ok ? 0 : 1;
}
