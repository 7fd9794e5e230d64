/*
 * test_config.c - core/config.c: size and integer parsers, and
 * sdsm_config_load over hand-made environment arrays.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/config.h"
#include "core/stats.h"
#include "core/status.h"

/* ---------------------------------------------------------- parse_size */

static void size_ok(const char *s, size_t want)
{
    size_t v = 0xdeadbeef;
    if (!CHECK_I(sdsm_config_parse_size(s, &v), ==, 0) | !CHECK_U(v, ==, want))
        fprintf(stderr, "    input \"%s\"\n", s ? s : "(null)");
}

static void size_bad(const char *s)
{
    size_t v = 0xdeadbeef;
    if (!CHECK_I(sdsm_config_parse_size(s, &v), ==, SDSM_EINVAL))
        fprintf(stderr, "    input \"%s\" gave %zu\n", s ? s : "(null)", v);
}

static void ms_ok(const char *s, long want)
{
    long v = -7;
    if (!CHECK_I(sdsm_config_parse_ms(s, &v), ==, 0) | !CHECK_I(v, ==, want))
        fprintf(stderr, "    input \"%s\"\n", s ? s : "(null)");
}

static void ms_bad(const char *s)
{
    long v = -7;
    if (!CHECK_I(sdsm_config_parse_ms(s, &v), ==, SDSM_EINVAL))
        fprintf(stderr, "    input \"%s\" gave %ld\n", s ? s : "(null)", v);
}

static void test_parse_ms(void)
{
    ms_ok("10", 10000);
    ms_ok("0", 0);
    ms_ok("2s", 2000);
    ms_ok("2.5", 2500);
    ms_ok("500ms", 500);
    ms_ok("0.25s", 250);
    ms_bad(NULL);
    ms_bad("");
    ms_bad("-1");
    ms_bad("s");
    ms_bad("1e3");
    ms_bad("0x10");
    ms_bad("inf");
    ms_bad("1.2.3");
    ms_bad("5 s");
    ms_bad("5min");
    ms_bad("10sms");
    ms_bad("99999999999999");
}

static void test_parse_size(void)
{
    size_ok("4096", 4096);
    size_ok("0", 0);
    size_ok("1", 1);
    size_ok("64K", 64ull << 10);
    size_ok("64k", 64ull << 10);
    size_ok("2M", 2ull << 20);
    size_ok("2m", 2ull << 20);
    size_ok("64G", 64ull << 30);
    size_ok("1T", 1ull << 40);
    size_ok("64GiB", 64ull << 30);
    size_ok("64gb", 64ull << 30);
    size_ok("64KB", 64ull << 10);
    size_ok("64Ki", 64ull << 10);
    size_ok("3MiB", 3ull << 20);
    size_ok("18446744073709551615", SIZE_MAX);
    size_ok("17179869183G", 17179869183ull << 30); /* largest count of GiB that fits */
    size_ok("16777215T", 16777215ull << 40);

    size_bad(NULL);
    size_bad("");
    size_bad("-1");
    size_bad("-0");
    size_bad("12Q");
    size_bad("K");
    size_bad("G");
    size_bad("iB");
    size_bad("99999999999999999999"); /* > 2^64 */
    size_bad("18446744073709551616"); /* 2^64 */
    size_bad("18446744073709551615G");
    size_bad("17179869184G"); /* 2^34 GiB = 2^64 */
    size_bad("16777216T");
    size_bad("64KK");
    size_bad("64Bi");
    size_bad("64iB"); /* 'i' needs a unit before it */
    size_bad("64 K");
    size_bad("64K ");
    size_bad("64KiBx");
    size_bad("0x10");
    size_bad("1.5G");
}

/* A sign after leading white space slips past the '-' test: strtoull
 * negates, so " -1" becomes SIZE_MAX. */
static void test_parse_size_negative_after_space(void)
{
    size_bad(" -1");
    size_bad("\t-4096");
    size_bad(" -1G");
}

