/*
 * app.c - option parsing, timing and report lines for the applications.
 */
#include "app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *find(int argc, char **argv, const char *key)
{
    size_t kl = strlen(key);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, key, kl) != 0)
            continue;
        if (a[2 + kl] == '=')
            return a + 3 + kl;
        if (a[2 + kl] == '\0' && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

static void bad(const char *key, const char *v)
{
    fprintf(stderr, "invalid value for --%s: '%s'\n", key, v);
    exit(2);
}

long app_opt_long(int argc, char **argv, const char *key, long def)
{
    const char *v = find(argc, argv, key);
    if (!v)
        return def;
    char *end;
    long r = strtol(v, &end, 0);
    if (end == v || *end)
        bad(key, v);
    return r;
}

double app_opt_double(int argc, char **argv, const char *key, double def)
{
    const char *v = find(argc, argv, key);
    if (!v)
        return def;
    char *end;
    double r = strtod(v, &end);
    if (end == v || *end)
        bad(key, v);
    return r;
}

const char *app_opt_str(int argc, char **argv, const char *key, const char *def)
{
    const char *v = find(argc, argv, key);
    return v ? v : def;
}

int app_size(int argc, char **argv)
{
    const char *s = app_opt_str(argc, argv, "size", "small");
    if (!strcmp(s, "small"))
        return 0;
    if (!strcmp(s, "medium"))
        return 1;
    if (!strcmp(s, "paper"))
        return 2;
    bad("size", s);
    return 0;
}

long app_pick(int argc, char **argv, const char *key, long small, long medium, long paper)
{
    long presets[3] = {small, medium, paper};
    return app_opt_long(argc, argv, key, presets[app_size(argc, argv)]);
}

double app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void app_header(const char *name, const char *version, int procs, const char *fmt, ...)
{
    char size[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(size, sizeof size, fmt, ap);
    va_end(ap);
    printf("app: %s version=%s procs=%d size=%s\n", name, version, procs, size);
    fflush(stdout);
}

void app_time(double seconds)
{
    printf("time: %.6f\n", seconds);
    fflush(stdout);
}

void app_result(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("result: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

int app_verdict(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "PASSED" : "FAILED");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    return ok ? 0 : 1;
}

double app_max_rel_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / fmax(fabs(b[i]), 1.0);
        if (!(d <= m)) /* NaN counts as the largest difference */
            m = isnan(d) ? INFINITY : d;
    }
    return m;
}

static inline uint64_t hash_step(uint64_t h, uint64_t word)
{
    h = (h ^ word) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

uint64_t app_hash_doubles(uint64_t h, const double *v, long n, double *sum)
{
    for (long i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, &v[i], sizeof w);
        h = hash_step(h, w);
        if (sum)
            *sum += v[i];
    }
    return h;
}

uint64_t app_hash_floats(uint64_t h, const float *v, long n, double *sum)
{
    for (long i = 0; i < n; i++) {
        uint32_t w;
        memcpy(&w, &v[i], sizeof w);
        h = hash_step(h, w);
        if (sum)
            *sum += v[i];
    }
    return h;
}
