/*
 * tcpopt.c - the options of every TCP connection of a job.
 *
 * A request and its reply are one segment each, alone in flight, so a lost
 * one is not found by duplicate acknowledgements: the sender's tail-loss
 * probe waits two round trips plus the retransmission floor, and its
 * retransmission timer at least the floor, which Linux sets to 200 ms.
 * With 1 % of the packets lost, that made jobs on an emulated cluster 10 to
 * 25 times slower; a floor of a few milliseconds, per socket, brings a loss
 * back to a few round trips of a LAN.
 */
#include <errno.h>
#include <linux/tcp.h> /* struct tcp_info in full: the C library's stops short of tcpi_bytes_acked */
#include <netinet/in.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "tcpopt.h"

/* Linux 6.15 <linux/tcp.h>; the C library's headers may be older. */
#ifndef TCP_RTO_MIN_US
#define TCP_RTO_MIN_US 45
#endif
#ifndef TCP_DELACK_MAX_US
#define TCP_DELACK_MAX_US 46
#endif

#define KERNEL_FLOOR_US 200000 /* the kernel's own: nothing to set at or above it */

/* The value the kernel took at the first connection (it refuses less than
 * two timer ticks), -1 if it refused the option, 0 not tried yet.  A
 * process has one SDSM_RTO_MIN, so later connections take the same. */
static _Atomic long accepted_us;

static long try_floor(int fd, long us)
{
    for (; us < KERNEL_FLOOR_US; us *= 2) {
        int v = (int)us;
        if (setsockopt(fd, IPPROTO_TCP, TCP_RTO_MIN_US, &v, sizeof v) == 0)
            return us;
        if (errno != EINVAL) /* ENOPROTOOPT: a kernel before 6.15 */
            return -1;
    }
    return -1;
}

static long floor_for(int fd, long rto_min_ms)
{
    long got = atomic_load_explicit(&accepted_us, memory_order_relaxed);
    if (got == 0) {
        got = try_floor(fd, rto_min_ms * 1000);
        atomic_store_explicit(&accepted_us, got, memory_order_relaxed);
        return got;
    }
    if (got < 0)
        return -1;
    int v = (int)got;
    return setsockopt(fd, IPPROTO_TCP, TCP_RTO_MIN_US, &v, sizeof v) == 0 ? got : -1;
}

void sdsm_tcp_tune(int fd, long rto_min_ms)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (rto_min_ms <= 0 || rto_min_ms * 1000 >= KERNEL_FLOOR_US)
        return;
    long us = floor_for(fd, rto_min_ms);
    if (us > 0) {
        int v = (int)us;
        setsockopt(fd, IPPROTO_TCP, TCP_DELACK_MAX_US, &v, sizeof v);
    }
}

long sdsm_tcp_rto_floor_us(long rto_min_ms)
{
    if (rto_min_ms <= 0 || rto_min_ms * 1000 >= KERNEL_FLOOR_US)
        return 0;
    long got = atomic_load_explicit(&accepted_us, memory_order_relaxed);
    return got > 0 ? got : 0;
}

int sdsm_tcp_progress(int fd, uint64_t *acked, uint32_t *unacked, uint32_t *ack_us)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
        return -1;
    *acked = ti.tcpi_bytes_acked;
    *unacked = ti.tcpi_unacked;
    *ack_us = ti.tcpi_rtt + 4 * ti.tcpi_rttvar;
    return 0;
}
