/*
 * config.h - the SDSM_* environment variables: one table (name, type,
 * default, documentation), read once at sdsm_init.
 */
#ifndef SDSM_CORE_CONFIG_H
#define SDSM_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ThreadSanitizer keeps application memory in fixed ranges (its shadow
 * lives elsewhere); the low one holds a 64 GiB region at 256 GiB. */
#if defined(__SANITIZE_THREAD__)
#define SDSM_DEFAULT_HEAP_BASE 0x4000000000
#else
#define SDSM_DEFAULT_HEAP_BASE 0x200000000000
#endif
#define SDSM_STR_(x) #x
#define SDSM_STR(x)  SDSM_STR_(x)

typedef enum { SDSM_ERRMODE_ABORT, SDSM_ERRMODE_RETURN } sdsm_errmode_t;
typedef enum { SDSM_PROTO_HLRC, SDSM_PROTO_UPDATE, SDSM_PROTO_IBEC, SDSM_PROTO_COUNT } sdsm_proto_id_t;
/* SDSM_ZEROCOPY: the index in its table of names ("0", "1", "auto"). */
typedef enum { SDSM_ZC_OFF, SDSM_ZC_ON, SDSM_ZC_AUTO } sdsm_zcopy_mode_t;
typedef enum { SDSM_BARRIER_AUTO, SDSM_BARRIER_CENTRAL, SDSM_BARRIER_TREE } sdsm_barrier_kind_t;
typedef enum { SDSM_LOG_ERROR, SDSM_LOG_WARN, SDSM_LOG_INFO, SDSM_LOG_DEBUG } sdsm_loglevel_t;

typedef struct sdsm_config {
    long rank; /* -1: not started by a launcher */
    long nprocs;
    const char *rendezvous; /* "ip:port" of the launcher, or NULL */
    const char *job_key;    /* 64 hex characters, or NULL */
    const char *host;       /* host name the launcher placed this rank on, or NULL */
    const char *iface;      /* SDSM_IFACE: interfaces/networks to listen on, or NULL */
    const char *rsh;        /* sdsmrun's remote shell command, or NULL (unused by ranks) */
    size_t heap_size;       /* bytes of shared address space reserved */
    size_t page_size;       /* coherence unit, multiple of the OS page */
    uintptr_t heap_base;    /* fixed virtual address of the shared region */
    long aslr;              /* sdsmrun keeps address randomization for the ranks */
    const char *omp_home;   /* OpenMP programs (libsdsm-omp reads these itself) */
    const char *omp_heap;
    const char *omp_verbose;
    const char *pthread_place; /* pthreads programs (sdsmcc -pthread) */
    const char *omp_stack;
    long stats;            /* print the statistics table at finalize */
    long errors;           /* sdsm_errmode_t */
    long protocol;         /* sdsm_proto_id_t */
    long log_level;        /* sdsm_loglevel_t */
    long barrier_manager;  /* rank that runs the barrier */
    long barrier_kind;     /* sdsm_barrier_kind_t */
    long barrier_shm;      /* the tree barrier's ranks of a host meet in shared memory */
    long barrier_shm_slot; /* bytes of an arrival there (the release: 16 times) */
    long timeout;          /* seconds allowed for set-up */
    long spin_us;          /* microseconds a waiter spins before sleeping */
    long hide_spin_us;     /* the same where a rank has more compute threads than run slots */
    long
        service_aside; /* batches a leading waiter served before the service thread steps aside (-1: never) */
    long req_pin;      /* a requester takes its peer's socket from the service thread until its wait ends */
    long prefetch;     /* most pages fetched ahead of read faults along a stream */
    long write_ahead;  /* most home pages opened ahead of write faults along a stream */
    long home_hot;     /* intervals in a row a home page is written before it stays open */
    long wp_track;     /* let the kernel tell which hot home pages were written (mem/wptrack.h) */
    long
        write_buffer; /* pages written here, homed elsewhere, whose diffs may wait for the release (0: all) */
    long zerocopy;    /* sdsm_zcopy_mode_t: read pages from same-host homes' memory */
    long host_share;  /* a job on one host maps one copy of the shared memory in every rank */
    long home_twins;  /* a home twins the pages others hold that it writes (-1: OpenMP programs) */
    long home_migrate;   /* hlrc: a page's home moves to the rank that alone keeps writing it */
    long reread;         /* hlrc: pages read again after every barrier are fetched as it ends */
    long quiet_us;       /* a rank quiet this long publishes its pending writes (0: never) */
    long flush_publish;  /* a flush sdsmcc made a call publishes the rank's pending writes */
    long unmap_barriers; /* ibec: drop copies unused for this many barriers (0: never) */
    long ibec_check;     /* ibec: report data written outside a critical section and read before a barrier */
    long ibec_sections;  /* ibec: threads in critical sections at once (0: as the keys allow) */
    long threads;        /* compute threads per rank (SDSM_THREADS) */
    long run_threads;    /* run slots per rank; 0: CPUs / ranks on the host */
    long
        run_slice_ms; /* a slot holder computing this long without a runtime call lends its slot (0: never) */
    long hang_report; /* seconds a wait may last before every rank's waits are reported (0: never) */
    long heartbeat_ms;     /* idle links carry a heartbeat this often */
    long rto_min_ms;       /* TCP retransmission floor of the job's links (0: the kernel's) */
    long loss_probe_ms;    /* a link's unacknowledged data gets a heartbeat behind it after this (0: never) */
    long peer_timeout_ms;  /* a peer silent this long is lost (0: never) */
    const char *trace_dir; /* SDSM_TRACE: write timelines there, or NULL */
    long trace_interval_ms; /* counters sampled this often in a trace */
    size_t trace_buffer;    /* bytes of trace buffer per thread */
} sdsm_config_t;

