/* Join values, a pointer to a stack variable handed to another thread,
 * threads creating threads, detached threads, pthread_self/equal,
 * pthread_once, keys with destructors, __thread variables, semaphores,
 * rwlocks. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int inits;
static pthread_key_t key;
static int dtors;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int tls = 7;
static sem_t sem, done_sem;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long table[8];

static void init(void) { inits++; }
static void dtor(void *p)
{
    pthread_mutex_lock(&mu);
    dtors += *(int *)p;
    pthread_mutex_unlock(&mu);
    free(p);
}

static void *square(void *arg)
{
    long v = (long)arg;
    pthread_once(&once, init);
    int *mine = malloc(sizeof *mine);
    *mine = 1;
    pthread_setspecific(key, mine);
    int fresh = tls == 7;
    tls = 99;
    if (!fresh)
        return (void *)-1L;
    return (void *)(v * v);
}

static void *fill(void *arg) /* writes into its creator's stack array */
{
    int *a = arg;
    for (int i = 0; i < 100; i++)
        a[i] = i * 3;
    return NULL;
}

static void *child(void *arg) { return (void *)((long)arg + 1); }

static void *parent(void *arg)
{
    pthread_t c[3];
    long sum = 0;
    for (long i = 0; i < 3; i++)
        pthread_create(&c[i], NULL, child, (void *)((long)arg * 10 + i));
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(c[i], &r);
        sum += (long)r;
    }
    return (void *)sum;
}

static void *detached(void *arg)
{
    (void)arg;
    sem_wait(&sem);
    pthread_rwlock_wrlock(&rw);
    for (int i = 0; i < 8; i++)
        table[i] += i;
    pthread_rwlock_unlock(&rw);
    sem_post(&done_sem);
    pthread_exit(NULL);
}

static void *reader(void *arg)
{
    (void)arg;
    long s = 0;
    pthread_rwlock_rdlock(&rw);
    for (int i = 0; i < 8; i++)
        s += table[i];
    pthread_rwlock_unlock(&rw);
    return (void *)s;
}

int main(void)
{
    pthread_key_create(&key, dtor);
    pthread_t t[5];
    for (long i = 0; i < 5; i++)
        pthread_create(&t[i], NULL, square, (void *)(i + 1));
    long sum = 0;
    for (int i = 0; i < 5; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (long)r;
    }
    printf("join values: %ld, once: %d, key destructors: %d\n", sum, inits, dtors);

    int a[100] = {0};
    pthread_t f;
    pthread_create(&f, NULL, fill, a);
    pthread_join(f, NULL);
    long s = 0;
    for (int i = 0; i < 100; i++)
        s += a[i];
    printf("stack array filled by another thread: %ld\n", s);

    pthread_t p[2];
    sum = 0;
    for (long i = 0; i < 2; i++)
        pthread_create(&p[i], NULL, parent, (void *)(i + 1));
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(p[i], &r);
        sum += (long)r;
    }
    printf("threads creating threads: %ld\n", sum);

    printf("pthread_equal(self, self): %d\n", pthread_equal(pthread_self(), pthread_self()) != 0);

    sem_init(&sem, 0, 0);
    sem_init(&done_sem, 0, 0);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 3; i++) {
        pthread_t d;
        pthread_create(&d, &at, detached, NULL);
    }
    for (int i = 0; i < 3; i++)
        sem_post(&sem);
    for (int i = 0; i < 3; i++)
        sem_wait(&done_sem);
    pthread_t r;
    void *rs;
    pthread_create(&r, NULL, reader, NULL);
    pthread_join(r, &rs);
    printf("detached writers, then a reader: %ld\n", (long)rs);
    printf("main's tls: %d\n", tls);
    printf("done\n");
    return 0;
}
