/*
 * config.c - one table of every SDSM_* variable.  Each entry says how to
 * parse it, its default and what it is for; sdsm_config_load walks the table
 * once at init, so no other file calls getenv().
 */
#ifndef _GNU_SOURCE /* sched_getaffinity, CPU_COUNT (sdsmrun builds this file too) */
#define _GNU_SOURCE
#endif
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "status.h"

sdsm_config_t sdsm_cfg;

const char *const sdsm_proto_names[SDSM_PROTO_COUNT] = {"hlrc", "update", "ibec"};
static const char *const errmode_names[] = {"abort", "return", NULL};
static const char *const proto_names[] = {"hlrc", "update", "ibec", NULL};
static const char *const log_names[] = {"error", "warn", "info", "debug", NULL};
static const char *const zcopy_names[] = {"0", "1", "auto", NULL}; /* sdsm_zcopy_mode_t */
static const char *const barrier_names[] = {"auto", "central", "tree", NULL};
static const char *const stats_names[] = {"0", "1", "all", "json", NULL}; /* sdsm_stats_mode_t */

typedef enum { T_LONG, T_SIZE, T_STR, T_ENUM, T_ADDR, T_MS } vtype_t;

typedef struct var {
    const char *name;
    vtype_t type;
    size_t offset;
    const char *def;
    long lo, hi;                /* T_LONG bounds; T_MS bounds in ms */
    const char *const *choices; /* T_ENUM */
    const char *doc;
} var_t;