/* ---------------------------------------------------------- parse_long */

static void long_ok(const char *s, long lo, long hi, long want)
{
    long v = 0x5eed;
    if (!CHECK_I(sdsm_config_parse_long(s, lo, hi, &v), ==, 0) | !CHECK_I(v, ==, want))
        fprintf(stderr, "    input \"%s\" in [%ld, %ld]\n", s, lo, hi);
}

static void long_bad(const char *s, long lo, long hi)
{
    long v = 0x5eed;
    if (!CHECK_I(sdsm_config_parse_long(s, lo, hi, &v), ==, SDSM_EINVAL))
        fprintf(stderr, "    input \"%s\" in [%ld, %ld] gave %ld\n", s, lo, hi, v);
}

static void test_parse_long(void)
{
    long_ok("0", 0, 10, 0);
    long_ok("10", 0, 10, 10); /* bounds are inclusive */
    long_ok("-1", -1, 5, -1);
    long_ok("5", 5, 5, 5);
    long_ok("0x10", 0, 100, 16); /* base prefixes are accepted */
    long_ok("010", 0, 100, 8);
    long_ok("9223372036854775807", LONG_MIN, LONG_MAX, LONG_MAX);
    long_ok("-9223372036854775808", LONG_MIN, LONG_MAX, LONG_MIN);
    long_ok("1048576", -1, 1 << 20, 1 << 20);

    long_bad("11", 0, 10);
    long_bad("-1", 0, 10);
    long_bad("-2", -1, 5);
    long_bad("6", 5, 5);
    long_bad("4", 5, 5);
    long_bad("1048577", -1, 1 << 20);
    long_bad("", 0, 10);
    long_bad("abc", 0, 10);
    long_bad("5x", 0, 10);
    long_bad("5 ", 0, 10);
    long_bad("1.0", 0, 10);
    long_bad("9223372036854775808", LONG_MIN, LONG_MAX); /* overflow */
    long_bad("-9223372036854775809", LONG_MIN, LONG_MAX);
    long_bad("99999999999999999999", 0, LONG_MAX);
}

/* -------------------------------------------------------------- load */

static int nwarn;
static char last_warn[512];

static void warn_cb(const char *msg)
{
    nwarn++;
    snprintf(last_warn, sizeof last_warn, "%s", msg);
}

static int load(sdsm_config_t *c, char *const *envp, char *err, size_t errlen)
{
    nwarn = 0;
    last_warn[0] = '\0';
    err[0] = '\0';
    memset(c, 0xA5, sizeof *c);
    return sdsm_config_load(c, envp, err, errlen, warn_cb);
}

static void check_defaults(const sdsm_config_t *c)
{
    CHECK_I(c->rank, ==, -1);
    CHECK_I(c->nprocs, ==, 1);
    CHECK(c->rendezvous == NULL);
    CHECK(c->job_key == NULL);
    CHECK_U(c->heap_size, ==, 64ull << 30);
    CHECK_U(c->page_size, ==, 4096);
    CHECK_U(c->heap_base, ==, SDSM_DEFAULT_HEAP_BASE);
    CHECK_I(c->stats, ==, 0);
    CHECK_I(c->errors, ==, SDSM_ERRMODE_ABORT);
    CHECK_I(c->protocol, ==, SDSM_PROTO_HLRC);
    CHECK_I(c->log_level, ==, SDSM_LOG_WARN);
    CHECK_I(c->barrier_manager, ==, 0);
    CHECK_I(c->timeout, ==, 30);
    CHECK_I(c->spin_us, ==, 50);
}

