/* One thread at a time takes a mutex, a spinlock and an rwlock many times:
 * nobody ever waits, so no unlock has anyone to wake (the test counts the
 * condition signals the job sent). */
#include <pthread.h>
#include <stdio.h>

#define ITERS 500

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static long counter;

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
        pthread_spin_lock(&spin);
        counter++;
        pthread_spin_unlock(&spin);
        pthread_rwlock_wrlock(&rw);
        counter++;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    for (int k = 0; k < 2; k++) { /* one thread after the other */
        pthread_create(&t, NULL, work, NULL);
        pthread_join(t, NULL);
    }
    printf("%ld\n", counter);
    printf("done\n");
    return 0;
}