#define OFF(f) offsetof(sdsm_config_t, f)
static const var_t vars[] = {
    {"SDSM_RANK", T_LONG, OFF(rank), "-1", -1, 1 << 20, NULL, "rank of this process (set by sdsmrun)"},
    {"SDSM_NPROCS", T_LONG, OFF(nprocs), "1", 1, 1 << 20, NULL, "number of ranks (set by sdsmrun)"},
    {"SDSM_RENDEZVOUS", T_STR, OFF(rendezvous), NULL, 0, 0, NULL,
     "launcher address ip:port (set by sdsmrun)"},
    {"SDSM_JOB_KEY", T_STR, OFF(job_key), NULL, 0, 0, NULL, "per-job secret, 64 hex digits (set by sdsmrun)"},
    {"SDSM_HOST", T_STR, OFF(host), NULL, 0, 0, NULL, "host the rank was placed on (set by sdsmrun)"},
    {"SDSM_IFACE", T_STR, OFF(iface), NULL, 0, 0, NULL,
     "where ranks on several hosts listen: interface names or networks a.b.c.d/n, comma-separated "
     "(default: the address that reaches the launcher; loopback on one host)"},
    {"SDSM_RSH", T_STR, OFF(rsh), NULL, 0, 0, NULL,
     "sdsmrun's remote shell for --hosts (default: ssh -o BatchMode=yes)"},
    {"SDSM_HEAP_SIZE", T_SIZE, OFF(heap_size), "64G", 0, 0, NULL,
     "shared address space reserved per process (no memory is used until touched)"},
    {"SDSM_PAGE_SIZE", T_SIZE, OFF(page_size), "4096", 0, 0, NULL,
     "coherence unit in bytes, a power of two multiple of the OS page"},
    {"SDSM_HEAP_BASE", T_ADDR, OFF(heap_base), SDSM_STR(SDSM_DEFAULT_HEAP_BASE), 0, 0, NULL,
     "virtual address of the shared region, identical in every rank"},
    {"SDSM_OMP_HOME", T_STR, OFF(omp_home), NULL, 0, 0, NULL,
     "OpenMP programs (sdsmcc): home of the heap's and the globals' pages: first-touch (default; "
     "rank 0 in a program with an omp flush), cyclic, block (each large block spread over the "
     "ranks) or a rank"},
    {"SDSM_OMP_HEAP", T_STR, OFF(omp_heap), NULL, 0, 0, NULL,
     "OpenMP programs (sdsmcc): shared heap reserved for malloc, split between the ranks "
     "(default 8G; no memory is used until touched)"},
    {"SDSM_OMP_STACK", T_STR, OFF(omp_stack), NULL, 0, 0, NULL,
     "OpenMP programs (sdsmcc): size of the master thread's stack in shared memory, on which main "
     "runs (default: the stack limit, ulimit -s, from 8M to 256M); an overflow stops the job"},
    {"SDSM_OMP_VERBOSE", T_STR, OFF(omp_verbose), NULL, 0, 0, NULL,
     "OpenMP programs (sdsmcc): 1 reports at exit heap blocks freed by another rank than their "
     "allocator (their memory is not reused)"},
    {"SDSM_PTHREAD_PLACE", T_STR, OFF(pthread_place), NULL, 0, 0, NULL,
     "pthreads programs (sdsmcc -pthread): the rank pthread_create starts a thread on: "
     "roundrobin (default: a rank's k-th thread on rank (rank + k) mod ranks, the next rank "
     "first), local (the creating thread's rank) or a rank number"},
    {"SDSM_ASLR", T_LONG, OFF(aslr), "0", 0, 1, NULL,
     "1: keep address randomization for the ranks (0: sdsmrun starts them with it off, and a rank "
     "started by mpirun or srun turns it off for itself by starting once more before main, so the "
     "program, its globals and libraries sit at the same addresses in every rank, see "
     "sdsm_check_addresses)"},
    {"SDSM_STATS", T_ENUM, OFF(stats), "0", 0, 0, stats_names,
     "rank 0 prints every rank's statistics at sdsm_finalize: 1 (a summary line per rank, then the "
     "counters that are not 0, by group, with their units), all (zeros too), json (one line of "
     "JSON with every counter in its raw unit, for scripts); 0: none"},
    {"SDSM_ERRORS", T_ENUM, OFF(errors), "abort", 0, 0, errmode_names,
     "abort: a failing call stops the job; return: calls return negative codes"},
    {"SDSM_PROTOCOL", T_ENUM, OFF(protocol), "hlrc", 0, 0, proto_names,
     "coherence protocol: hlrc (home-based release consistency, invalidate), update (SCASH: "
     "barriers push new contents to copy holders), ibec (SMS: lock-bound diffs, barrier updates)"},
    {"SDSM_LOG", T_ENUM, OFF(log_level), "warn", 0, 0, log_names, "log level: error, warn, info, debug"},
    {"SDSM_BARRIER_MANAGER", T_LONG, OFF(barrier_manager), "0", 0, 1 << 20, NULL,
     "rank that manages barriers"},
    {"SDSM_BARRIER", T_ENUM, OFF(barrier_kind), "auto", 0, 0, barrier_names,
     "barrier algorithm: central (every rank to the manager and back), tree (notices merged up a "
     "tree rooted at the manager, released down it: the ranks of a host under their leader, in "
     "shared memory with SDSM_BARRIER_SHM, the leaders across hosts), auto (the tree where the job "
     "spans hosts or SDSM_BARRIER_SHM is on, else central; on one host with SDSM_HOST_SHARE, the "
     "ranks meet in shared memory whatever this says)"},
    {"SDSM_BARRIER_SHM", T_LONG, OFF(barrier_shm), "1", 0, 1, NULL,
     "1: where the ranks keep a copy of the memory each (a job across hosts, or SDSM_HOST_SHARE=0), "
     "the tree barrier's ranks of one host meet their host's node in shared memory (a slot each "
     "for the arrival, one for the release, futex(2) waits) instead of over loopback, and auto "
     "picks the tree on one host too; 0: over loopback"},
    {"SDSM_BARRIER_SHM_SLOT", T_LONG, OFF(barrier_shm_slot), "65536", 64, 1 << 24, NULL,
     "with SDSM_BARRIER_SHM: bytes of a rank's arrival in the host's block (8 per page it wrote "
     "since the last barrier, 44 more), and 16 times that for the release; a larger one goes by "
     "message; every rank of a host must have the same"},
    {"SDSM_TIMEOUT", T_LONG, OFF(timeout), "30", 1, 86400, NULL,
     "seconds allowed for job set-up before giving up"},
    {"SDSM_SPIN_US", T_LONG, OFF(spin_us), "50", 0, 1000000, NULL,
     "microseconds a waiting thread polls before it sleeps (yielding between polls where the job "
     "has more compute threads on the host than CPUs; where a word's polls mostly time out, its "
     "waiters sleep at once, probing now and then; where a poll loses its CPU to another process "
     "for 250 us or more, the rank stops polling for 5 ms to 1.28 s)"},
    {"SDSM_HIDE_SPIN_US", T_LONG, OFF(hide_spin_us), "1000", 0, 1000000, NULL,
     "SDSM_SPIN_US where a rank runs more compute threads than run slots (latency hiding): a "
     "waiting thread polls this long, yielding between polls, so that the rank's CPU never "
     "idles while its threads wait and a reply finds its waiter awake"},
    {"SDSM_SERVICE_ASIDE", T_LONG, OFF(service_aside), "2", -1, 1000000, NULL,
     "the service thread stops watching the network while a thread waiting in the event loop "
     "keeps serving others (a rank in a barrier serving pages): after that waiter woke for this "
     "many batches of messages (0: at once; -1: never); frames then wake that waiter only"},
    {"SDSM_REQ_PIN", T_LONG, OFF(req_pin), "1", 0, 2, NULL,
     "a thread that sends a request and waits for its reply (a fault, a lock, a barrier "
     "arrival) takes the peer's socket from the service thread until its wait ends, so that a "
     "reply arriving while the peer it woke holds its CPU wakes nobody and the sender finds it "
     "when it waits: 1 where it pays: where the sender will not poll (the rank's threads share "
     "CPUs, SDSM_SPIN_US is 0, or its last wait slept at once) and replies have been waking "
     "the service thread (more than 1 in 8 of the unpinned ones, measured as it runs); 2: "
     "always; 0: never"},
    {"SDSM_PREFETCH", T_LONG, OFF(prefetch), "256", 0, 1024, NULL,
     "most pages fetched ahead when a thread's read faults follow a pattern: forward, backward or "
     "strided (0: one page per fault); the window doubles at each fault along the pattern, and "
     "goes in requests of up to 33 pages, the faulting page's first, so that the rest arrive "
     "while the thread reads it"},
    {"SDSM_WRITE_AHEAD", T_LONG, OFF(write_ahead), "32", 0, 128, NULL,
     "most home pages made writable ahead when a thread's write faults on pages others hold "
     "follow a pattern (0: one page per fault; not under ibec)"},
    {"SDSM_HOME_HOT", T_LONG, OFF(home_hot), "-1", -1, 127, NULL,
     "a home page others hold, written by its home in this many intervals in a row (at most 4 "
     "apart, 16 where the kernel tracks written pages), stays writable; a release announces it if the kernel "
     "saw it written "
     "(SDSM_WP_TRACK), or always, checked again every 16 intervals, where the kernel cannot "
     "tell (0: off; -1: 3 where the kernel tells, else 0; not under ibec)"},
    {"SDSM_WP_TRACK", T_LONG, OFF(wp_track), "1", 0, 1, NULL,
     "hot home pages (SDSM_HOME_HOT): let the kernel tell which of them were written "
     "(userfaultfd's asynchronous write protection and PAGEMAP_SCAN, Linux 6.7 and later), so "
     "that a release announces only those (0: announce them all; not under ibec)"},
    {"SDSM_WRITE_BUFFER", T_LONG, OFF(write_buffer), "0", 0, 1 << 24, NULL,
     "write buffer: at most this many pages homed elsewhere wait for the release with their "
     "diffs unmade; a write fault beyond it sends the oldest one's diff home now (0: off; hlrc "
     "and update)"},
    {"SDSM_ZEROCOPY", T_ENUM, OFF(zerocopy), "auto", 0, 0, zcopy_names,
     "read pages straight from the home's memory instead of receiving them over TCP: auto (ranks "
     "on this host), 1 (every rank whose memory this kernel can open), 0 (never)"},
    {"SDSM_HOST_SHARE", T_LONG, OFF(host_share), "1", 0, 1, NULL,
     "1: when every rank of the job runs on this host, the ranks map one copy of the shared "
     "memory, so the processor keeps it coherent: no page moves, no fault after a page's "
     "first access, no twin or diff, whatever SDSM_PROTOCOL says; 0: the ranks keep a copy "
     "each and the protocol runs between them as between hosts (to see on one machine what a "
     "cluster will do)"},
    {"SDSM_HOME_MIGRATE", T_LONG, OFF(home_migrate), "1", 0, 1, NULL,
     "hlrc: a page that one rank other than its home writes alone in two write intervals in a "
     "row gets that rank as its home at the barrier that ends the second (JIAJIA's home "
     "migration), so it costs no more twins, diffs or write faults there (0: homes stay; not with "
     "the flag support, SDSM_HOME_TWINS)"},
    {"SDSM_REREAD", T_LONG, OFF(reread), "1", 0, 1, NULL,
     "hlrc: a page a barrier took away from this rank, which it read again before the next "
     "barrier, twice in a row, is fetched again as soon as the next barrier that takes it away "
     "ends, with the others of its home in one request, and its first read costs a local fault "
     "instead of a round trip (0: fetched when read)"},
    {"SDSM_HOME_TWINS", T_LONG, OFF(home_twins), "-1", -1, 1, NULL,
     "1: a home page others hold is twinned when its home writes it, and readers are served the "
     "twin until the home's next release, so no rank sees the home's new value of one page (a "
     "flag) while its copy of another the home wrote before (the data) is still the old one; "
     "0: readers get the home's copy as it is; -1 (default): 1 for OpenMP programs (sdsmcc) whose "
     "code holds a flush (a memory fence), which makes such flags correct, else 0; hlrc and update"},
    {"SDSM_FLUSH_PUBLISH", T_LONG, OFF(flush_publish), "0", 0, 1, NULL,
     "1: an OpenMP flush in code sdsmcc compiled with gcc on x86-64 (a call there) publishes "
     "the rank's pending writes at once, as an unlock would, so a thread of another rank "
     "spinning on a flag sees it about a round trip later (not where SDSM_OMP_HOME spreads the "
     "program's data over several homes; NPB LU.S 1.4 x faster at 2 ranks, LU.W 1.15 x slower); "
     "0 (default): the flush is a fence only, and the quiet publisher (SDSM_QUIET_US) publishes "
     "them once the rank is quiet; hlrc and update"},
    {"SDSM_QUIET_US", T_LONG, OFF(quiet_us), "-1", -1, 10000000, NULL,
     "a rank whose threads made no runtime call (no fault, synchronization or atomic) for this "
     "many microseconds while it holds writes not yet released publishes them as an unlock "
     "would: a thread of another rank spinning on a flag with plain reads and OpenMP flush sees "
     "the flag within about this time plus a round trip (doubled while the rank keeps rewriting "
     "the same pages and no other rank's writes take its copies, up to 64 times; 0: never; -1 (default): "
     "1000 for OpenMP programs "
     "(sdsmcc) whose code holds a flush (a memory fence, or a call where sdsmcc made it one), "
     "else 0; hlrc and update)"},
    {"SDSM_UNMAP_BARRIERS", T_LONG, OFF(unmap_barriers), "8", 0, 1000000, NULL,
     "ibec: a copy unused for this many barriers is dropped and leaves the copyset (0: never)"},
    {"SDSM_IBEC_CHECK", T_LONG, OFF(ibec_check), "0", 0, 1, NULL,
     "1: under ibec, report each page one rank wrote outside any critical section while another "
     "read it before the next barrier (a debugging aid, slower; docs/guide/protocols.md: 'Finding ibec "
     "misuse')"},
    {"SDSM_IBEC_SECTIONS", T_LONG, OFF(ibec_sections), "0", 0, 13, NULL,
     "ibec: most threads of a rank inside critical sections at once, each with a CPU protection key "
     "of its own (0: as many as the keys allow; 1, or no keys: one at a time)"},
    {"SDSM_THREADS", T_LONG, OFF(threads), "1", 1, 4096, NULL,
     "compute threads each rank runs (sdsm_thread_create; sdsm_thread_count() is ranks x this)"},
    {"SDSM_RUN_THREADS", T_LONG, OFF(run_threads), "0", 0, 4096, NULL,
     "most compute threads of a rank running at once; a thread waiting for a page, lock, barrier "
     "or condition gives up its slot (0: the CPUs the rank may run on divided by the ranks of the "
     "host that run on them; ranks bound to CPUs of their own count alone)"},
    {"SDSM_RUN_SLICE", T_MS, OFF(run_slice_ms), "5ms", 0, 60000, NULL,
     "a compute thread that has used this much CPU time since its last runtime call (spinning on "
     "a flag in program code, say) no longer counts against SDSM_RUN_THREADS: a ready thread "
     "runs beside it until it next enters the runtime (seconds, or 5ms; 0: never)"},
    {"SDSM_HANG_REPORT", T_LONG, OFF(hang_report), "60", 0, 86400, NULL,
     "seconds a blocking call may wait before rank 0 prints what every rank is waiting for "
     "(again every period while it lasts; the job goes on), unless a thread of the job computes "
     "(0: never)"},
    {"SDSM_HEARTBEAT", T_MS, OFF(heartbeat_ms), "1s", 10, 3600000, NULL,
     "a link on which nothing was sent for this long carries a heartbeat (seconds, or 500ms)"},
    {"SDSM_PEER_TIMEOUT", T_MS, OFF(peer_timeout_ms), "10s", 0, 86400000, NULL,
     "a peer from which nothing arrived for this long is lost and the job stops (seconds, or "
     "1500ms; 0: never)"},
    {"SDSM_RTO_MIN", T_MS, OFF(rto_min_ms), "5ms", 0, 199, NULL,
     "a TCP segment of the job lost on the network is sent again after this long at least, "
     "instead of the kernel's 200 ms, and a receiver delays its acknowledgement no longer "
     "(Linux 6.15 or later: TCP_RTO_MIN_US; the kernel rounds it up to 2 ticks of its timer; an "
     "older kernel keeps 200 ms; a time: 5ms, or 0.005 seconds; 0: the kernel's floors)"},
    {"SDSM_LOSS_PROBE", T_MS, OFF(loss_probe_ms), "2ms", 0, 10000, NULL,
     "a link to another host whose data in flight has not been acknowledged for this long (or "
     "for the kernel's estimate of an acknowledgement's delay, if longer) gets a heartbeat "
     "behind it, so a lost segment is found by the acknowledgements of the one after it and "
     "sent again within a round trip, on any kernel (a time: 2ms, or 0.002 seconds; 0: never, "
     "the kernel's timers alone)"},
    {"SDSM_TRACE", T_STR, OFF(trace_dir), NULL, 0, 0, NULL,
     "write each rank's timeline to DIR/rank-R.sdsmtrace (sdsmrun --trace DIR; read with "
     "sdsm-report DIR)"},
    {"SDSM_TRACE_INTERVAL", T_MS, OFF(trace_interval_ms), "10ms", 1, 60000, NULL,
     "with SDSM_TRACE: how often the message and page counters are sampled"},
    {"SDSM_TRACE_BUFFER", T_SIZE, OFF(trace_buffer), "1M", 0, 0, NULL,
     "with SDSM_TRACE: trace buffer per thread (40 bytes a span); a full one is written out by "
     "its thread, which shows in the trace as a 'trace flush' span"},
};
#define NVARS (sizeof vars / sizeof vars[0])

