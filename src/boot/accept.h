/*
 * accept.h - set-up's acceptor: take the connections of ranks rank+1..nprocs-1
 * on a listening socket, each proving the job key, while strangers on the
 * same port are refused without delaying anyone (see accept.c).
 */
#ifndef SDSM_BOOT_ACCEPT_H
#define SDSM_BOOT_ACCEPT_H

#include <stdint.h>

#include "net/auth.h"

/*
 * lfd must be non-blocking.  Stores each higher rank's authenticated socket
 * (non-blocking) in peer_fds[r], which must hold -1 for the ranks still
 * expected.  0, or SDSM_ETIMEDOUT at deadline (CLOCK_MONOTONIC ms), or
 * SDSM_ENOMEM; the reason is logged.
 */
int sdsm_boot_accept(int lfd, const uint8_t key[SDSM_KEY_BYTES], int rank, int nprocs, int *peer_fds,
                     int64_t deadline);

#endif
