/* Rounds of pthread_barrier_wait: each thread writes its slot, then reads
 * every other thread's slot of the round; one serial thread per round. */
#include <pthread.h>
#include <stdio.h>

#define NT     4
#define ROUNDS 20

static pthread_barrier_t bar;
static long slot[NT], seen[NT], serial;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg)
{
    long me = (long)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        slot[me] = r * 100 + me;
        if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&mu);
            serial++;
            pthread_mutex_unlock(&mu);
        }
        for (int i = 0; i < NT; i++)
            seen[me] += slot[i] == r * 100 + i;
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(void)
{
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    long ok = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], NULL);
        ok += seen[i];
    }
    printf("slots seen right: %ld of %d, serial threads: %ld\n", ok, NT * NT * ROUNDS, serial);
    pthread_barrier_destroy(&bar);
    printf("done\n");
    return 0;
}
