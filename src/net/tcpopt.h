/*
 * tcpopt.h - the options of every TCP connection of a job: the links
 * between ranks, and the ranks' links to the launcher.
 */
#ifndef SDSM_NET_TCPOPT_H
#define SDSM_NET_TCPOPT_H

#include <stdint.h>

/*
 * No Nagle delay, and (rto_min_ms > 0) a lost segment retransmitted after
 * rto_min_ms instead of the kernel's 200 ms floor: the same floor for the
 * receiver's delayed acknowledgement, so that a late acknowledgement does
 * not look like a loss.  Linux 6.15 and later take both per socket
 * (TCP_RTO_MIN_US, TCP_DELACK_MAX_US) and round them up to two ticks of
 * their timer at least; an older kernel keeps its floors, silently.
 */
void sdsm_tcp_tune(int fd, long rto_min_ms);

/* The floor in effect for connections tuned with rto_min_ms, in µs (0: the
 * kernel cannot change it per socket, or rto_min_ms is 0). */
long sdsm_tcp_rto_floor_us(long rto_min_ms);

/* The bytes of fd's stream the peer has acknowledged, the segments in
 * flight it has not, and the kernel's estimate of how long an
 * acknowledgement may take (smoothed round trip + 4 x its variation, in
 * µs): 0, or -1 if the kernel does not say. */
int sdsm_tcp_progress(int fd, uint64_t *acked, uint32_t *unacked, uint32_t *ack_us);

#endif
