/*
 * env.c - the OMP_* environment variables, read once at start-up.
 *
 * OMP_NUM_THREADS must agree with the team sdsm runs: every compute thread
 * of every rank (ranks x SDSM_THREADS).  Given alone, it chooses
 * SDSM_THREADS (it must then be a multiple of the ranks); given with
 * sdsmrun --threads (SDSM_THREADS), the two must match.  A value that
 * cannot be honoured is an error naming the variable, never a silently
 * different team.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "omp_rt.h"
#include "sdsm.h"

rt_env_t rt_env = {
    .sched_kind = RT_SCHED_STATIC,
    .sched_chunk = 0,
    .max_active_levels = 1,
    .thread_limit = INT_MAX,
    .stacksize = 64ul << 20,
};

static long omp_num_threads = -1; /* OMP_NUM_THREADS's first value, or -1 */
static int threads_from_omp;      /* SDSM_THREADS was derived from it */
static long nprocs_guess = 1;

__attribute__((noreturn, format(printf, 2, 3))) static void env_error(const char *var, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sdsm_abort(1, "OpenMP: %s: %s", var, msg);
}

/* A whole decimal number in [lo, hi]; *end gets what follows it. */
static int parse_num(const char *s, long lo, long hi, long *out, const char **end)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return SDSM_EINVAL;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno || v < lo || v > hi)
        return SDSM_EINVAL;
    while (isspace((unsigned char)*e))
        e++;
    *out = v;
    *end = e;
    return 0;
}

static long env_long(const char *var, long lo, long hi, long dflt)
{
    const char *s = getenv(var), *end;
    long v;
    if (!s)
        return dflt;
    if (parse_num(s, lo, hi, &v, &end) || *end)
        env_error(var, "'%s' is not a number in [%ld, %ld]", s, lo, hi);
    return v;
}

static int env_bool(const char *var, int dflt)
{
    const char *s = getenv(var);
    if (!s)
        return dflt;
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strcspn(s, " \t\n");
    if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && *s == '1'))
        return 1;
    if ((n == 5 && !strncasecmp(s, "false", 5)) || (n == 1 && *s == '0'))
        return 0;
    env_error(var, "'%s' is neither true nor false", s);
}

/* The job's size before sdsm_init, from the launcher's environment
 * (checked against sdsm_nprocs() after it). */
static long guess_nprocs(void)
{
    static const char *vars[] = {"SDSM_NPROCS", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS",
                                 "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *s = getenv(vars[i]), *end;
        long v;
        if (i == 0 && !getenv("SDSM_RANK"))
            continue;
        if (s && !parse_num(s, 1, 1 << 20, &v, &end) && !*end)
            return v;
    }
    return 1;
}

static void read_stacksize(void)
{
    const char *s = getenv("OMP_STACKSIZE"), *end;
    long v;
    if (s) {
        if (parse_num(s, 1, LONG_MAX >> 30, &v, &end))
            env_error("OMP_STACKSIZE", "'%s' is not a size (a number with B, K, M or G)", s);
        size_t unit = 1024;
        switch (toupper((unsigned char)*end)) {
        case 'B':
            unit = 1;
            end++;
            break;
        case 'K':
            unit = 1024;
            end++;
            break;
        case 'M':
            unit = 1 << 20;
            end++;
            break;
        case 'G':
            unit = 1 << 30;
            end++;
            break;
        case 0: break;
        default: env_error("OMP_STACKSIZE", "'%s' is not a size (a number with B, K, M or G)", s);
        }
        while (isspace((unsigned char)*end))
            end++;
        if (*end)
            env_error("OMP_STACKSIZE", "'%s' is not a size (a number with B, K, M or G)", s);
        rt_env.stacksize = (size_t)v * unit;
        if (rt_env.stacksize < (64u << 10))
            rt_env.stacksize = 64u << 10;
    }
    /* sdsm_thread_create uses the default attributes: set their stack size. */
    pthread_attr_t a;
    if (pthread_attr_init(&a) == 0) {
        if (pthread_attr_setstacksize(&a, rt_env.stacksize) || pthread_setattr_default_np(&a))
            env_error("OMP_STACKSIZE", "cannot use a stack of %zu bytes", rt_env.stacksize);
        pthread_attr_destroy(&a);
    }
}

