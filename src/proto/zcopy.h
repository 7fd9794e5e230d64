/*
 * zcopy.h - same-host zero-copy page reads (see zcopy.c).  Internal to
 * src/proto, but set up by the top layer, which knows the hosts.
 */
#ifndef SDSM_PROTO_ZCOPY_H
#define SDSM_PROTO_ZCOPY_H

#include <stdint.h>

/*
 * Before the service thread starts (after the region exists): decide which
 * peers to try (same_host[r] = 1 for ranks on this host, NULL for a job of
 * one; SDSM_ZEROCOPY decides how it counts), write this heap's token and
 * install the hello handler.  0 or SDSM_ENOMEM.
 */
int sdsm_zcopy_init(const uint8_t *same_host);
/* After the service thread started: offer this heap to the peers tried. */
void sdsm_zcopy_announce(void);
/* Close the peers' heaps (after the service thread stopped). */
void sdsm_zcopy_fini(void);

/* SDSM_FETCH_ZC if this rank reads, or may soon read, home's heap; else 0
 * (any thread). */
unsigned sdsm_zcopy_flags(int home);
/* This rank offered its heap to peer (a home may answer peer with FETCH_ZC). */
int sdsm_zcopy_offered(int peer);
/*
 * Copy pages [pg, pg + count) of home's heap (its runtime view's contents,
 * as they are now) to dst, from its mapping (or with one pread) (handlers only).  0, or
 * SDSM_ENOTSUP: home's heap could not be opened (or was given up before),
 * SDSM_ESYS: the read failed and the heap is given up now (one info line
 * per rank, with the system's reason); its pages travel over TCP from now on.
 */
int sdsm_zcopy_read(int home, uint32_t pg, uint32_t count, uint8_t *dst);

#endif