static void test_load_defaults(void)
{
    sdsm_config_t c;
    char err[256];
    char *empty[] = {NULL};
    CHECK_I(load(&c, empty, err, sizeof err), ==, 0);
    check_defaults(&c);
    CHECK_I(nwarn, ==, 0);
    CHECK_STR(err, "");
    /* a NULL envp is an empty environment */
    CHECK_I(load(&c, NULL, err, sizeof err), ==, 0);
    check_defaults(&c);
    /* a NULL warn callback is allowed */
    char *unknown[] = {"SDSM_FOO=1", NULL};
    CHECK_I(sdsm_config_load(&c, unknown, err, sizeof err, NULL), ==, 0);
    check_defaults(&c);
}

static void test_load_each_variable(void)
{
    sdsm_config_t c;
    char err[256];
    char key[] = "SDSM_JOB_KEY=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    char *env[] = {
        "SDSM_RANK=3",
        "SDSM_NPROCS=8",
        "SDSM_RENDEZVOUS=10.0.0.1:4000",
        key,
        "SDSM_HEAP_SIZE=1G",
        "SDSM_PAGE_SIZE=16K",
        "SDSM_HEAP_BASE=0x100000000000",
        "SDSM_STATS=1",
        "SDSM_ERRORS=return",
        "SDSM_PROTOCOL=hlrc",
        "SDSM_LOG=debug",
        "SDSM_BARRIER_MANAGER=2",
        "SDSM_TIMEOUT=86400",
        "SDSM_SPIN_US=0",
        NULL,
    };
    CHECK_I(load(&c, env, err, sizeof err), ==, 0);
    CHECK_STR(err, "");
    CHECK_I(nwarn, ==, 0);
    CHECK_I(c.rank, ==, 3);
    CHECK_I(c.nprocs, ==, 8);
    CHECK_STR(c.rendezvous, "10.0.0.1:4000");
    CHECK_STR(c.job_key, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
    CHECK_U(c.heap_size, ==, 1ull << 30);
    CHECK_U(c.page_size, ==, 16384);
    CHECK_U(c.heap_base, ==, 0x100000000000ull);
    CHECK_I(c.stats, ==, 1);
    CHECK_I(c.errors, ==, SDSM_ERRMODE_RETURN);
    CHECK_I(c.protocol, ==, SDSM_PROTO_HLRC);
    CHECK_I(c.log_level, ==, SDSM_LOG_DEBUG);
    CHECK_I(c.barrier_manager, ==, 2);
    CHECK_I(c.timeout, ==, 86400);
    CHECK_I(c.spin_us, ==, 0);

    /* one at a time, over the defaults */
    struct {
        const char *var;
        size_t off;
        int is_size;
        long want;
    } one[] = {
        {"SDSM_RANK=0", offsetof(sdsm_config_t, rank), 0, 0},
        {"SDSM_NPROCS=1048576", offsetof(sdsm_config_t, nprocs), 0, 1 << 20},
        {"SDSM_HEAP_SIZE=4096", offsetof(sdsm_config_t, heap_size), 1, 4096},
        {"SDSM_PAGE_SIZE=8192", offsetof(sdsm_config_t, page_size), 1, 8192},
        {"SDSM_PAGE_SIZE=16M", offsetof(sdsm_config_t, page_size), 1, 16 << 20},
        {"SDSM_HEAP_BASE=0x7f0000000000", offsetof(sdsm_config_t, heap_base), 1, 0x7f0000000000},
        {"SDSM_STATS=0", offsetof(sdsm_config_t, stats), 0, 0},
        {"SDSM_STATS=all", offsetof(sdsm_config_t, stats), 0, SDSM_STATS_ALL},
        {"SDSM_STATS=JSON", offsetof(sdsm_config_t, stats), 0, SDSM_STATS_JSON},
        {"SDSM_ERRORS=abort", offsetof(sdsm_config_t, errors), 0, SDSM_ERRMODE_ABORT},
        {"SDSM_ERRORS=RETURN", offsetof(sdsm_config_t, errors), 0, SDSM_ERRMODE_RETURN},
        {"SDSM_PROTOCOL=HLRC", offsetof(sdsm_config_t, protocol), 0, SDSM_PROTO_HLRC},
        {"SDSM_LOG=error", offsetof(sdsm_config_t, log_level), 0, SDSM_LOG_ERROR},
        {"SDSM_LOG=warn", offsetof(sdsm_config_t, log_level), 0, SDSM_LOG_WARN},
        {"SDSM_LOG=info", offsetof(sdsm_config_t, log_level), 0, SDSM_LOG_INFO},
        {"SDSM_LOG=Debug", offsetof(sdsm_config_t, log_level), 0, SDSM_LOG_DEBUG},
        {"SDSM_BARRIER_MANAGER=0", offsetof(sdsm_config_t, barrier_manager), 0, 0},
        {"SDSM_BARRIER=auto", offsetof(sdsm_config_t, barrier_kind), 0, SDSM_BARRIER_AUTO},
        {"SDSM_BARRIER=central", offsetof(sdsm_config_t, barrier_kind), 0, SDSM_BARRIER_CENTRAL},
        {"SDSM_BARRIER=Tree", offsetof(sdsm_config_t, barrier_kind), 0, SDSM_BARRIER_TREE},
        {"SDSM_TIMEOUT=1", offsetof(sdsm_config_t, timeout), 0, 1},
        {"SDSM_SPIN_US=1000000", offsetof(sdsm_config_t, spin_us), 0, 1000000},
    };
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        char *e1[] = {(char *)one[i].var, NULL};
        int rc = load(&c, e1, err, sizeof err);
        const char *f = (const char *)&c + one[i].off;
        long long got = one[i].is_size ? (long long)*(const size_t *)f : *(const long *)f;
        if (!CHECK_I(rc, ==, 0) | !CHECK_I(got, ==, one[i].want))
            fprintf(stderr, "    %s: %s\n", one[i].var, err);
    }

    /* the last setting of a variable wins; entries without '=' are skipped */
    char *twice[] = {"SDSM_TIMEOUT=5", "SDSM_TIMEOUT", "SDSM_TIMEOUT=7", NULL};
    CHECK_I(load(&c, twice, err, sizeof err), ==, 0);
    CHECK_I(c.timeout, ==, 7);
    CHECK_I(nwarn, ==, 0);
}

