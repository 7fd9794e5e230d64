/*
 * waits.c - the per-thread wait records (see waits.h).
 *
 * A fixed table: a thread takes the next slot the first time it waits and
 * keeps it; past the table's end threads share the last slot (the report
 * then shows one of them).  Initial-exec TLS so the fault handler never
 * calls into the dynamic linker.
 */
#include "waits.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "core/stats.h"

#define SLOTS 256

typedef struct slot {
    _Atomic uint32_t kind;
    _Atomic int64_t  id;
    _Atomic uint64_t since;
} slot_t;

static slot_t          slots[SLOTS];
static _Atomic int     nslots;
static __thread int    my_slot __attribute__((tls_model("initial-exec"))) = -1;

static slot_t *mine(void)
{
    if (my_slot < 0) {
        int s = atomic_fetch_add(&nslots, 1);
        my_slot = s < SLOTS ? s : SLOTS - 1;
    }
    return &slots[my_slot];
}

void sdsm_wait_enter(sdsm_wait_save_t *save, sdsm_wait_kind_t kind, int64_t id)
{
    slot_t *s = mine();
    save->kind = atomic_load_explicit(&s->kind, memory_order_relaxed);
    save->id = atomic_load_explicit(&s->id, memory_order_relaxed);
    save->since = atomic_load_explicit(&s->since, memory_order_relaxed);
    atomic_store_explicit(&s->since, sdsm_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&s->id, id, memory_order_relaxed);
    atomic_store_explicit(&s->kind, kind, memory_order_release);
}

void sdsm_wait_leave(const sdsm_wait_save_t *save)
{
    slot_t *s = mine();
    atomic_store_explicit(&s->kind, save->kind, memory_order_release);
    atomic_store_explicit(&s->id, save->id, memory_order_relaxed);
    atomic_store_explicit(&s->since, save->since, memory_order_relaxed);
}

int sdsm_wait_each(void (*fn)(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns),
                   void *arg, uint64_t now)
{
    int n = atomic_load(&nslots);
    if (n > SLOTS)
        n = SLOTS;
    for (int i = 0; i < n; i++) {
        uint32_t k = atomic_load_explicit(&slots[i].kind, memory_order_acquire);
        if (k == SDSM_WAIT_NONE || k >= SDSM_WAIT_NKINDS)
            continue;
        int64_t id = atomic_load_explicit(&slots[i].id, memory_order_relaxed);
        uint64_t t = atomic_load_explicit(&slots[i].since, memory_order_relaxed);
        if (fn)
            fn(arg, i, k, id, now > t ? now - t : 0);
    }
    return n;
}

static void longest(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns)
{
    (void)thread, (void)kind, (void)id;
    uint64_t *m = arg;
    if (ns > *m)
        *m = ns;
}

uint64_t sdsm_wait_longest_ns(uint64_t now)
{
    uint64_t m = 0;
    sdsm_wait_each(longest, &m, now);
    return m;
}

/*
 * /proc/loadavg's fourth field is "runnable/total" (runnable counts the
 * reader).  Busy: more runnable threads than online CPUs.  pread on a file
 * opened once, so it is safe in the fault handler; one thread refreshes at
 * a time, the others use the last answer.
 */
static _Atomic int      busy_fd = -1;
static _Atomic int      busy;
static _Atomic uint64_t busy_next;
static long             ncpu;

static int read_busy(int fd)
{
    char b[128];
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    if (n <= 0)
        return 0;
    b[n] = 0;
    const char *p = b;
    for (int f = 0; f < 3 && *p; p++)
        if (*p == ' ')
            f++;
    long run = 0;
    while (*p >= '0' && *p <= '9')
        run = run * 10 + (*p++ - '0');
    if (*p != '/')
        return 0;
    return run > ncpu;
}

void sdsm_host_busy_open(void)
{
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    atomic_store(&busy_next, 0);
    atomic_store(&busy, 0);
    atomic_store(&busy_fd, fd);
}

void sdsm_host_busy_close(void)
{
    int fd = atomic_exchange(&busy_fd, -1);
    atomic_store(&busy, 0);
    if (fd >= 0)
        close(fd);
}

int sdsm_host_busy(void)
{
    uint64_t now = sdsm_now_ns(), next = atomic_load_explicit(&busy_next, memory_order_relaxed);
    if (now < next || !atomic_compare_exchange_strong(&busy_next, &next, now + 20000000u))
        return atomic_load_explicit(&busy, memory_order_relaxed);
    int fd = atomic_load(&busy_fd);
    if (fd < 0)
        return 0;
    int b = read_busy(fd);
    atomic_store_explicit(&busy, b, memory_order_relaxed);
    return b;
}
