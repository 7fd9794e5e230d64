/*
 * test_stranger.c - net/stranger.c, the rate limit on refused-connection
 * lines: one line per address per interval carrying the count of the
 * refusals in between, bounded memory for any number of addresses, and the
 * count of what is left unreported at the end; and net/auth.c's early check
 * that lets an acceptor drop junk at its first wrong byte.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "net/auth.h"
#include "net/stranger.h"

#define IV SDSM_STRANGER_INTERVAL_MS

static void test_first_line_then_counted(void)
{
    sdsm_strangers_t t = {0};
    uint32_t quiet = 99;
    CHECK_I(sdsm_stranger_note(&t, 7, "a", 1000, &quiet), ==, 1);
    CHECK_U(quiet, ==, 0);
    /* A burst from the same address within the interval: counted, no line. */
    for (int i = 0; i < 50; i++)
        CHECK_I(sdsm_stranger_note(&t, 7, "b", 1000 + i, &quiet), ==, 0);
    /* Another address has its own line. */
    CHECK_I(sdsm_stranger_note(&t, 8, "c", 1001, &quiet), ==, 1);
    CHECK_U(quiet, ==, 0);
    /* After the interval, one line again, with the count in between. */
    CHECK_I(sdsm_stranger_note(&t, 7, "d", 1000 + IV - 1, &quiet), ==, 0);
    CHECK_I(sdsm_stranger_note(&t, 7, "e", 1000 + IV + 5, &quiet), ==, 1);
    CHECK_U(quiet, ==, 51);
    CHECK_I(sdsm_stranger_note(&t, 7, "f", 1000 + IV + 6, &quiet), ==, 0);
}

static void test_take_reports_the_rest(void)
{
    sdsm_strangers_t t = {0};
    sdsm_stranger_src_t s;
    uint32_t quiet;
    CHECK_I(sdsm_stranger_take(&t, &s), ==, 0);
    sdsm_stranger_note(&t, 7, "first", 0, &quiet);
    CHECK_I(sdsm_stranger_take(&t, &s), ==, 0); /* the one refusal had its line */
    for (int i = 0; i < 11; i++)
        sdsm_stranger_note(&t, 7, i < 10 ? "idle" : "junk", 10 + i, &quiet);
    CHECK_I(sdsm_stranger_take(&t, &s), ==, 1);
    CHECK_U(s.ip, ==, 7);
    CHECK_U(s.quiet, ==, 11);
    CHECK_STR(s.why, "junk");
    CHECK_I(sdsm_stranger_take(&t, &s), ==, 0);
    /* Taking does not reopen the interval: the next one is still only counted. */
    CHECK_I(sdsm_stranger_note(&t, 7, "again", 30, &quiet), ==, 0);
    CHECK_I(sdsm_stranger_take(&t, &s), ==, 1);
    CHECK_U(s.quiet, ==, 1);
}

/* A flood from many addresses: bounded table, and every refusal still counted. */
static void test_many_sources_share_a_slot(void)
{
    sdsm_strangers_t t = {0};
    uint32_t quiet, lines = 0, counted = 0, n = 1000;
    for (uint32_t ip = 1; ip <= n; ip++)
        lines += (uint32_t)sdsm_stranger_note(&t, ip, "x", 5, &quiet);
    CHECK_I(t.n, ==, SDSM_STRANGER_SOURCES);
    CHECK_U(lines, ==, SDSM_STRANGER_SOURCES); /* one per slot, the shared one included */
    CHECK_U(t.src[SDSM_STRANGER_SOURCES - 1].ip, ==, 0);
    sdsm_stranger_src_t s;
    while (sdsm_stranger_take(&t, &s))
        counted += s.quiet;
    CHECK_U(lines + counted, ==, n);
}

static void test_hello_prefix(void)
{
    static const uint8_t good[] = "SDSMC1\0\0\x05\0\0\0";
    CHECK(sdsm_auth_hello_c_plausible(good, 0));
    for (size_t k = 1; k <= sizeof good - 1; k++)
        CHECK(sdsm_auth_hello_c_plausible(good, k));
    CHECK(!sdsm_auth_hello_c_plausible((const uint8_t *)"x", 1));
    CHECK(!sdsm_auth_hello_c_plausible((const uint8_t *)"SDSMA1", 6));
    CHECK(!sdsm_auth_hello_c_plausible((const uint8_t *)"SDSMC1\0x", 8));
    CHECK(!sdsm_auth_hello_c_plausible((const uint8_t *)"GET / HTTP/1.0\r\n", 16));
}

int main(void)
{
    RUN(test_first_line_then_counted);
    RUN(test_take_reports_the_rest);
    RUN(test_many_sources_share_a_slot);
    RUN(test_hello_prefix);
    return ck_done("test_stranger");
}
