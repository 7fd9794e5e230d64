/*
 * test_ifaddr.c - net/ifaddr.c: SDSM_IFACE syntax, matching interfaces by
 * name and by network, the launcher's address list, and the agent's choice
 * among the launcher's addresses.  Uses loopback, which every host has.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/status.h"
#include "net/ifaddr.h"

static uint32_t ip(const char *s)
{
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

static void test_check_syntax(void)
{
    char err[160];
    CHECK_I(sdsm_ifaddr_check("eth0", err, sizeof err), ==, 0);
    CHECK_I(sdsm_ifaddr_check("10.1.0.0/16,lo", err, sizeof err), ==, 0);
    CHECK_I(sdsm_ifaddr_check("0.0.0.0/0", err, sizeof err), ==, 0);
    CHECK_I(sdsm_ifaddr_check("10.1.0.0/33", err, sizeof err), ==, SDSM_EINVAL);
    CHECK_HAS(err, "SDSM_IFACE=10.1.0.0/33");
    CHECK_I(sdsm_ifaddr_check("10.1.0/16", err, sizeof err), ==, SDSM_EINVAL);
    CHECK_I(sdsm_ifaddr_check("eth0,", err, sizeof err), ==, SDSM_EINVAL);
    CHECK_I(sdsm_ifaddr_check("", err, sizeof err), ==, SDSM_EINVAL);
    CHECK_I(sdsm_ifaddr_check("a-name-far-too-long-for-linux", err, sizeof err), ==, SDSM_EINVAL);
    CHECK_I(sdsm_ifaddr_check("1.2.3.4/", err, sizeof err), ==, SDSM_EINVAL);
}

static void test_list_matches(void)
{
    uint32_t a[8];
    /* Loopback by name and by network; never in the default list. */
    CHECK_I(sdsm_ifaddr_list("lo", a, 8), >=, 1);
    CHECK_U(a[0], ==, ip("127.0.0.1"));
    CHECK_I(sdsm_ifaddr_list("127.0.0.0/8", a, 8), >=, 1);
    CHECK_U(a[0], ==, ip("127.0.0.1"));
    CHECK_I(sdsm_ifaddr_list("no-such-if0", a, 8), ==, 0);
    CHECK_I(sdsm_ifaddr_list("0.0.0.0/0", a, 8), >=, 1); /* every address */
    CHECK_I(sdsm_ifaddr_list("127.0.0.2/32", a, 8), ==, 0);
    int n = sdsm_ifaddr_list(NULL, a, 8);
    CHECK_I(n, >=, 0);
    for (int i = 0; i < n && i < 8; i++)
        CHECK_U(ntohl(a[i]) >> 24, !=, 127);
    CHECK_I(sdsm_ifaddr_list("bad/99", a, 8), ==, SDSM_EINVAL);
    uint32_t d;
    CHECK_I(sdsm_ifaddr_default("lo", &d), ==, 0);
    CHECK_U(d, ==, ip("127.0.0.1"));
    CHECK_I(sdsm_ifaddr_default("no-such-if0", &d), ==, SDSM_EINVAL);
}

static void test_parse_list(void)
{
    uint32_t a[4];
    uint16_t port = 0;
    CHECK_I(sdsm_ifaddr_parse_list("10.0.0.1:80", a, 4, &port), ==, 1);
    CHECK_U(a[0], ==, ip("10.0.0.1"));
    CHECK_U(port, ==, 80);
    CHECK_I(sdsm_ifaddr_parse_list("10.0.0.1,192.168.1.2:65535", a, 4, &port), ==, 2);
    CHECK_U(a[1], ==, ip("192.168.1.2"));
    CHECK_U(port, ==, 65535);
    /* More than fit: counted, not stored past max. */
    CHECK_I(sdsm_ifaddr_parse_list("1.1.1.1,2.2.2.2,3.3.3.3:9", a, 2, &port), ==, 3);
    const char *bad[] = {"10.0.0.1",
                         "10.0.0.1:",
                         "10.0.0.1:0",
                         "10.0.0.1:65536",
                         ":80",
                         "10.0.0.1,:80",
                         "10.0.0.1,,10.0.0.2:80",
                         "host:80",
                         "10.0.0.1,:80",
                         "1.2.3.4,5.6.7.8,:1",
                         "999.1.1.1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_I(sdsm_ifaddr_parse_list(bad[i], a, 4, &port), ==, SDSM_EINVAL);
}

static void test_pick(void)
{
    /* Loopback is not "attached" (its network is this host alone) but it
     * has a route. */
    uint32_t c[1] = {ip("127.0.0.1")};
    CHECK_I(sdsm_ifaddr_pick(c, 1), ==, 0);
    /* An address on a directly attached network wins over an earlier one
     * that is only routed (TEST-NET-3, unless this host is on it). */
    uint32_t mine[1], other[1];
    if (sdsm_ifaddr_list(NULL, mine, 1) >= 1 && sdsm_ifaddr_list("203.0.113.0/24", other, 1) == 0) {
        uint32_t d[3] = {ip("127.0.0.1"), ip("203.0.113.9"), mine[0]};
        CHECK_I(sdsm_ifaddr_pick(d, 3), ==, 2);
    }
    CHECK_I(sdsm_ifaddr_pick(c, 0), ==, -1);
}

int main(void)
{
    RUN(test_check_syntax);
    RUN(test_list_matches);
    RUN(test_parse_list);
    RUN(test_pick);
    return ck_done("test_ifaddr");
}
