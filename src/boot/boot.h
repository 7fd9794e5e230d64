/*
 * boot.h - how a process learns its rank, the job size and its peers.
 *
 * Under sdsmrun: SDSM_RANK, SDSM_NPROCS, SDSM_RENDEZVOUS and SDSM_JOB_KEY
 * are in the environment.  The rank listens on an ephemeral port, registers
 * with the launcher, receives everyone's address, and connects to every
 * lower rank while accepting every higher one, each link authenticated with
 * the job key.  Started by a PMIx launcher instead (mpirun, srun: see
 * pmix.h) or a PMI-2 one (srun --mpi=pmi2, mpiexec.hydra: see pmi2.h), the
 * rank, size, addresses and key come from the launcher and the links
 * are made the same way, without a launcher link.  Without either the
 * process is a job of one.
 */
#ifndef SDSM_BOOT_BOOT_H
#define SDSM_BOOT_BOOT_H

#include <stddef.h>
#include <stdint.h>

typedef struct sdsm_boot {
    int rank, nprocs;
    int local_nprocs;   /* ranks on this host (same listening address), this one included */
    int cpu_sharers;    /* of those, the ones that run on this rank's CPUs (link_peers) */
    int *peer_fds;      /* nprocs entries, -1 at rank; NULL for a job of one */
    uint8_t *same_host; /* nprocs entries: 1 where that rank listens on this rank's address
                           (so runs on this host); NULL for a job of one */
    int *host_of;       /* nprocs entries: the lowest rank on that rank's host (the host's
                           number); NULL for a job of one */
    int listen_fd;      /* -1 for a job of one */
    int ctrl_fd;        /* launcher link, -1 for a job of one */
} sdsm_boot_t;

/* 0 or a negative SDSM_E* code (the reason is logged). */
int sdsm_boot_start(sdsm_boot_t *b);

/* "3, 5, 6" (at most 8, then "and N more"): ranks in [from, to) whose fds[r] < 0. */
void sdsm_boot_missing(const int *fds, int from, int to, char *out, size_t len);

/* Tell the launcher why this rank is stopping the job (best effort, bounded). */
void sdsm_boot_abort(int code, const char *reason);
/* Answer the launcher's question: what this rank is waiting for. */
void sdsm_boot_state(const char *text, size_t len);
/* Tell the launcher this rank lost its link to `rank` and exits because of it
 * (silent_ms > 0: `rank` sent nothing for that long, the peer timeout). */
void sdsm_boot_lost(int rank, uint32_t silent_ms);
/* Tell the launcher this rank finalized cleanly. */
void sdsm_boot_done(void);
/* The job key (valid once sdsm_boot_start has linked the ranks). */
const uint8_t *sdsm_boot_key(void);

/*
 * A job whose ranks all run on this host (SDSM_HOST_SHARE): rank 0 hands
 * its heap file *fd to every other rank, which receives it in *fd, over a
 * Unix socket of this network namespace named after the job key, each link
 * authenticated with the key both ways.  Bounded by SDSM_TIMEOUT.  0, or a
 * negative SDSM_E* code (logged, naming the ranks).
 */
int sdsm_boot_share_fd(const sdsm_boot_t *b, int *fd);

/*
 * The host's barrier block (SDSM_BARRIER_SHM, sync/hoststage.c): the
 * host's lowest rank makes a memory file of len bytes and hands it to the
 * other ranks of its host, as sdsm_boot_share_fd does, and every rank of
 * the host gets it in *fd (-1, and 0 returned, where the host has one
 * rank).  0, or a negative SDSM_E* code (logged).
 */
int sdsm_boot_stage_fd(const sdsm_boot_t *b, size_t len, int *fd);

/* Close the listening socket and the launcher link (after sdsm_boot_done). */
void sdsm_boot_close(sdsm_boot_t *b);

#endif
