/* trylock and timedlock of a mutex that another thread (another rank's,
 * under sdsmrun -n 2 or more) holds and then lets go: a try fails while it
 * is held and succeeds once it is free, also when an earlier try's request
 * is still on its way; a timed lock times out while it is held and gets it
 * once let go; the next holder sees what the last one wrote under it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static long data;

static struct timespec after_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Tries until it gets the mutex; 1 if it did within about 10 s. */
static int try_until_free(void)
{
    for (int i = 0; i < 100000; i++) {
        if (pthread_mutex_trylock(&mu) == 0)
            return 1;
        struct timespec t = {0, 100000};
        nanosleep(&t, NULL);
    }
    return 0;
}

static void *other(void *arg)
{
    int *res = arg;
    pthread_barrier_wait(&bar); /* 1: main holds mu */
    res[0] = pthread_mutex_trylock(&mu) == EBUSY;
    struct timespec t = after_ms(30);
    res[1] = pthread_mutex_timedlock(&mu, &t) == ETIMEDOUT;
    res[2] = pthread_mutex_trylock(&mu) == EBUSY;
    pthread_barrier_wait(&bar); /* 2: main lets mu go after this */
    pthread_barrier_wait(&bar); /* 3: it has */
    res[3] = try_until_free();
    res[4] = data == 1;
    data = 2;
    pthread_barrier_wait(&bar); /* 4: this thread holds mu */
    pthread_barrier_wait(&bar); /* 5: main tried, and now waits in a timed lock */
    nap_ms(50);
    data = 3;
    pthread_mutex_unlock(&mu);
    pthread_barrier_wait(&bar); /* 6: main got it from the timed lock */
    /* Ping-pong: each side takes it by trylock alone, 200 times. */
    for (int i = 0; i < 200; i++) {
        while (pthread_mutex_trylock(&mu) == EBUSY)
            ;
        data++;
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    int res[5] = {0};
    pthread_t t;
    pthread_barrier_init(&bar, NULL, 2);
    pthread_mutex_lock(&mu);
    pthread_create(&t, NULL, other, res);
    pthread_barrier_wait(&bar); /* 1 */
    pthread_barrier_wait(&bar); /* 2 */
    data = 1;
    pthread_mutex_unlock(&mu);
    pthread_barrier_wait(&bar); /* 3 */
    pthread_barrier_wait(&bar); /* 4 */
    int busy = pthread_mutex_trylock(&mu) == EBUSY;
    pthread_barrier_wait(&bar); /* 5 */
    struct timespec deadline = after_ms(20000);
    int timed = pthread_mutex_timedlock(&mu, &deadline) == 0;
    int seen = data == 3;
    data = 0;
    pthread_mutex_unlock(&mu);
    pthread_barrier_wait(&bar); /* 6 */
    for (int i = 0; i < 200; i++) {
        while (pthread_mutex_trylock(&mu) == EBUSY)
            ;
        data++;
        pthread_mutex_unlock(&mu);
    }
    pthread_join(t, NULL);
    printf("held elsewhere: trylock %s, timedlock %s, trylock again %s\n", res[0] ? "EBUSY" : "?",
           res[1] ? "ETIMEDOUT" : "?", res[2] ? "EBUSY" : "?");
    printf("let go: trylock %s, sees the holder's write %s\n", res[3] ? "gets it" : "never gets it",
           res[4] ? "yes" : "no");
    printf("held by the other: trylock %s; timedlock %s, sees its write %s\n", busy ? "EBUSY" : "?",
           timed ? "gets it" : "fails", seen ? "yes" : "no");
    printf("trylock ping-pong: %ld (expected 400)\n", data);
    printf("done\n");
    return 0;
}