static void test_load_invalid(void)
{
    static const char *bad[][2] = {
        {"SDSM_RANK=abc", "SDSM_RANK"},
        {"SDSM_RANK=-2", "SDSM_RANK"},
        {"SDSM_RANK=1048577", "SDSM_RANK"},
        {"SDSM_RANK=", "SDSM_RANK"},
        {"SDSM_NPROCS=0", "SDSM_NPROCS"},
        {"SDSM_NPROCS=1048577", "SDSM_NPROCS"},
        {"SDSM_HEAP_SIZE=lots", "SDSM_HEAP_SIZE"},
        {"SDSM_HEAP_SIZE=-1", "SDSM_HEAP_SIZE"},
        {"SDSM_HEAP_SIZE=1X", "SDSM_HEAP_SIZE"},
        {"SDSM_PAGE_SIZE=4k4", "SDSM_PAGE_SIZE"},
        {"SDSM_HEAP_BASE=zz", "SDSM_HEAP_BASE"},
        {"SDSM_HEAP_BASE=", "SDSM_HEAP_BASE"},
        {"SDSM_STATS=2", "SDSM_STATS"},
        {"SDSM_STATS=yes", "SDSM_STATS"},
        {"SDSM_ERRORS=ignore", "SDSM_ERRORS"},
        {"SDSM_ERRORS=", "SDSM_ERRORS"},
        {"SDSM_PROTOCOL=lrc", "SDSM_PROTOCOL"},
        {"SDSM_LOG=verbose", "SDSM_LOG"},
        {"SDSM_BARRIER_MANAGER=-1", "SDSM_BARRIER_MANAGER"},
        {"SDSM_BARRIER=dissemination", "SDSM_BARRIER"},
        {"SDSM_TIMEOUT=0", "SDSM_TIMEOUT"},
        {"SDSM_TIMEOUT=86401", "SDSM_TIMEOUT"},
        {"SDSM_SPIN_US=1000001", "SDSM_SPIN_US"},
        {"SDSM_SPIN_US=-1", "SDSM_SPIN_US"},
    };
    sdsm_config_t c;
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *env[] = {"PATH=/bin", (char *)bad[i][0], NULL};
        int rc = load(&c, env, err, sizeof err);
        if (!CHECK_I(rc, ==, SDSM_EINVAL) | !CHECK_PREFIX(err, bad[i][1]))
            fprintf(stderr, "    %s\n", bad[i][0]);
    }
    /* the message fits the caller's buffer */
    char small[8];
    char *env[] = {"SDSM_TIMEOUT=0", NULL};
    CHECK_I(load(&c, env, small, sizeof small), ==, SDSM_EINVAL);
    CHECK_U(strlen(small), ==, sizeof small - 1);
}

