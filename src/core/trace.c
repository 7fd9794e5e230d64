/*
 * trace.c - per-thread span buffers and the counter sampler (see trace.h).
 *
 * Invariants: a buffer is written only by its thread (records, count, and
 * the flush of a full buffer), until sdsm_trace_fini, which runs after the
 * runtime's threads are joined and the application's compute threads have
 * returned, so it may read every buffer.  Buffers come from one mapping made
 * at init (no allocation on the fault path); a thread past the last slot is
 * not traced and counted.  Writes go to one O_APPEND file per rank: each
 * chunk is one write(2), which Linux does not interleave with another
 * thread's on a regular file.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/status.h"

#define SLOTS             256
#define MAGIC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define M_SPAN            MAGIC('S', 'P', 'A', 'N')
#define M_SMPL            MAGIC('S', 'M', 'P', 'L')
#define M_NAME            MAGIC('N', 'A', 'M', 'E')
#define M_TEND            MAGIC('T', 'E', 'N', 'D')
#define SAMPLE_VALS       (SDSM_ST_COUNT + 4 * SDSM_STATS_MAX_TYPES)
#define SAMPLES_PER_CHUNK 256

_Atomic int sdsm_trace_on;

typedef struct slot {
    uint32_t n; /* records in buf (owner only, until fini) */
    uint32_t os_tid;
    sdsm_trace_rec_t *buf;
} slot_t;

static struct {
    int fd;
    size_t cap; /* records per slot */
    slot_t slots[SLOTS];
    _Atomic int nslots;
    _Atomic uint64_t dropped;  /* records lost to failed writes */
    _Atomic uint64_t untraced; /* threads past the last slot */
    _Atomic int broken;        /* a write failed: write no more */
    void *pool;
    size_t pool_len;
    uint64_t interval_ns;
    pthread_t sampler;
    int sampler_on;
    int stopped; /* the last sample is taken */
    pthread_mutex_t mtx;
    pthread_cond_t cv;
    int stopping;
    uint64_t samples[SAMPLES_PER_CHUNK][1 + SAMPLE_VALS];
    int nsamples;
} trace_file = {.fd = -1, .mtx = PTHREAD_MUTEX_INITIALIZER};

static __thread slot_t *my __attribute__((tls_model("initial-exec")));
static __thread int my_none __attribute__((tls_model("initial-exec")));

static const char *const kind_names[SDSM_TR_COUNT] = {
    [SDSM_TR_FAULT_READ] = "read fault", [SDSM_TR_FAULT_WRITE] = "write fault",
    [SDSM_TR_DIFF_MADE] = "diff made",   [SDSM_TR_DIFF_APPLIED] = "diff applied",
    [SDSM_TR_LOCK_WAIT] = "lock wait",   [SDSM_TR_LOCK_HOLD] = "lock hold",
    [SDSM_TR_BARRIER] = "barrier",       [SDSM_TR_COND_WAIT] = "cond wait",
    [SDSM_TR_ALLOC] = "alloc",           [SDSM_TR_FLUSH] = "trace flush",
};

/*
 * One chunk, header and body, in one writev: on a regular file Linux does
 * not interleave it with another thread's write.  A short write (disk full)
 * loses the chunk, and nothing more is written so the file stays readable.
 */
static void write_chunk(uint32_t magic, uint32_t x, uint32_t y, uint32_t count, const void *body, size_t len,
                        uint64_t nrecs)
{
    uint32_t h[4] = {magic, x, y, count};
    struct iovec iov[2] = {{h, sizeof h}, {(void *)body, len}};
    if (atomic_load_explicit(&trace_file.broken, memory_order_relaxed)) {
        atomic_fetch_add(&trace_file.dropped, nrecs);
        return;
    }
    ssize_t w;
    do
        w = writev(trace_file.fd, iov, 2);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)(sizeof h + len)) {
        atomic_store(&trace_file.broken, 1);
        atomic_fetch_add(&trace_file.dropped, nrecs);
    }
}