int sdsm_config_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return SDSM_EINVAL;
    *out = v;
    return 0;
}

int sdsm_config_parse_ms(const char *s, long *out)
{
    char *end;
    /* Digits and one point only: strtod alone would take "1e3", "0x1p3", "inf". */
    if (!s || *s < '0' || *s > '9' || strspn(s, "0123456789.") != strcspn(s, "ms") ||
        strchr(s, '.') != strrchr(s, '.'))
        return SDSM_EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s)
        return SDSM_EINVAL;
    if (strcmp(end, "ms") == 0)
        v /= 1000.0;
    else if (*end != '\0' && strcmp(end, "s") != 0)
        return SDSM_EINVAL;
    if (v > 1e9)
        return SDSM_EINVAL;
    *out = (long)(v * 1000.0 + 0.5);
    return 0;
}

int sdsm_config_parse_size(const char *s, size_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9') /* strtoull would skip blanks and accept '-' */
        return SDSM_EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return SDSM_EINVAL;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    case 't':
    case 'T':
        shift = 40;
        end++;
        break;
    default: return SDSM_EINVAL;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || (shift && v > (~0ULL >> shift)))
        return SDSM_EINVAL;
    *out = (size_t)(v << shift);
    return 0;
}

static int parse_one(sdsm_config_t *cfg, const var_t *v, const char *s, char *err, size_t errlen)
{
    char *field = (char *)cfg + v->offset;
    switch (v->type) {
    case T_LONG:
        if (sdsm_config_parse_long(s, v->lo, v->hi, (long *)field) == 0)
            return 0;
        snprintf(err, errlen, "%s=%s: expected an integer in [%ld, %ld]", v->name, s, v->lo, v->hi);
        return SDSM_EINVAL;
    case T_SIZE:
        if (sdsm_config_parse_size(s, (size_t *)field) == 0)
            return 0;
        snprintf(err, errlen, "%s=%s: expected a size such as 4096, 64K, 2M or 64G", v->name, s);
        return SDSM_EINVAL;
    case T_MS:
        if (sdsm_config_parse_ms(s, (long *)field) == 0 && *(long *)field >= v->lo && *(long *)field <= v->hi)
            return 0;
        snprintf(err, errlen, "%s=%s: expected a time such as 10, 2.5 or 500ms, from %gs to %gs", v->name, s,
                 (double)v->lo / 1000.0, (double)v->hi / 1000.0);
        return SDSM_EINVAL;
    case T_ADDR: {
        char *end;
        errno = 0;
        unsigned long long a = strtoull(s, &end, 0);
        if (!errno && end != s && *end == '\0') {
            *(uintptr_t *)field = (uintptr_t)a;
            return 0;
        }
        snprintf(err, errlen, "%s=%s: expected an address such as 0x200000000000", v->name, s);
        return SDSM_EINVAL;
    }
    case T_STR: *(const char **)field = s; return 0;
    case T_ENUM:
        for (long i = 0; v->choices[i]; i++)
            if (strcasecmp(s, v->choices[i]) == 0) {
                *(long *)field = i;
                return 0;
            }
        snprintf(err, errlen, "%s=%s: unknown value; expected one of", v->name, s);
        for (long i = 0; v->choices[i]; i++) {
            size_t used = strlen(err);
            snprintf(err + used, errlen - used, "%s %s", i ? "," : "", v->choices[i]);
        }
        return SDSM_EINVAL;
    }
    return SDSM_EINVAL;
}