static void test_load_unknown_and_foreign(void)
{
    sdsm_config_t c;
    char err[256];
    char *env[] = {"HOME=/root", "SDSM_FOO=1", "PATH=/usr/bin:/bin", "SDSMX=3", "sdsm_rank=5", "XSDSM_RANK=2",
                   "LANG=C",     NULL};
    CHECK_I(load(&c, env, err, sizeof err), ==, 0);
    CHECK_I(nwarn, ==, 1);
    CHECK_HAS(last_warn, "SDSM_FOO");
    check_defaults(&c);

    /* a prefix or extension of a known name is unknown, not that variable */
    char *env2[] = {"SDSM_RANKS=3", NULL};
    CHECK_I(load(&c, env2, err, sizeof err), ==, 0);
    CHECK_I(nwarn, ==, 1);
    CHECK_HAS(last_warn, "SDSM_RANKS");
    CHECK_I(c.rank, ==, -1);
    char *env3[] = {"SDSM_RAN=3", NULL};
    CHECK_I(load(&c, env3, err, sizeof err), ==, 0);
    CHECK_I(nwarn, ==, 1);
    CHECK_HAS(last_warn, "unknown variable SDSM_RAN ignored");
    CHECK_HAS(last_warn, "did you mean SDSM_RANK?");
    CHECK_I(c.rank, ==, -1);

    /* two unknown variables: two warnings */
    char *env4[] = {"SDSM_FOO=1", "SDSM_BAR=2", NULL};
    CHECK_I(load(&c, env4, err, sizeof err), ==, 0);
    CHECK_I(nwarn, ==, 2);
    CHECK_HAS(last_warn, "SDSM_BAR");
}

/* The nearest name for a mistyped one, and none for a name far from all. */
static void test_suggest(void)
{
    static const char *const near[][2] = {
        {"SDSM_STAST", "SDSM_STATS"},         /* two letters swapped */
        {"SDSM_STAT", "SDSM_STATS"},          /* one missing */
        {"SDSM_TIMEOUTS", "SDSM_TIMEOUT"},    /* one too many */
        {"SDSM_PRTOCOL", "SDSM_PROTOCOL"},    /* one missing inside */
        {"SDSM_LGO", "SDSM_LOG"},             /* a short name: one typo */
        {"SDSM_HEAP", "SDSM_HEAP_SIZE"},      /* shortened: a prefix */
        {"SDSM_THREADS_MAX", "SDSM_THREADS"}, /* lengthened */
    };
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        const char *got = sdsm_config_suggest(near[i][0], strlen(near[i][0]));
        if (!CHECK(got && strcmp(got, near[i][1]) == 0))
            fprintf(stderr, "    %s: got %s, expected %s\n", near[i][0], got ? got : "nothing", near[i][1]);
    }
    static const char *const far[] = {"SDSM_FOO", "SDSM_XYZZY_PLUGH", "SDSM_", "SDSM_A", "SDSM_HE"};
    for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
        const char *got = sdsm_config_suggest(far[i], strlen(far[i]));
        if (!CHECK(got == NULL))
            fprintf(stderr, "    %s: suggested %s\n", far[i], got);
    }
    char *env[] = {"SDSM_STAST=1", NULL};
    sdsm_config_t c;
    char err[256];
    CHECK_I(load(&c, env, err, sizeof err), ==, 0);
    CHECK_I(nwarn, ==, 1);
    CHECK_HAS(last_warn, "unknown variable SDSM_STAST ignored (did you mean SDSM_STATS? see sdsmrun --info)");
    CHECK_I(c.stats, ==, 0);
}

