/*
 * ifaddr.h - which local IPv4 address a rank or the launcher listens on.
 *
 * On one host everything stays on loopback.  Across hosts a rank listens on
 * the address its peers can reach, never on every interface: by default the
 * one its link to the launcher leaves from (the kernel's route choice), or
 * one chosen with SDSM_IFACE, a comma-separated list of interface names
 * ("eth1") and networks in CIDR notation ("10.1.0.0/16"), like Open MPI's
 * btl_tcp_if_include.  Addresses are IPv4 in network byte order.
 */
#ifndef SDSM_NET_IFADDR_H
#define SDSM_NET_IFADDR_H

#include <stddef.h>
#include <stdint.h>

/* Check the syntax of an SDSM_IFACE value; 0 or SDSM_EINVAL with a message in err. */
int sdsm_ifaddr_check(const char *spec, char *err, size_t errlen);

/*
 * The addresses of interfaces that are up, in interface order, matching spec
 * (NULL: every interface but loopback).  Returns how many were found (at
 * most max are stored), SDSM_EINVAL for a malformed spec, or SDSM_ESYS
 * (errno says why) if the interfaces cannot be listed.
 */
int sdsm_ifaddr_list(const char *spec, uint32_t *out, int max);

/*
 * Of the launcher's addresses cands[0..n-1], the one this host should use:
 * one on a network an interface here is directly attached to, else the first
 * this host has a route to.  Returns its index, or -1 if none is reachable
 * (no index: not an error code).
 */
int sdsm_ifaddr_pick(const uint32_t *cands, int n);

/*
 * The address to listen on when nothing says where the peers are (direct
 * launch on several hosts): the first of spec's addresses if spec is set,
 * else the source address of the default route, else the first interface
 * address that is not loopback.  0; SDSM_EINVAL if spec is malformed or
 * matches no interface that is up, SDSM_EPEER if no address but loopback is
 * up (peers on other hosts could not reach this one), SDSM_ESYS if the
 * interfaces cannot be listed.
 */
int sdsm_ifaddr_default(const char *spec, uint32_t *out);

/* Parse "a.b.c.d[,e.f.g.h...]:port" (the launcher's rendezvous list).
 * Returns the number of addresses (at most max stored) or SDSM_EINVAL. */
int sdsm_ifaddr_parse_list(const char *s, uint32_t *out, int max, uint16_t *port);

#endif