long sdsm_config_peek_rank(char *const *envp)
{
    long r;
    for (char *const *e = envp; e && *e; e++)
        if (strncmp(*e, "SDSM_RANK=", 10) == 0)
            return sdsm_config_parse_long(*e + 10, 0, 1 << 20, &r) ? -1 : r;
    return -1;
}

static const var_t *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < NVARS; i++)
        if (strlen(vars[i].name) == len && strncmp(vars[i].name, name, len) == 0)
            return &vars[i];
    return NULL;
}

static int check_cross(const sdsm_config_t *cfg, char *err, size_t errlen)
{
    size_t ps = cfg->page_size;
    if (ps < 4096 || (ps & (ps - 1)) || ps > (1u << 24)) {
        snprintf(err, errlen, "SDSM_PAGE_SIZE=%zu: must be a power of two between 4096 and 16M", ps);
        return SDSM_EINVAL;
    }
    if (cfg->heap_size < ps || cfg->heap_size / ps > UINT32_MAX) {
        snprintf(err, errlen, "SDSM_HEAP_SIZE=%zu: must hold 1 to 2^32-1 pages", cfg->heap_size);
        return SDSM_EINVAL;
    }
    if (cfg->heap_base % ps) {
        snprintf(err, errlen, "SDSM_HEAP_BASE=%#lx: must be a multiple of SDSM_PAGE_SIZE (%zu)",
                 (unsigned long)cfg->heap_base, ps);
        return SDSM_EINVAL;
    }
    /* Low addresses stay unmapped so a NULL dereference still crashes (and
     * address 0 would read as "no region" everywhere). */
    if (cfg->heap_base < SDSM_HEAP_BASE_MIN) {
        snprintf(err, errlen,
                 "SDSM_HEAP_BASE=%#lx: must be at least %#lx (the lowest addresses "
                 "are kept unmapped so NULL dereferences crash)",
                 (unsigned long)cfg->heap_base, (unsigned long)SDSM_HEAP_BASE_MIN);
        return SDSM_EINVAL;
    }
    if (cfg->heap_base > SDSM_HEAP_END_MAX || cfg->heap_size > SDSM_HEAP_END_MAX - cfg->heap_base) {
        snprintf(err, errlen,
                 "SDSM_HEAP_BASE=%#lx + SDSM_HEAP_SIZE=%zu ends past %#lx, the end of "
                 "the user address space",
                 (unsigned long)cfg->heap_base, cfg->heap_size, (unsigned long)SDSM_HEAP_END_MAX);
        return SDSM_EINVAL;
    }
    if (cfg->rank >= cfg->nprocs) {
        snprintf(err, errlen, "SDSM_RANK=%ld is not below SDSM_NPROCS=%ld", cfg->rank, cfg->nprocs);
        return SDSM_EINVAL;
    }
    /* Heartbeats run on a timer of one interval: half the timeout leaves
     * room for one late heartbeat before a live peer could be declared lost. */
    if (cfg->peer_timeout_ms && cfg->peer_timeout_ms < 2 * cfg->heartbeat_ms) {
        snprintf(err, errlen, "SDSM_PEER_TIMEOUT=%gs is below twice SDSM_HEARTBEAT=%gs",
                 (double)cfg->peer_timeout_ms / 1000.0, (double)cfg->heartbeat_ms / 1000.0);
        return SDSM_EINVAL;
    }
    if (cfg->trace_buffer < 4096 || cfg->trace_buffer > ((size_t)1 << 30)) {
        snprintf(err, errlen, "SDSM_TRACE_BUFFER=%zu: must be between 4K and 1G", cfg->trace_buffer);
        return SDSM_EINVAL;
    }
    if (cfg->barrier_manager >= cfg->nprocs) {
        snprintf(err, errlen, "SDSM_BARRIER_MANAGER=%ld is not a rank of this job of %ld (0 to %ld)",
                 cfg->barrier_manager, cfg->nprocs, cfg->nprocs - 1);
        return SDSM_EINVAL;
    }
    return 0;
}

