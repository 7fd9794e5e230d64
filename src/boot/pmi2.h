/*
 * pmi2.h - direct launch through PMI-2, for launchers without PMIx:
 * Slurm's srun --mpi=pmi2 and MPICH's hydra (mpiexec.hydra).  The launcher
 * hands each process one end of a socket (PMI_FD) and its rank and the job
 * size (PMI_RANK, PMI_SIZE); the PMI-2 wire protocol over that socket gives
 * a key-value store with a fence, which replaces sdsmrun's rendezvous the
 * same way PMIx does (pmix.h).  Written from the protocol's public
 * description; nothing is linked.
 */
#ifndef SDSM_BOOT_PMI2_H
#define SDSM_BOOT_PMI2_H

#include <stdint.h>

#include "net/auth.h"
#include "net/wire.h"

/* Whether the environment shows a PMI launcher's socket (PMI_FD, PMI_RANK, PMI_SIZE). */
int sdsm_pmi2_present(void);

/*
 * Greet the launcher (PMI-2 init and fullinit) within timeout_s.  Stores
 * this rank, the job size, and whether every rank runs on this host: 1 yes,
 * 0 no, -1 the launcher did not say (no usable PMI_process_mapping).
 * 0 or a negative SDSM_E* code; the reason is logged.
 */
int sdsm_pmi2_start(int *rank, int *nprocs, int *one_host, long timeout_s);

/*
 * Put this rank's listening address (and, at rank 0, a fresh job key), fence
 * (bounded by timeout_s), then read every rank's address into table[nprocs]
 * and the key into key.  0 or SDSM_E*.
 */
int sdsm_pmi2_exchange(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                       uint8_t key[SDSM_KEY_BYTES]);

/* Ask the launcher to stop the whole job (best effort, bounded; returns at once if not launched so). */
void sdsm_pmi2_abort(int code, const char *reason);

/* Say goodbye to the launcher (after a successful run) and close the socket. */
void sdsm_pmi2_fini(void);

#endif
