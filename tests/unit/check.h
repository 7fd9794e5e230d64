/*
 * check.h - the unit tests' assertion macros.
 *
 * A failed check prints file:line, the expression and both values, counts
 * the failure and lets the test go on; ck_run() runs one test case and
 * ck_done() prints the summary and returns the process exit status (1 if
 * any check failed).  Every CHECK is an expression: 1 if it held, else 0.
 *
 *   CHECK(cond)               any truth value
 *   CHECK_I(a, op, b)         signed integers, compared as long long
 *   CHECK_U(a, op, b)         unsigned integers, compared as unsigned long long
 *   CHECK_STR(a, b)           equal strings (either may be NULL)
 *   CHECK_HAS(s, sub)         s contains sub
 *   CHECK_PREFIX(s, pre)      s starts with pre
 *   CHECK_MEM(a, b, n)        equal bytes; prints the first differing offset
 */
#ifndef SDSM_UNIT_CHECK_H
#define SDSM_UNIT_CHECK_H

#include <stddef.h>

void ck_fail(const char *file, int line, const char *expr, const char *detail);
void ck_pass(void);
int ck_true(const char *file, int line, const char *expr, int ok);
int ck_i(const char *file, int line, const char *expr, long long a, const char *op, long long b);
int ck_u(const char *file, int line, const char *expr, unsigned long long a, const char *op,
         unsigned long long b);
int ck_str(const char *file, int line, const char *expr, const char *a, const char *b);
int ck_has(const char *file, int line, const char *expr, const char *s, const char *sub);
int ck_prefix(const char *file, int line, const char *expr, const char *s, const char *pre);
int ck_mem(const char *file, int line, const char *expr, const void *a, const void *b, size_t n);

#define CHECK(c)          ck_true(__FILE__, __LINE__, #c, !!(c))
#define CHECK_I(a, op, b) ck_i(__FILE__, __LINE__, #a " " #op " " #b, (long long)(a), #op, (long long)(b))
#define CHECK_U(a, op, b)                                                                                    \
    ck_u(__FILE__, __LINE__, #a " " #op " " #b, (unsigned long long)(a), #op, (unsigned long long)(b))
#define CHECK_STR(a, b)      ck_str(__FILE__, __LINE__, #a " == " #b, (a), (b))
#define CHECK_HAS(s, sub)    ck_has(__FILE__, __LINE__, #s " contains " #sub, (s), (sub))
#define CHECK_PREFIX(s, pre) ck_prefix(__FILE__, __LINE__, #s " starts with " #pre, (s), (pre))
#define CHECK_MEM(a, b, n)   ck_mem(__FILE__, __LINE__, #a " == " #b, (a), (b), (n))

/* Run one test case; a case whose checks fail is listed in the summary. */
void ck_run(const char *name, void (*fn)(void));
/* Same, for a case that documents a known bug in src/ (it fails until fixed). */
void ck_run_bug(const char *name, void (*fn)(void), const char *bug);
#define RUN(fn)          ck_run(#fn, fn)
#define RUN_BUG(fn, bug) ck_run_bug(#fn, fn, bug)

/* Print the summary; returns the exit status. */
int ck_done(const char *suite);

/* Deterministic PRNG for reproducible "random" data (xorshift64*). */
typedef struct {
    unsigned long long s;
} ck_rng_t;
unsigned long long ck_rand(ck_rng_t *r);

#endif
