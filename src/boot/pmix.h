/*
 * pmix.h - direct launch: a process started by a PMIx launcher (Open MPI's
 * mpirun, Slurm's srun --mpi=pmix) learns its rank and the job size from
 * PMIx, and the ranks exchange their listening addresses and the job key
 * through the PMIx key-value store instead of sdsmrun's rendezvous.
 * Compiled out (every call reports it) when the build found no PMIx.
 */
#ifndef SDSM_BOOT_PMIX_H
#define SDSM_BOOT_PMIX_H

#include <stdint.h>

#include "net/auth.h"
#include "net/wire.h"

/* Whether the environment shows a PMIx launcher (PMIX_NAMESPACE and PMIX_RANK). */
int sdsm_pmix_present(void);

/*
 * Connect to the local PMIx server.  Stores this rank, the job size and
 * whether every rank runs on this host.  0 or a negative SDSM_E* code
 * (SDSM_ENOTSUP in a build without PMIx); the reason is logged.
 */
int sdsm_pmix_start(int *rank, int *nprocs, int *one_host);

/*
 * Publish this rank's listening address (and, at rank 0, a fresh job key),
 * wait for every rank (a PMIx fence bounded by timeout_s), then read every
 * rank's address into table[nprocs] and the key into key.  0 or SDSM_E*.
 */
int sdsm_pmix_exchange(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                       uint8_t key[SDSM_KEY_BYTES]);

/* Ask the launcher to stop the whole job (best effort; returns if it did not act). */
void sdsm_pmix_abort(int code, const char *reason);

/* Leave PMIx cleanly (after a successful run), so the launcher sees a normal end. */
void sdsm_pmix_fini(void);

#endif
