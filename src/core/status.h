/*
 * status.h - sdsm's one error vocabulary (status.c).
 *
 * A function that can fail returns int: 0 (or a count, a rank, ...) on
 * success, a negative SDSM_E* code of sdsm.h on failure.  The codes lie in
 * a range of their own (SDSM_E_FIRST .. SDSM_E_LAST, below -5000), so they
 * can never be mistaken for a negated errno value.  Where a system call
 * fails, the failure is logged there with %m and an SDSM_E* code goes up;
 * code that still returns -errno (or -1) is translated once, where a call
 * returns to the program (sdsm_status_public, at the API's report()).
 */
#ifndef SDSM_CORE_STATUS_H
#define SDSM_CORE_STATUS_H

#include "sdsm.h"

#define SDSM_E_FIRST SDSM_EINVAL
#define SDSM_E_LAST  SDSM_EAUTH

/* Nonzero if rc is one of the SDSM_E* codes. */
static inline int sdsm_status_is_code(int rc) { return rc <= SDSM_E_FIRST && rc >= SDSM_E_LAST; }

/* The SDSM_E* code a call returns for rc: rc itself if it is 0, positive
 * or an SDSM_E* code; a negated errno value mapped to the code that says
 * the same (-ENOMEM -> SDSM_ENOMEM, -ETIMEDOUT -> SDSM_ETIMEDOUT, a broken
 * connection -> SDSM_EPEER, ...; any other -> SDSM_ESYS); -1 -> SDSM_ESYS. */
int sdsm_status_public(int rc);

#endif
