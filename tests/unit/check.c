/*
 * check.c - see check.h.
 */
#include "check.h"

#include <stdio.h>
#include <string.h>

#define MAX_PRINTED      25 /* failures printed per case; the rest are only counted */
#define MAX_FAILED_CASES 64

static unsigned long checks, failures, case_failures;
static const char *failed_cases[MAX_FAILED_CASES];
static const char *failed_bugs[MAX_FAILED_CASES];
static unsigned nfailed_cases, ncases;

void ck_pass(void) { checks++; }

void ck_fail(const char *file, int line, const char *expr, const char *detail)
{
    checks++;
    failures++;
    if (++case_failures > MAX_PRINTED) {
        if (case_failures == MAX_PRINTED + 1)
            fprintf(stderr, "    (further failures in this case are counted, not printed)\n");
        return;
    }
    fprintf(stderr, "%s:%d: FAILED: %s", file, line, expr);
    if (detail)
        fprintf(stderr, "  [%s]", detail);
    fputc('\n', stderr);
}

int ck_true(const char *file, int line, const char *expr, int ok)
{
    if (ok)
        ck_pass();
    else
        ck_fail(file, line, expr, NULL);
    return ok;
}

static int cmp_ok(int c, const char *op)
{
    if (!strcmp(op, "=="))
        return c == 0;
    if (!strcmp(op, "!="))
        return c != 0;
    if (!strcmp(op, "<"))
        return c < 0;
    if (!strcmp(op, "<="))
        return c <= 0;
    if (!strcmp(op, ">"))
        return c > 0;
    if (!strcmp(op, ">="))
        return c >= 0;
    return 0;
}

int ck_i(const char *file, int line, const char *expr, long long a, const char *op, long long b)
{
    if (cmp_ok((a > b) - (a < b), op)) {
        ck_pass();
        return 1;
    }
    char d[96];
    snprintf(d, sizeof d, "%lld %s %lld", a, op, b);
    ck_fail(file, line, expr, d);
    return 0;
}

int ck_u(const char *file, int line, const char *expr, unsigned long long a, const char *op,
         unsigned long long b)
{
    if (cmp_ok((a > b) - (a < b), op)) {
        ck_pass();
        return 1;
    }
    char d[128];
    snprintf(d, sizeof d, "%llu (%#llx) %s %llu (%#llx)", a, a, op, b, b);
    ck_fail(file, line, expr, d);
    return 0;
}

int ck_str(const char *file, int line, const char *expr, const char *a, const char *b)
{
    if ((a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0)) {
        ck_pass();
        return 1;
    }
    char d[512];
    snprintf(d, sizeof d, "\"%s\" vs \"%s\"", a ? a : "(null)", b ? b : "(null)");
    ck_fail(file, line, expr, d);
    return 0;
}

int ck_has(const char *file, int line, const char *expr, const char *s, const char *sub)
{
    if (s && sub && strstr(s, sub)) {
        ck_pass();
        return 1;
    }
    char d[512];
    snprintf(d, sizeof d, "\"%s\" lacks \"%s\"", s ? s : "(null)", sub ? sub : "(null)");
    ck_fail(file, line, expr, d);
    return 0;
}

int ck_prefix(const char *file, int line, const char *expr, const char *s, const char *pre)
{
    if (s && pre && strncmp(s, pre, strlen(pre)) == 0) {
        ck_pass();
        return 1;
    }
    char d[512];
    snprintf(d, sizeof d, "\"%s\" does not start with \"%s\"", s ? s : "(null)", pre ? pre : "(null)");
    ck_fail(file, line, expr, d);
    return 0;
}

int ck_mem(const char *file, int line, const char *expr, const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) {
            char d[128];
            snprintf(d, sizeof d, "first difference at offset %zu of %zu: %#04x vs %#04x", i, n, x[i], y[i]);
            ck_fail(file, line, expr, d);
            return 0;
        }
    ck_pass();
    return 1;
}

static void run(const char *name, void (*fn)(void), const char *bug)
{
    case_failures = 0;
    ncases++;
    fn();
    if (case_failures) {
        fprintf(stderr, "--- %s: %lu check(s) failed%s%s\n", name, case_failures, bug ? "; KNOWN BUG: " : "",
                bug ? bug : "");
        if (nfailed_cases < MAX_FAILED_CASES) {
            failed_cases[nfailed_cases] = name;
            failed_bugs[nfailed_cases++] = bug;
        }
    } else if (bug) {
        fprintf(stderr, "--- %s: passes now; the bug it documents seems fixed: %s\n", name, bug);
    }
}

void ck_run(const char *name, void (*fn)(void)) { run(name, fn, NULL); }
void ck_run_bug(const char *name, void (*fn)(void), const char *bug) { run(name, fn, bug); }

int ck_done(const char *suite)
{
    fprintf(stderr, "%s: %u case(s), %lu check(s), %lu failed\n", suite, ncases, checks, failures);
    for (unsigned i = 0; i < nfailed_cases; i++) {
        if (failed_bugs[i])
            fprintf(stderr, "  FAILED %s (known bug, fails until src/ is fixed: %s)\n", failed_cases[i],
                    failed_bugs[i]);
        else
            fprintf(stderr, "  FAILED %s\n", failed_cases[i]);
    }
    fflush(stderr);
    return failures ? 1 : 0;
}

unsigned long long ck_rand(ck_rng_t *r)
{
    unsigned long long x = r->s ? r->s : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}