static void flush_slot(slot_t *s, uint32_t idx)
{
    if (!s->n || trace_file.fd < 0)
        return;
    write_chunk(M_SPAN, idx, s->os_tid, s->n, s->buf, (size_t)s->n * sizeof *s->buf, s->n);
    s->n = 0;
}

static slot_t *claim(void)
{
    if (my_none)
        return NULL;
    int i = atomic_fetch_add(&trace_file.nslots, 1);
    if (i >= SLOTS) {
        my_none = 1;
        atomic_fetch_add(&trace_file.untraced, 1);
        return NULL;
    }
    my = &trace_file.slots[i];
    my->os_tid = (uint32_t)syscall(SYS_gettid);
    my->buf = (sdsm_trace_rec_t *)trace_file.pool + (size_t)i * trace_file.cap;
    return my;
}

void sdsm_trace_rec(sdsm_trace_kind_t kind, uint64_t t0, uint32_t a, uint64_t b, uint64_t c)
{
    slot_t *s = my ? my : claim();
    if (!s || !t0) /* t0 0: the span began before tracing started */
        return;
    s->buf[s->n++] = (sdsm_trace_rec_t){.t0 = t0, .t1 = sdsm_now_ns(), .kind = kind, .a = a, .b = b, .c = c};
    if (s->n < trace_file.cap)
        return;
    /* Full: this thread writes it now, and the record of that write goes
     * first into the emptied buffer, so the cost shows in the trace. */
    uint64_t f0 = sdsm_now_ns();
    size_t bytes = (size_t)s->n * sizeof *s->buf;
    flush_slot(s, (uint32_t)(s - trace_file.slots));
    s->buf[s->n++] = (sdsm_trace_rec_t){.t0 = f0, .t1 = sdsm_now_ns(), .kind = SDSM_TR_FLUSH, .b = bytes};
}

void sdsm_trace_thread_name(const char *name, int idx)
{
    if (!sdsm_trace_enabled())
        return;
    slot_t *s = my ? my : claim();
    if (!s)
        return;
    char n[16] = {0};
    if (idx >= 0)
        snprintf(n, sizeof n, "%s %d", name, idx);
    else
        snprintf(n, sizeof n, "%s", name);
    write_chunk(M_NAME, (uint32_t)(s - trace_file.slots), s->os_tid, 16, n, sizeof n, 0);
}

static void sample_now(void)
{
    uint64_t *v = trace_file.samples[trace_file.nsamples];
    v[0] = sdsm_now_ns();
    for (int i = 0; i < SDSM_ST_COUNT; i++)
        v[1 + i] = atomic_load_explicit(&sdsm_stats.v[i], memory_order_relaxed);
    uint64_t *m = v + 1 + SDSM_ST_COUNT;
    for (int t = 0; t < SDSM_STATS_MAX_TYPES; t++) {
        m[t] = atomic_load_explicit(&sdsm_stats.msgs_sent[t], memory_order_relaxed);
        m[SDSM_STATS_MAX_TYPES + t] = atomic_load_explicit(&sdsm_stats.bytes_sent[t], memory_order_relaxed);
        m[2 * SDSM_STATS_MAX_TYPES + t] =
            atomic_load_explicit(&sdsm_stats.msgs_recv[t], memory_order_relaxed);
        m[3 * SDSM_STATS_MAX_TYPES + t] =
            atomic_load_explicit(&sdsm_stats.bytes_recv[t], memory_order_relaxed);
    }
    if (++trace_file.nsamples == SAMPLES_PER_CHUNK) {
        write_chunk(M_SMPL, SAMPLE_VALS, (uint32_t)trace_file.nsamples, 0, trace_file.samples,
                    sizeof trace_file.samples, (uint64_t)trace_file.nsamples);
        trace_file.nsamples = 0;
    }
}