/* Edits (a letter added, dropped, changed, or two neighbours swapped) that
 * turn a[0..la) into b[0..lb), or cap + 1 when more are needed.  Names are
 * short: three rows on the stack will do. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, size_t cap)
{
    size_t rows[3][64];
    if (lb >= 64 || (la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = rows[i % 3], *up = rows[(i + 2) % 3], *up2 = rows[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t d = up[j - 1] + (a[i - 1] != b[j - 1]);
            d = up[j] + 1 < d ? up[j] + 1 : d;
            d = cur[j - 1] + 1 < d ? cur[j - 1] + 1 : d;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && up2[j - 2] + 1 < d)
                d = up2[j - 2] + 1;
            cur[j] = d;
        }
    }
    size_t d = rows[la % 3][lb];
    return d > cap ? cap + 1 : d;
}

const char *sdsm_config_suggest(const char *name, size_t len)
{
    const char *best = NULL;
    /* Two edits in a longer name; in a short one two would make nearly
     * anything near (SDSM_FOO and SDSM_LOG). */
    size_t best_d = len >= 10 ? 3 : 2;
    for (size_t i = 0; i < NVARS; i++) {
        size_t d = edit_distance(name, len, vars[i].name, strlen(vars[i].name), best_d - 1);
        if (d < best_d)
            best = vars[i].name, best_d = d;
    }
    if (best)
        return best;
    /* A shortened or lengthened name (SDSM_HEAP for SDSM_HEAP_SIZE): the
     * first table entry that starts with it, or that it starts with. */
    for (size_t i = 0; i < NVARS; i++) {
        size_t vl = strlen(vars[i].name);
        size_t n = len < vl ? len : vl;
        if (n >= 8 && strncmp(name, vars[i].name, n) == 0)
            return vars[i].name;
    }
    return NULL;
}