static void test_load_cross_checks(void)
{
    static const struct {
        const char *a, *b, *name;
    } bad[] = {
        {"SDSM_PAGE_SIZE=6000", NULL, "SDSM_PAGE_SIZE"}, /* not a power of two */
        {"SDSM_PAGE_SIZE=12K", NULL, "SDSM_PAGE_SIZE"},
        {"SDSM_PAGE_SIZE=2048", NULL, "SDSM_PAGE_SIZE"}, /* below 4096 */
        {"SDSM_PAGE_SIZE=0", NULL, "SDSM_PAGE_SIZE"},
        {"SDSM_PAGE_SIZE=12K", "SDSM_HEAP_BASE=0", "SDSM_PAGE_SIZE"}, /* base fits: still bad */
        {"SDSM_PAGE_SIZE=6000", "SDSM_HEAP_BASE=0", "SDSM_PAGE_SIZE"},
        {"SDSM_PAGE_SIZE=32M", NULL, "SDSM_PAGE_SIZE"}, /* above 16M */
        {"SDSM_RANK=1", NULL, "SDSM_RANK"},             /* nprocs defaults to 1 */
        {"SDSM_RANK=4", "SDSM_NPROCS=4", "SDSM_RANK"},
        {"SDSM_RANK=1048576", "SDSM_NPROCS=1048576", "SDSM_RANK"},
        {"SDSM_HEAP_SIZE=4095", NULL, "SDSM_HEAP_SIZE"}, /* less than a page */
        {"SDSM_HEAP_SIZE=16K", "SDSM_PAGE_SIZE=32K", "SDSM_HEAP_SIZE"},
        {"SDSM_HEAP_SIZE=16T", NULL, "SDSM_HEAP_SIZE"}, /* 2^32 pages */
        {"SDSM_HEAP_BASE=0x200000001000", "SDSM_PAGE_SIZE=8K", "SDSM_HEAP_BASE"},
        {"SDSM_HEAP_BASE=0x200000000800", NULL, "SDSM_HEAP_BASE"},
        {"SDSM_HEAP_BASE=0", NULL, "SDSM_HEAP_BASE"}, /* the NULL guard */
        {"SDSM_HEAP_BASE=0xff000", NULL, "SDSM_HEAP_BASE"},
        {"SDSM_HEAP_BASE=0x7fff00000000", NULL, "SDSM_HEAP_BASE"},                    /* + 64G passes 2^47 */
        {"SDSM_HEAP_BASE=0xfffffffffffff000", "SDSM_HEAP_SIZE=1G", "SDSM_HEAP_BASE"}, /* wraps */
        {"SDSM_BARRIER_MANAGER=1", NULL, "SDSM_BARRIER_MANAGER"}, /* nprocs defaults to 1 */
        {"SDSM_BARRIER_MANAGER=5", "SDSM_NPROCS=2", "SDSM_BARRIER_MANAGER"},
        {"SDSM_BARRIER_MANAGER=1048576", "SDSM_NPROCS=1048576", "SDSM_BARRIER_MANAGER"},
        {"SDSM_PEER_TIMEOUT=1", NULL, "SDSM_PEER_TIMEOUT"}, /* below 2 heartbeats of 1 s */
        {"SDSM_PEER_TIMEOUT=3", "SDSM_HEARTBEAT=2", "SDSM_PEER_TIMEOUT"},
        {"SDSM_HEARTBEAT=5ms", NULL, "SDSM_HEARTBEAT"}, /* below 10 ms */
    };
    sdsm_config_t c;
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *env[] = {(char *)bad[i].a, (char *)bad[i].b, NULL};
        int rc = load(&c, env, err, sizeof err);
        if (!CHECK_I(rc, ==, SDSM_EINVAL) | !CHECK_PREFIX(err, bad[i].name))
            fprintf(stderr, "    %s %s\n", bad[i].a, bad[i].b ? bad[i].b : "");
    }
    /* the cross checks hold in either order of the variables */
    char *order[] = {"SDSM_NPROCS=4", "SDSM_RANK=4", NULL};
    CHECK_I(load(&c, order, err, sizeof err), ==, SDSM_EINVAL);
    CHECK_PREFIX(err, "SDSM_RANK");

    static const char *const good[][2] = {
        {"SDSM_RANK=3", "SDSM_NPROCS=4"},
        {"SDSM_RANK=-1", "SDSM_NPROCS=4"},
        {"SDSM_PAGE_SIZE=16M", "SDSM_HEAP_SIZE=16M"}, /* exactly one page */
        {"SDSM_HEAP_SIZE=17592186040320", NULL},      /* 2^32 - 1 pages */
        {"SDSM_HEAP_BASE=0x200000002000", "SDSM_PAGE_SIZE=8K"},
        {"SDSM_HEAP_BASE=0x100000", "SDSM_HEAP_SIZE=1G"},
        {"SDSM_HEAP_BASE=0x7fffc0000000", "SDSM_HEAP_SIZE=1G"}, /* ends exactly at 2^47 */
        {"SDSM_BARRIER_MANAGER=3", "SDSM_NPROCS=4"},
        {"SDSM_PEER_TIMEOUT=2", "SDSM_HEARTBEAT=1"},
        {"SDSM_PEER_TIMEOUT=0", "SDSM_HEARTBEAT=60"}, /* no timeout */
        {"SDSM_PEER_TIMEOUT=500ms", "SDSM_HEARTBEAT=250ms"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *env[] = {(char *)good[i][0], (char *)good[i][1], NULL};
        if (!CHECK_I(load(&c, env, err, sizeof err), ==, 0))
            fprintf(stderr, "    %s %s: %s\n", good[i][0], good[i][1] ? good[i][1] : "", err);
    }
}