/* The sampler: the counters every interval, so traffic can be drawn over time. */
static void *sampler_main(void *arg)
{
    (void)arg;
    sdsm_trace_thread_name("trace sampler", -1);
    pthread_mutex_lock(&trace_file.mtx);
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    while (!trace_file.stopping) {
        uint64_t ns = (uint64_t)due.tv_nsec + trace_file.interval_ns;
        due.tv_sec += (time_t)(ns / 1000000000u);
        due.tv_nsec = (long)(ns % 1000000000u);
        while (!trace_file.stopping &&
               pthread_cond_timedwait(&trace_file.cv, &trace_file.mtx, &due) != ETIMEDOUT)
            ;
        if (!trace_file.stopping)
            sample_now();
    }
    pthread_mutex_unlock(&trace_file.mtx);
    return NULL;
}

/* Names are ours, the host's comes from the environment: keep JSON valid. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++)
        fputc(*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 ? '?' : *s, f);
    fputc('"', f);
}

static int write_header(int rank, int nprocs, const char *(*type_name)(unsigned))
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct timespec rt, mo;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mo);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return SDSM_ENOMEM; /* errno says so */
    fprintf(f,
            "{\"format\":\"sdsm-trace\",\"version\":1,\"rank\":%d,\"nprocs\":%d,\"pid\":%d,"
            "\"page_size\":%zu,\"heap_base\":%lu,\"interval_ns\":%llu,\"rec_size\":%zu,"
            "\"realtime_ns\":%llu,\"monotonic_ns\":%llu,\"host\":",
            rank, nprocs, (int)getpid(), sdsm_cfg.page_size, (unsigned long)sdsm_cfg.heap_base,
            (unsigned long long)trace_file.interval_ns, sizeof(sdsm_trace_rec_t),
            (unsigned long long)rt.tv_sec * 1000000000ull + (unsigned long long)rt.tv_nsec,
            (unsigned long long)mo.tv_sec * 1000000000ull + (unsigned long long)mo.tv_nsec);
    json_str(f, host);
    /* Ranks of one kernel share CLOCK_MONOTONIC: the report aligns them exactly. */
    char boot[64] = "";
    int bfd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (bfd >= 0) {
        ssize_t got = read(bfd, boot, sizeof boot - 1);
        boot[got > 0 ? got : 0] = '\0';
        boot[strcspn(boot, "\n")] = '\0';
        close(bfd);
    }
    fprintf(f, ",\"boot_id\":");
    json_str(f, boot);
    fprintf(f, ",\"launcher_host\":");
    json_str(f, sdsm_cfg.host ? sdsm_cfg.host : host);
    fprintf(f, ",\"kinds\":[");
    for (int k = 0; k < SDSM_TR_COUNT; k++)
        fprintf(f, "%s\"%s\"", k ? "," : "", kind_names[k]);
    fprintf(f, "],\"stats\":[");
    for (int s = 0; s < SDSM_ST_COUNT; s++) {
        fputs(s ? "," : "", f);
        json_str(f, sdsm_stats_key(s));
    }
    fprintf(f, "],\"msg_types\":[");
    for (unsigned t = 0; t < SDSM_STATS_MAX_TYPES; t++) {
        fputs(t ? "," : "", f);
        json_str(f, type_name(t) ? type_name(t) : "");
    }
    fprintf(f, "]}\n");
    fclose(f);
    int rc = write(trace_file.fd, text, len) == (ssize_t)len ? 0 : SDSM_ESYS;
    free(text);
    if (rc)
        errno = EIO; /* a short write says nothing of its own */
    return rc;
}

