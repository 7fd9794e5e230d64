/* Producer/consumer over a bounded buffer with two condition variables,
 * a broadcast that releases waiters, and a timed wait that times out. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define SLOTS 4
#define ITEMS 300
#define NCONS 3

static int buf[SLOTS], head, count, finished;
static long sum[NCONS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        pthread_mutex_lock(&mu);
        while (count == SLOTS)
            pthread_cond_wait(&not_full, &mu);
        buf[(head + count++) % SLOTS] = i;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_lock(&mu);
    finished = 1;
    pthread_cond_broadcast(&not_empty);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *consumer(void *arg)
{
    long me = (long)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (count == 0 && !finished)
            pthread_cond_wait(&not_empty, &mu);
        if (count == 0) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        int v = buf[head];
        head = (head + 1) % SLOTS;
        count--;
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&mu);
        sum[me] += v;
    }
}

int main(void)
{
    pthread_t p, c[NCONS];
    for (long i = 0; i < NCONS; i++)
        pthread_create(&c[i], NULL, consumer, (void *)i);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    long total = 0;
    for (int i = 0; i < NCONS; i++) {
        pthread_join(c[i], NULL);
        total += sum[i];
    }
    printf("consumed %ld (expected %d)\n", total, ITEMS * (ITEMS + 1) / 2);

    static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 0;
    t.tv_nsec += 30000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&mu);
    int rc = pthread_cond_timedwait(&never, &mu, &t);
    pthread_mutex_unlock(&mu);
    printf("timed wait: %s\n", rc == ETIMEDOUT ? "ETIMEDOUT" : "?");
    printf("done\n");
    return 0;
}