extern sdsm_config_t sdsm_cfg;

/* Where the shared region may lie: above the NULL guard, below the end of the
 * 47-bit user address space of x86-64 and arm64 (4-level page tables). */
#define SDSM_HEAP_BASE_MIN ((uintptr_t)1 << 20)
#define SDSM_HEAP_END_MAX  ((uintptr_t)1 << 47)

/*
 * Fill cfg from defaults and envp.  Unknown SDSM_* names are reported through
 * warn (may be NULL).  Returns 0 or SDSM_EINVAL with a message in err[errlen].
 */
int sdsm_config_load(sdsm_config_t *cfg, char *const *envp, char *err, size_t errlen,
                     void (*warn)(const char *msg));

/* Warns through warn of each SDSM_* name in envp that is not a variable,
 * with the nearest one when a name is close (sdsm_config_suggest).  The
 * runtime calls it in rank 0 only: once per job, not once per rank. */
void sdsm_config_check_names(char *const *envp, void (*warn)(const char *msg));

/* The variable name[0..len) was probably meant to be (two typos at most, or
 * a prefix of it), or NULL. */
const char *sdsm_config_suggest(const char *name, size_t len);

/* SDSM_RANK from envp if valid, else -1 (no rank known, not an error):
 * lets a failing load still say "rank R". */
long sdsm_config_peek_rank(char *const *envp);

/* Parsers, exposed for the unit tests.  0 or SDSM_EINVAL. */
int sdsm_config_parse_size(const char *s, size_t *out); /* "4096", "64K", "2M", "64G" */
int sdsm_config_parse_long(const char *s, long lo, long hi, long *out);
int sdsm_config_parse_ms(const char *s, long *out); /* "10", "2.5", "2s", "500ms" -> ms */

/* Print every variable, its current value and its documentation. */
void sdsm_config_print(const sdsm_config_t *cfg, FILE *out);

/* Every variable as markdown for the reference pages: a heading, the values
 * it takes, its default and its documentation (tools/docgen). */
void sdsm_config_describe(FILE *out);

extern const char *const sdsm_proto_names[SDSM_PROTO_COUNT];

/* CPUs this process may run on (its affinity mask; at least 1). */
int sdsm_cpus_here(void);

#endif
