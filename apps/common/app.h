/*
 * app.h - what every benchmark application shares: command-line options,
 * timing, and the report lines the harness (bench/apps) reads.
 *
 * Every version of every application (seq, sdsm, omp, mpi) prints, from one
 * process only:
 *
 *   app: <name> version=<seq|sdsm|omp|mpi> procs=<P> size=<description>
 *   time: <seconds>            the timed section only (no set-up, no check)
 *   result: <text>             a checksum or the answer
 *
 * and every parallel version then checks itself against the sequential
 * algorithm (run in the same process after the timed section) and prints
 *
 *   PASSED <what was compared>            or
 *   FAILED <what differed, by how much>
 *
 * and exits 0 only if it passed.  Options are --key=value or --key value;
 * --size small|medium|paper picks a preset, other keys override it.
 */
#ifndef APP_COMMON_H
#define APP_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Look up an option; returns the default when absent.  Exits with a usage
 * message on a malformed value. */
long app_opt_long(int argc, char **argv, const char *key, long def);
double app_opt_double(int argc, char **argv, const char *key, double def);
const char *app_opt_str(int argc, char **argv, const char *key, const char *def);
/* The --size preset: 0 small (default), 1 medium, 2 paper. */
int app_size(int argc, char **argv);
/* Pick by preset: app_pick(argc, argv, "n", small, medium, paper). */
long app_pick(int argc, char **argv, const char *key, long small, long medium, long paper);

double app_now(void); /* seconds, monotonic */

void app_header(const char *name, const char *version, int procs, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void app_time(double seconds);
void app_result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints PASSED/FAILED with the text; returns the exit status to use. */
int app_verdict(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Deterministic random numbers, identical in every version and process. */
typedef struct {
    uint64_t s;
} app_rng_t;
static inline void app_rng_seed(app_rng_t *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 1; }
static inline uint64_t app_rng_next(app_rng_t *r)
{
    uint64_t x = r->s += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
static inline double app_rng_double(app_rng_t *r) { return (double)(app_rng_next(r) >> 11) * 0x1.0p-53; }

/* Largest relative difference between two arrays (|a-b| / max(|b|, 1)). */
double app_max_rel_diff(const double *a, const double *b, size_t n);

/*
 * Digests for the self-checks: the bits of n values folded into h (start
 * from APP_HASH_INIT; FNV-1a step on whole words plus a shift), and, when
 * sum is not NULL, the values added to *sum in order.  Equal digests mean
 * bit-identical data with overwhelming probability.
 */
#define APP_HASH_INIT 0xcbf29ce484222325ull
uint64_t app_hash_doubles(uint64_t h, const double *v, long n, double *sum);
uint64_t app_hash_floats(uint64_t h, const float *v, long n, double *sum);

/* Block partition of [0, n) over p parts: [*lo, *hi) for part i. */
static inline void app_block(long n, int p, int i, long *lo, long *hi)
{
    *lo = n * i / p;
    *hi = n * (i + 1) / p;
}

#endif
