/* One mutex that every thread takes thousands of times, trylock included:
 * the count of threads inside it at once must never pass one, and the
 * counter it guards must come out exact.  (With one copy of the memory a
 * mutex is a futex word in the mutex itself; an unlock that cleared the
 * word a second time, after the next holder had taken it, let two threads
 * in at once.) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define NT    8
#define ITERS 3000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long counter, inside, overlaps, tried;

static void enter(void)
{
    if (++inside != 1)
        overlaps++;
}

static void leave(void) { inside--; }

static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < ITERS; i++) {
        if (i % 7 == 0) {
            while (pthread_mutex_trylock(&mu) == EBUSY)
                ;
            tried++;
        } else {
            pthread_mutex_lock(&mu);
        }
        enter();
        counter += id + 1;
        leave();
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    printf("counter %ld (expected %ld), trylocks %ld, overlaps %ld\n", counter,
           (long)ITERS * NT * (NT + 1) / 2, tried, overlaps);
    printf("done\n");
    return 0;
}