void rt_env_threads(void)
{
    const char *s = getenv("OMP_NUM_THREADS"), *end;
    if (s) {
        /* A list ("8,1") gives the outer level first; nested regions are
         * serialized on sdsm. */
        if (parse_num(s, 1, 1 << 24, &omp_num_threads, &end) || (*end && *end != ','))
            env_error("OMP_NUM_THREADS", "'%s' is not a positive thread count", s);
    }
    nprocs_guess = guess_nprocs();
    if (omp_num_threads > 0 && !getenv("SDSM_THREADS")) {
        if (omp_num_threads % nprocs_guess)
            env_error("OMP_NUM_THREADS",
                      "%ld threads do not divide over %ld ranks: the team is "
                      "every compute thread of every rank, so give a multiple of the rank count "
                      "(or sdsmrun --threads T for T threads per rank)",
                      omp_num_threads, nprocs_guess);
        char v[32];
        snprintf(v, sizeof v, "%ld", omp_num_threads / nprocs_guess);
        setenv("SDSM_THREADS", v, 1);
        threads_from_omp = 1;
    }
    read_stacksize();
}

void rt_env_check_team(int nprocs, int threads)
{
    long team = (long)nprocs * threads;
    if (omp_num_threads > 0 && omp_num_threads != team) {
        if (threads_from_omp)
            env_error("OMP_NUM_THREADS",
                      "%ld threads: the launcher's environment suggested %ld "
                      "ranks but the job has %d; set the threads per rank with sdsmrun --threads "
                      "or SDSM_THREADS",
                      omp_num_threads, nprocs_guess, nprocs);
        env_error("OMP_NUM_THREADS",
                  "%ld contradicts SDSM_THREADS=%d (sdsmrun --threads): the team "
                  "is %d ranks x %d threads = %ld; unset one of them or make them agree",
                  omp_num_threads, threads, nprocs, threads, team);
    }
}

static void read_schedule(void)
{
    const char *s = getenv("OMP_SCHEDULE");
    if (!s)
        return;
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (!strncasecmp(p, "monotonic:", 10))
        p += 10;
    else if (!strncasecmp(p, "nonmonotonic:", 13))
        p += 13;
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"static", RT_SCHED_STATIC},
                 {"dynamic", RT_SCHED_DYNAMIC},
                 {"guided", RT_SCHED_GUIDED},
                 {"auto", RT_SCHED_AUTO}};
    int kind = -1;
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(kinds[i].name);
        if (!strncasecmp(p, kinds[i].name, n) && (p[n] == 0 || p[n] == ',' || isspace((unsigned char)p[n]))) {
            kind = kinds[i].kind;
            p += n;
            break;
        }
    }
    if (kind < 0)
        env_error("OMP_SCHEDULE", "'%s' is not static, dynamic, guided or auto[,chunk]", s);
    long chunk = kind == RT_SCHED_STATIC ? 0 : 1;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == ',') {
        const char *end;
        if (parse_num(p + 1, 1, INT_MAX, &chunk, &end) || *end)
            env_error("OMP_SCHEDULE", "'%s': the chunk size must be a positive number", s);
    } else if (*p) {
        env_error("OMP_SCHEDULE", "'%s' is not static, dynamic, guided or auto[,chunk]", s);
    }
    rt_env.sched_kind = kind;
    rt_env.sched_chunk = chunk;
}

void rt_env_read(void)
{
    read_schedule();
    rt_env.dyn_var = env_bool("OMP_DYNAMIC", 0);
    rt_env.nest_var = env_bool("OMP_NESTED", 0);
    /* One level of parallelism is active on sdsm: more is accepted and
     * capped, as the spec says for levels an implementation lacks. */
    rt_env.max_active_levels = (int)env_long("OMP_MAX_ACTIVE_LEVELS", 0, INT_MAX, 1);
    if (rt_env.max_active_levels > 1)
        rt_env.max_active_levels = 1;
    rt_env.thread_limit = (int)env_long("OMP_THREAD_LIMIT", 1, INT_MAX, INT_MAX);
    int team = sdsm_thread_count();
    if (rt_env.thread_limit < team)
        env_error("OMP_THREAD_LIMIT",
                  "%d is below the team of %d threads (%d ranks x %d): "
                  "the team is every compute thread of every rank",
                  rt_env.thread_limit, team, sdsm_nprocs(), team / sdsm_nprocs());
    rt_env.cancellation = env_bool("OMP_CANCELLATION", 0);
    if (rt_env.cancellation)
        env_error("OMP_CANCELLATION",
                  "cancellation (omp cancel) is not supported on sdsm; "
                  "unset OMP_CANCELLATION (cancel directives are then ignored, as the spec says)");
}
