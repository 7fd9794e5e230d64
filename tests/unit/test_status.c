/*
 * test_status.c - core/status.c, the one error vocabulary: every SDSM_E*
 * code has its own, correct description; no code equals a negated errno
 * value (so a -errno that leaks upward can never read as another error);
 * and the translation a call applies before it returns to the program.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/status.h"

static const struct {
    int code;
    const char *says; /* a word the description must hold */
} codes[] = {
    {SDSM_EINVAL, "invalid argument"},  {SDSM_ENOINIT, "not initialized"},
    {SDSM_ENOMEM, "out of memory"},     {SDSM_EMISMATCH, "different arguments"},
    {SDSM_ENOTHELD, "not held"},        {SDSM_EPEER, "peer rank failed"},
    {SDSM_EPROTO, "malformed message"}, {SDSM_ENOTSUP, "not supported"},
    {SDSM_ESYS, "system call failed"},  {SDSM_ETIMEDOUT, "timed out"},
    {SDSM_ESTATE, "invalid state"},     {SDSM_EHELD, "already held"},
    {SDSM_ENOHOME, "no home"},          {SDSM_EAUTH, "authentication"},
};
#define NCODES (sizeof codes / sizeof codes[0])

static void test_every_code_named(void)
{
    CHECK_I(NCODES, ==, SDSM_E_FIRST - SDSM_E_LAST + 1);
    for (unsigned i = 0; i < NCODES; i++) {
        CHECK(sdsm_status_is_code(codes[i].code));
        CHECK_HAS(sdsm_strerror(codes[i].code), codes[i].says);
        for (unsigned j = 0; j < i; j++) {
            CHECK_I(codes[i].code, !=, codes[j].code);
            CHECK(strcmp(sdsm_strerror(codes[i].code), sdsm_strerror(codes[j].code)) != 0);
        }
    }
    CHECK_STR(sdsm_strerror(0), "success");
    CHECK_STR(sdsm_strerror(SDSM_E_LAST - 1), "unknown error");
    CHECK_STR(sdsm_strerror(-ENOMEM), "unknown error");
    CHECK_STR(sdsm_strerror(5), "unknown error");
}

static void test_apart_from_errno(void)
{
    /* Linux's errno values are below 4096 (the kernel's MAX_ERRNO). */
    for (int e = 1; e < 4096; e++)
        if (sdsm_status_is_code(-e))
            CHECK_I(-e, ==, 0); /* fails, naming the errno value */
    CHECK(SDSM_E_FIRST <= -4096);
}

static void test_public(void)
{
    CHECK_I(sdsm_status_public(0), ==, 0);
    CHECK_I(sdsm_status_public(7), ==, 7);
    for (unsigned i = 0; i < NCODES; i++)
        CHECK_I(sdsm_status_public(codes[i].code), ==, codes[i].code);
    CHECK_I(sdsm_status_public(-ENOMEM), ==, SDSM_ENOMEM);
    CHECK_I(sdsm_status_public(-EINVAL), ==, SDSM_EINVAL);
    CHECK_I(sdsm_status_public(-ETIMEDOUT), ==, SDSM_ETIMEDOUT);
    CHECK_I(sdsm_status_public(-EPROTO), ==, SDSM_EPROTO);
    CHECK_I(sdsm_status_public(-ECONNRESET), ==, SDSM_EPEER);
    CHECK_I(sdsm_status_public(-EPIPE), ==, SDSM_EPEER);
    CHECK_I(sdsm_status_public(-ENOTSUP), ==, SDSM_ENOTSUP);
    CHECK_I(sdsm_status_public(-EIO), ==, SDSM_ESYS);
    CHECK_I(sdsm_status_public(-1), ==, SDSM_ESYS);
    CHECK_I(sdsm_status_public(-4095), ==, SDSM_ESYS);
    for (int e = 1; e < 4096; e++)
        if (!sdsm_status_is_code(sdsm_status_public(-e)))
            CHECK_I(-e, ==, 0);
}

int main(void)
{
    RUN(test_every_code_named);
    RUN(test_apart_from_errno);
    RUN(test_public);
    return ck_done("status");
}
