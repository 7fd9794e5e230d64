/* Calls that cannot work across ranks, one per argument: each must stop the
 * job at the call with a message naming it (heapfull: a malloc larger than
 * the shared heap gets NULL, with a message saying why). */
#include <stdlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *idle(void *arg) { return arg; }

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "fork")) {
        pid_t p = fork();
        printf("fork returned %d\n", (int)p);
    } else if (!strcmp(what, "private")) {
        pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        pthread_mutex_init(m, NULL);
        pthread_mutex_lock(m);
        printf("locked a mutex in private memory\n");
    } else if (!strcmp(what, "cancel")) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
        pthread_cancel(t);
        printf("cancelled\n");
    } else if (!strcmp(what, "barrier")) {
        static pthread_barrier_t b;
        pthread_barrier_init(&b, NULL, 5);
        printf("a barrier of 5 threads\n");
    } else if (!strcmp(what, "heapfull")) {
        void *p = malloc((size_t)1 << 40);
        printf("malloc of 1 TiB: %s\n", p ? "a block" : "NULL");
    } else if (!strcmp(what, "semopen")) {
        sem_t *s = sem_open("/sdsm-test", O_CREAT, 0600, 1);
        printf("sem_open returned %p\n", (void *)s);
    }
    printf("done\n");
    return 0;
}