void sdsm_config_check_names(char *const *envp, void (*warn)(const char *msg))
{
    for (char *const *e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "SDSM_", 5) != 0 || !eq || lookup(*e, (size_t)(eq - *e)))
            continue;
        const char *near = sdsm_config_suggest(*e, (size_t)(eq - *e));
        char msg[256];
        snprintf(msg, sizeof msg, "unknown variable %.*s ignored (%s%s%ssee sdsmrun --info)", (int)(eq - *e),
                 *e, near ? "did you mean " : "", near ? near : "", near ? "? " : "");
        warn(msg);
    }
}

int sdsm_config_load(sdsm_config_t *cfg, char *const *envp, char *err, size_t errlen,
                     void (*warn)(const char *msg))
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NVARS; i++)
        if (vars[i].def && parse_one(cfg, &vars[i], vars[i].def, err, errlen))
            return SDSM_EINVAL;
    if (warn)
        sdsm_config_check_names(envp, warn);
    for (char *const *e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        const var_t *v = strncmp(*e, "SDSM_", 5) == 0 && eq ? lookup(*e, (size_t)(eq - *e)) : NULL;
        if (v && parse_one(cfg, v, eq + 1, err, errlen))
            return SDSM_EINVAL;
    }
    return check_cross(cfg, err, errlen);
}

