/* A counter under a mutex, recursive and errorcheck mutexes, trylock,
 * spinlocks and a timed lock that times out. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define NT    6
#define ITERS 200

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec;
static pthread_spinlock_t spin;
static long counter, spun;

static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&mu);
        counter += id + 1;
        pthread_mutex_unlock(&mu);
        pthread_spin_lock(&spin);
        spun++;
        pthread_spin_unlock(&spin);
    }
    pthread_mutex_lock(&rec);
    pthread_mutex_lock(&rec); /* recursive: twice */
    pthread_mutex_lock(&mu);
    counter += 1000;
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&rec);
    pthread_mutex_unlock(&rec);
    return NULL;
}

/* A condition wait on a recursive mutex held once gives it back held once:
 * locked again, it takes two unlocks, and a third is EPERM. */
static pthread_cond_t rec_cv = PTHREAD_COND_INITIALIZER;
static int rec_ready;

static void *rec_waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&rec);
    while (!rec_ready)
        pthread_cond_wait(&rec_cv, &rec);
    pthread_mutex_lock(&rec);
    int a = pthread_mutex_unlock(&rec), b = pthread_mutex_unlock(&rec), c = pthread_mutex_unlock(&rec);
    return (void *)(long)(a == 0 && b == 0 && c == EPERM);
}

static void *try_held(void *arg)
{
    (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 50000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    int a = pthread_mutex_trylock(&mu), b = pthread_mutex_timedlock(&mu, &t);
    return (void *)(long)(a == EBUSY && b == ETIMEDOUT);
}

int main(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rec, &a);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("counter %ld (expected %ld), spun %ld\n", counter, (long)ITERS * NT * (NT + 1) / 2 + 1000 * NT,
           spun);

    pthread_mutex_t ec;
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&ec, &a);
    pthread_mutex_lock(&ec);
    printf("errorcheck relock: %s\n", pthread_mutex_lock(&ec) == EDEADLK ? "EDEADLK" : "?");
    pthread_mutex_unlock(&ec);
    printf("errorcheck unlock unheld: %s\n", pthread_mutex_unlock(&ec) == EPERM ? "EPERM" : "?");

    pthread_mutex_lock(&mu);
    void *ok;
    pthread_create(&t[0], NULL, try_held, NULL);
    pthread_join(t[0], &ok);
    pthread_mutex_unlock(&mu);
    printf("trylock and timedlock on a held mutex: %s\n", ok ? "EBUSY, ETIMEDOUT" : "wrong");

    pthread_create(&t[0], NULL, rec_waiter, NULL);
    struct timespec nap = {0, 20000000};
    nanosleep(&nap, NULL);
    pthread_mutex_lock(&rec);
    rec_ready = 1;
    pthread_cond_signal(&rec_cv);
    pthread_mutex_unlock(&rec);
    pthread_join(t[0], &ok);
    printf("recursive mutex after a condition wait: %s\n", ok ? "held once" : "wrong depth");
    printf("done\n");
    return 0;
}