int sdsm_trace_init(const char *dir, int rank, int nprocs, long interval_ms, size_t buf_bytes,
                    const char *(*type_name)(unsigned type))
{
    char path[4096];
    trace_file.cap = buf_bytes / sizeof(sdsm_trace_rec_t);
    if (trace_file.cap < 16)
        trace_file.cap = 16;
    trace_file.interval_ns = (uint64_t)interval_ms * 1000000u;
    snprintf(path, sizeof path, "%s/rank-%d.sdsmtrace", dir, rank);
    mkdir(dir, 0777); /* sdsmrun made it; a direct launch may not have */
    trace_file.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (trace_file.fd < 0) {
        sdsm_error_log("SDSM_TRACE: cannot create %s: %m (the run goes on untraced)", path);
        return SDSM_ESYS;
    }
    /* Address space only: pages are used as threads fill their buffers. */
    trace_file.pool_len = (size_t)SLOTS * trace_file.cap * sizeof(sdsm_trace_rec_t);
    trace_file.pool = mmap(NULL, trace_file.pool_len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int rc = trace_file.pool == MAP_FAILED ? SDSM_ESYS : write_header(rank, nprocs, type_name);
    if (rc) { /* errno says why */
        sdsm_error_log("SDSM_TRACE: cannot set up the trace %s: %m (the run goes on untraced)", path);
        if (trace_file.pool != MAP_FAILED)
            munmap(trace_file.pool, trace_file.pool_len);
        trace_file.pool = NULL;
        close(trace_file.fd);
        trace_file.fd = -1;
        return rc;
    }
    atomic_store(&sdsm_trace_on, 1);
    sdsm_trace_thread_name("main", -1);
    trace_file.stopping = 0;
    trace_file.stopped = 0;
    trace_file.nsamples = 0;
    sample_now();          /* the counters' starting point */
    pthread_condattr_t ca; /* the sampler's deadlines are on the monotonic clock */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&trace_file.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&trace_file.sampler, NULL, sampler_main, NULL) == 0)
        trace_file.sampler_on = 1;
    else
        sdsm_warn("SDSM_TRACE: no sampler thread: message counters only at start and end");
    return 0;
}

void sdsm_trace_stop(void)
{
    if (trace_file.fd < 0 || trace_file.stopped)
        return;
    trace_file.stopped = 1;
    if (trace_file.sampler_on) {
        pthread_mutex_lock(&trace_file.mtx);
        trace_file.stopping = 1;
        pthread_cond_signal(&trace_file.cv);
        pthread_mutex_unlock(&trace_file.mtx);
        pthread_join(trace_file.sampler, NULL);
        trace_file.sampler_on = 0;
    }
    sample_now();
    if (trace_file.nsamples)
        write_chunk(M_SMPL, SAMPLE_VALS, (uint32_t)trace_file.nsamples, 0, trace_file.samples,
                    (size_t)trace_file.nsamples * sizeof trace_file.samples[0],
                    (uint64_t)trace_file.nsamples);
    trace_file.nsamples = 0;
}

void sdsm_trace_fini(void)
{
    if (trace_file.fd < 0)
        return;
    sdsm_trace_stop();
    atomic_store(&sdsm_trace_on, 0);
    int n = atomic_load(&trace_file.nslots);
    for (int i = 0; i < n && i < SLOTS; i++)
        flush_slot(&trace_file.slots[i], (uint32_t)i);
    struct timespec rt, mo;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mo);
    uint64_t end[4] = {(uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec,
                       (uint64_t)mo.tv_sec * 1000000000u + (uint64_t)mo.tv_nsec,
                       atomic_load(&trace_file.dropped), atomic_load(&trace_file.untraced)};
    write_chunk(M_TEND, 0, 0, 4, end, sizeof end, 0);
    if (end[2])
        sdsm_warn("SDSM_TRACE: %llu records lost (writing the trace failed)", (unsigned long long)end[2]);
    if (close(trace_file.fd))
        sdsm_error_log("SDSM_TRACE: closing the trace: %m");
    trace_file.fd = -1;
    munmap(trace_file.pool, trace_file.pool_len);
    trace_file.pool = NULL;
    memset(trace_file.slots, 0, sizeof trace_file.slots);
    atomic_store(&trace_file.nslots, 0);
}