void sdsm_config_print(const sdsm_config_t *cfg, FILE *out)
{
    for (size_t i = 0; i < NVARS; i++) {
        const var_t *v = &vars[i];
        const char *field = (const char *)cfg + v->offset;
        char val[64];
        switch (v->type) {
        case T_LONG: snprintf(val, sizeof val, "%ld", *(const long *)field); break;
        case T_SIZE: snprintf(val, sizeof val, "%zu", *(const size_t *)field); break;
        case T_ADDR: snprintf(val, sizeof val, "%#lx", (unsigned long)*(const uintptr_t *)field); break;
        case T_MS: snprintf(val, sizeof val, "%gs", (double)*(const long *)field / 1000.0); break;
        case T_STR: snprintf(val, sizeof val, "%s", *(const char *const *)field ? "(set)" : "(unset)"); break;
        case T_ENUM: snprintf(val, sizeof val, "%s", v->choices[*(const long *)field]); break;
        }
        fprintf(out, "%-22s %-16s %s\n", v->name, val, v->doc);
    }
}

/* The value a variable takes, in words: the reference pages print it, so
 * that bounds stated there are the ones parse_one enforces. */
static void describe_kind(const var_t *v, FILE *out)
{
    switch (v->type) {
    case T_LONG: fprintf(out, "Integer from %ld to %ld.", v->lo, v->hi); break;
    case T_SIZE: fprintf(out, "Size in bytes, with an optional suffix K, M, G or T (powers of 1024)."); break;
    case T_MS:
        fprintf(out, "Time in seconds (`2.5`), or in milliseconds with `ms` (`500ms`); from %gs to %gs.",
                (double)v->lo / 1000.0, (double)v->hi / 1000.0);
        break;
    case T_ADDR: fprintf(out, "Address, such as `0x200000000000`."); break;
    case T_STR: fprintf(out, "Text."); break;
    case T_ENUM:
        fprintf(out, "One of");
        for (long i = 0; v->choices[i]; i++)
            fprintf(out, "%s `%s`", i ? "," : "", v->choices[i]);
        fprintf(out, ".");
        break;
    }
}

void sdsm_config_describe(FILE *out)
{
    for (size_t i = 0; i < NVARS; i++) {
        const var_t *v = &vars[i];
        size_t n = strlen(v->doc);
        fprintf(out, "### %s\n\n", v->name);
        describe_kind(v, out);
        if (v->def)
            fprintf(out, " Default: `%s`.\n\n", v->def);
        else
            fprintf(out, " Unset by default.\n\n");
        /* The table's texts are also sdsmrun --info's lines: lower case, no
         * final stop.  A sentence here. */
        fprintf(out, "%c%s%s\n\n", toupper((unsigned char)v->doc[0]), v->doc + 1,
                n && v->doc[n - 1] == '.' ? "" : ".");
    }
}

int sdsm_cpus_here(void)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) > 0)
        return CPU_COUNT(&s);
    return 1;
}
