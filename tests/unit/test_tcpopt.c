/*
 * test_tcpopt.c - net/tcpopt.c on a loopback connection: the options every
 * link of a job gets (no Nagle; the retransmission floor where the kernel
 * takes it per socket, else nothing changed), and the acknowledged-bytes
 * count the loss probes watch.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "net/tcpopt.h"

#define RTO_MIN_US_OPT 45 /* TCP_RTO_MIN_US, Linux 6.15 */

static int lfd = -1, cfd = -1, afd = -1;

static void connect_pair(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_I(bind(lfd, (struct sockaddr *)&a, sizeof a), ==, 0);
    CHECK_I(listen(lfd, 4), ==, 0);
    CHECK_I(getsockname(lfd, (struct sockaddr *)&a, &l), ==, 0);
    cfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_I(connect(cfd, (struct sockaddr *)&a, sizeof a), ==, 0);
    afd = accept(lfd, NULL, NULL);
    CHECK_I(afd, >=, 0);
}

static void test_tune(void)
{
    /* What this kernel does with the option, asked on a socket of our own. */
    int probe = socket(AF_INET, SOCK_STREAM, 0), v = 8000;
    int per_socket = setsockopt(probe, IPPROTO_TCP, RTO_MIN_US_OPT, &v, sizeof v) == 0;
    close(probe);

    sdsm_tcp_tune(cfd, 5);
    int nd = 0;
    socklen_t l = sizeof nd;
    CHECK_I(getsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &nd, &l), ==, 0);
    CHECK_I(nd, !=, 0);
    if (per_socket) {
        int got = 0;
        l = sizeof got;
        CHECK_I(getsockopt(cfd, IPPROTO_TCP, RTO_MIN_US_OPT, &got, &l), ==, 0);
        /* 5 ms, rounded up to the kernel's timer ticks (2 at least): under 200 ms */
        CHECK_I(got, >=, 5000);
        CHECK_I(got, <, 200000);
        CHECK_I(sdsm_tcp_rto_floor_us(5), >=, 5000);
        /* a later connection gets the floor the first one got */
        sdsm_tcp_tune(afd, 1);
        l = sizeof got;
        CHECK_I(getsockopt(afd, IPPROTO_TCP, RTO_MIN_US_OPT, &got, &l), ==, 0);
        CHECK_I(got, <, 200000);
    } else {
        CHECK_I(sdsm_tcp_rto_floor_us(5), ==, 0);
    }
    CHECK_I(sdsm_tcp_rto_floor_us(0), ==, 0);
    CHECK_I(sdsm_tcp_rto_floor_us(200), ==, 0);
}

static void test_progress(void)
{
    uint64_t acked0 = 0, acked = 0;
    uint32_t unacked = 99, ack_us = 0;
    CHECK_I(sdsm_tcp_progress(cfd, &acked0, &unacked, &ack_us), ==, 0);
    char buf[3000];
    memset(buf, 7, sizeof buf);
    CHECK_I(write(cfd, buf, sizeof buf), ==, (long)sizeof buf);
    /* loopback acknowledges at once; give it a moment all the same */
    for (int i = 0; i < 1000; i++) {
        CHECK_I(sdsm_tcp_progress(cfd, &acked, &unacked, &ack_us), ==, 0);
        if (acked - acked0 == sizeof buf && unacked == 0)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK_U(acked - acked0, ==, sizeof buf);
    CHECK_U(unacked, ==, 0);
    CHECK_U(ack_us, >, 0); /* a round trip was measured */
    CHECK_U(ack_us, <, 1000000);
    int p[2];
    CHECK_I(pipe(p), ==, 0);
    CHECK_I(sdsm_tcp_progress(p[0], &acked, &unacked, &ack_us), ==, -1); /* not a socket */
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    connect_pair();
    RUN(test_tune);
    RUN(test_progress);
    close(cfd);
    close(afd);
    close(lfd);
    return ck_done("test_tcpopt");
}
