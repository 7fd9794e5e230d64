/*
 * net.h - the peer transport: one TCP connection per pair of ranks, one
 * service thread per process that receives everything (epoll) and runs the
 * message handlers, and sends that never block any thread.
 *
 * Epoch ordering: every frame carries the sender's count of completed
 * barriers.  A frame from a rank that is already past a barrier this rank
 * has not finished yet is held back (with everything behind it from that
 * rank) until this rank finishes the barrier too, so the barrier's effects
 * (invalidations, copyset changes) are always applied before anything a
 * faster rank did after it.
 */
#ifndef SDSM_NET_NET_H
#define SDSM_NET_NET_H

#include <stddef.h>
#include <stdint.h>

#include "net/msg.h"

typedef struct sdsm_net_setup {
    int rank, nprocs;
    const int *peer_fds; /* nprocs entries, connected and authenticated; -1 at rank */
    int listen_fd;       /* refused after set-up; -1 if none */
    int ctrl_fd;         /* launcher link (EOF = launcher gone); -1 if none */
    size_t page_size;
    const uint8_t *same_host; /* nprocs entries: 1 for a rank on this host (NULL: all are) */
    int local_nprocs;         /* ranks on this host, this one included (0: unknown) */
    int cpu_sharers;          /* of those, the ones that run on this rank's CPUs (0: unknown) */
} sdsm_net_setup_t;

/* Start the transport and its service thread.  0, SDSM_ENOMEM or SDSM_ESYS. */
int sdsm_net_start(const sdsm_net_setup_t *s);
/* Announce an orderly close to every peer, wait until every peer did too,
 * then stop the service thread and close the sockets. */
void sdsm_net_shutdown(void);

/*
 * Queue a frame for rank dst (which may be this rank: delivered through the
 * service thread like any other).  The payload is a then b.  Never blocks on
 * the network; never fails except for a dead peer, which stops the job.
 */
void sdsm_net_send(int dst, unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                   const void *b, size_t blen);
/* Before sending a request whose reply this thread will wait for: take
 * dst's socket out of the service thread's epoll instance until the wait
 * ends (pin.c, "Request pins").  Application threads only; no-op elsewhere. */
void sdsm_net_pin(int dst);
/* End this thread's pins (also called by wait.h through sdsm_wait_ops.unpin). */
void sdsm_net_unpin(void);
/*
 * Send to ourselves and, when no other thread is handling messages, handle
 * it (and whatever else is queued for ourselves) at once in the calling
 * thread, without waking the service thread.  The caller must hold no lock
 * a handler may take.  From a handler: queued, handled before the progress
 * lock is let go.  Not counted in the message statistics (nor is a
 * sdsm_net_send to ourselves): it is a call, not a message.
 */
void sdsm_net_post_local(unsigned type, unsigned flags, uint32_t seq, const void *a, size_t alen,
                         const void *b, size_t blen);

/* Barrier count completed by this rank (see above). */
uint32_t sdsm_net_epoch(void);
/* Service thread only: this rank completed a barrier. */
void sdsm_net_epoch_advance(void);

int sdsm_net_rank(void);
int sdsm_net_nprocs(void);
/* True in the service thread. */
int sdsm_net_in_service(void);

/*
 * A connection from outside the job was refused: logged with a rate limit
 * (one line per source address per interval, carrying the count of the
 * refusals in between; see stranger.h).  why must outlive the job (a literal).
 * Any thread.
 */
struct sockaddr_in;
void sdsm_net_stranger(const struct sockaddr_in *from, const char *why);
/* Log the refusals still unreported, with their counts (end of set-up, shutdown). */
void sdsm_net_strangers_flush(void);

/* Installed by an upper layer: the launcher asked what this rank is waiting
 * for (its --timeout fired).  Runs like a handler. */
extern void (*sdsm_net_on_ctrl_query)(void);

/* The port this rank's peers connected to, for tests; SDSM_ESTATE if it
 * does not listen, SDSM_ESYS if the socket does not say. */
int sdsm_net_listen_port(void);

#endif