static void test_print(void)
{
    sdsm_config_t c;
    char err[256], *buf = NULL;
    size_t len = 0;
    char *env[] = {"SDSM_JOB_KEY=xyzzy0123", NULL};
    CHECK_I(load(&c, env, err, sizeof err), ==, 0);
    FILE *f = open_memstream(&buf, &len);
    sdsm_config_print(&c, f);
    fclose(f);
    CHECK_HAS(buf, "SDSM_PAGE_SIZE");
    CHECK_HAS(buf, "4096");
    CHECK_HAS(buf, "SDSM_ERRORS");
    CHECK_HAS(buf, "abort");
    CHECK_HAS(buf, SDSM_STR(SDSM_DEFAULT_HEAP_BASE));
    CHECK_HAS(buf, "(set)");
    CHECK(buf && strstr(buf, "xyzzy0123") == NULL); /* the key is never printed */
    free(buf);
}

int main(void)
{
    RUN(test_parse_ms);
    RUN(test_parse_size);
    RUN_BUG(test_parse_size_negative_after_space,
            "src/core/config.c sdsm_config_parse_size: \" -1\" is accepted as SIZE_MAX");
    RUN(test_parse_long);
    RUN(test_load_defaults);
    RUN(test_load_each_variable);
    RUN(test_load_invalid);
    RUN(test_load_unknown_and_foreign);
    RUN(test_suggest);
    RUN(test_load_cross_checks);
    RUN(test_print);
    return ck_done("test_config");
}
