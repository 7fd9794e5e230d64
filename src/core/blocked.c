/*
 * blocked.c - the per-thread wait records (see blocked.h).
 *
 * A fixed table: a thread takes the next slot the first time it waits and
 * keeps it; past the table's end threads share the last slot (the report
 * then shows one of them).  Initial-exec TLS so the fault handler never
 * calls into the dynamic linker.  A slot is a cache line: its thread
 * writes its call count at every runtime call.
 */
#include "blocked.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/stats.h"

#define SLOTS (4096 + 64) /* every compute thread SDSM_THREADS allows, the main thread and some */

typedef struct slot {
    _Atomic uint32_t kind;
    _Atomic int64_t id;
    _Atomic uint64_t since;
    _Atomic uint32_t calls;
    _Atomic int app; /* registered (sdsm_wait_register) */
    int label, tid;
    clockid_t cpu; /* its CPU-time clock */
    /* the watchdog's last look (sdsm_wait_look) */
    _Atomic uint32_t seen;
    _Atomic uint64_t seen_ns; /* when it first saw that count; 0: never looked */
} __attribute__((aligned(64))) slot_t;

static slot_t slots[SLOTS];
static _Atomic int nslots;
static __thread int my_slot __attribute__((tls_model("initial-exec"))) = -1;
__thread _Atomic uint32_t *sdsm_wait_my_calls __attribute__((tls_model("initial-exec")));

static slot_t *mine(void)
{
    if (my_slot < 0) {
        int s = atomic_fetch_add(&nslots, 1);
        my_slot = s < SLOTS ? s : SLOTS - 1;
    }
    return &slots[my_slot];
}

int sdsm_wait_register(int label)
{
    slot_t *s = mine();
    s->label = label;
    s->tid = (int)syscall(SYS_gettid);
    if (pthread_getcpuclockid(pthread_self(), &s->cpu))
        s->cpu = (clockid_t)-1;
    sdsm_wait_my_calls = &s->calls;
    atomic_store_explicit(&s->app, 1, memory_order_release);
    return my_slot;
}

uint32_t sdsm_wait_calls(int rec)
{
    return rec >= 0 && rec < SLOTS ? atomic_load_explicit(&slots[rec].calls, memory_order_relaxed) : 0;
}

uint64_t sdsm_wait_cpu_ns(int rec)
{
    struct timespec ts;
    if (rec < 0 || rec >= SLOTS || !atomic_load_explicit(&slots[rec].app, memory_order_acquire) ||
        slots[rec].cpu == (clockid_t)-1 || clock_gettime(slots[rec].cpu, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

int sdsm_wait_each(void (*fn)(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns), void *arg,
                   uint64_t now)
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

void sdsm_wait_look(uint64_t now)
{
    int n = atomic_load(&nslots);
    for (int i = 0; i < n && i < SLOTS; i++) {
        slot_t *s = &slots[i];
        uint32_t c = atomic_load_explicit(&s->calls, memory_order_relaxed);
        if (!atomic_load_explicit(&s->seen_ns, memory_order_relaxed) ||
            c != atomic_load_explicit(&s->seen, memory_order_relaxed)) {
            atomic_store_explicit(&s->seen, c, memory_order_relaxed);
            atomic_store_explicit(&s->seen_ns, now, memory_order_relaxed);
        }
    }
}

char sdsm_task_state(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = NULL;
    for (char *c = buf; *c; c++)
        if (*c == ')')
            close = c; /* the name may hold a ')' itself */
    return close && close[1] == ' ' ? close[2] : 0;
}

void sdsm_wait_each_app(void (*fn)(void *arg, int label, int computing, int waiting, uint64_t quiet),
                        void *arg, uint64_t now)
{
    int n = atomic_load(&nslots);
    for (int i = 0; i < n && i < SLOTS; i++) {
        slot_t *s = &slots[i];
        if (!atomic_load_explicit(&s->app, memory_order_acquire))
            continue;
        int waiting = atomic_load_explicit(&s->kind, memory_order_acquire) != SDSM_WAIT_NONE;
        uint64_t seen_ns = atomic_load_explicit(&s->seen_ns, memory_order_relaxed), quiet;
        if (!seen_ns)
            quiet = UINT64_MAX;
        else if (atomic_load_explicit(&s->calls, memory_order_relaxed) !=
                 atomic_load_explicit(&s->seen, memory_order_relaxed))
            quiet = 0;
        else
            quiet = now > seen_ns ? now - seen_ns : 0;
        fn(arg, s->label, !waiting && sdsm_task_state(s->tid) == 'R', waiting, quiet);
    }
}

int sdsm_wait_label(int rec, int *label)
{
    if (rec < 0 || rec >= SLOTS || !atomic_load_explicit(&slots[rec].app, memory_order_acquire))
        return 0;
    *label = slots[rec].label;
    return 1;
}
