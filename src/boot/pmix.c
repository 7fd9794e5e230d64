/*
 * pmix.c - direct launch through PMIx (see pmix.h).
 *
 * The launcher's PMIx server replaces sdsmrun's rendezvous, nothing else:
 * every rank puts its listening address, rank 0 also puts a random job key,
 * one fence with data collection makes all of it visible, and boot.c then
 * connects and authenticates the ranks exactly as under sdsmrun.  The key
 * lives only in the launcher's key-value store (never on a command line,
 * in the environment or in a file).  There is no control link: the launcher
 * itself stops the job when a rank exits non-zero, and an abort asks it to
 * through PMIx_Abort.
 */
#include "pmix.h"

#include <stdlib.h>

#include "core/log.h"
#include "sdsm.h"

int sdsm_pmix_present(void) { return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK"); }

#ifndef SDSM_HAVE_PMIX

int sdsm_pmix_start(int *rank, int *nprocs, int *one_host)
{
    (void)rank, (void)nprocs, (void)one_host;
    char *end;
    long r = strtol(getenv("PMIX_RANK"), &end, 10);
    if (!*end && r >= 0 && r < (1 << 20))
        sdsm_log_rank = (int)r; /* each rank's message names it */
    sdsm_error_log("started by a PMIx launcher (mpirun or srun: PMIX_NAMESPACE is set), but this "
                   "build of sdsm has no PMIx support: rebuild it with the PMIx development files "
                   "(pkg-config pmix, e.g. Debian's libpmix-dev) or start the program with sdsmrun");
    return SDSM_ENOTSUP;
}

int sdsm_pmix_exchange(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                       uint8_t key[SDSM_KEY_BYTES])
{
    (void)me, (void)timeout_s, (void)table, (void)key;
    return SDSM_ENOTSUP;
}

void sdsm_pmix_abort(int code, const char *reason) { (void)code, (void)reason; }
void sdsm_pmix_fini(void) {}

#else

#include <pmix.h>
#include <stdbool.h>
#include <string.h>

#define KEY_ADDR   "sdsm.addr"
#define KEY_JOBKEY "sdsm.key"

static pmix_proc_t self;
static int active; /* PMIx_Init succeeded and PMIx_Finalize has not run */
static uint32_t job_size;

/* A job-level uint32 attribute (PMIX_JOB_SIZE, PMIX_LOCAL_SIZE). */
static int get_job_u32(const char *attr, uint32_t *out)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&wild, self.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t st = PMIx_Get(&wild, attr, NULL, 0, &v);
    int rc = 0;
    if (st != PMIX_SUCCESS || !v || v->type != PMIX_UINT32) {
        sdsm_error_log("PMIx_Get(%s) failed: %s", attr,
                       st != PMIX_SUCCESS ? PMIx_Error_string(st) : "not a uint32");
        rc = SDSM_EPROTO;
    } else {
        *out = v->data.uint32;
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    return rc;
}

int sdsm_pmix_start(int *rank, int *nprocs, int *one_host)
{
    pmix_status_t st = PMIx_Init(&self, NULL, 0);
    if (st != PMIX_SUCCESS) {
        sdsm_error_log("PMIx_Init failed: %s (PMIX_NAMESPACE=%s)", PMIx_Error_string(st),
                       getenv("PMIX_NAMESPACE"));
        return SDSM_EPEER;
    }
    active = 1;
    uint32_t local;
    int rc = get_job_u32(PMIX_JOB_SIZE, &job_size);
    if (!rc)
        rc = get_job_u32(PMIX_LOCAL_SIZE, &local);
    if (rc)
        return rc;
    if (job_size < 1 || job_size > (1u << 20) || self.rank >= job_size) {
        sdsm_error_log("PMIx gives rank %u of a job of %u ranks", self.rank, job_size);
        return SDSM_EPROTO;
    }
    *rank = (int)self.rank;
    *nprocs = (int)job_size;
    *one_host = local == job_size;
    return 0;
}

static int put_bytes(const char *k, const void *p, size_t len)
{
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)p; /* PMIx_Put copies it */
    v.data.bo.size = len;
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, k, &v);
    if (st != PMIX_SUCCESS) {
        sdsm_error_log("PMIx_Put(%s) failed: %s", k, PMIx_Error_string(st));
        return SDSM_EPEER;
    }
    return 0;
}

/* Rank r's byte object k, exactly len bytes, into out. */
static int get_bytes(uint32_t r, const char *k, void *out, size_t len)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&p, self.nspace, r);
    pmix_status_t st = PMIx_Get(&p, k, NULL, 0, &v);
    int rc = 0;
    if (st != PMIX_SUCCESS) {
        sdsm_error_log("PMIx_Get(%s) of rank %u failed: %s", k, r, PMIx_Error_string(st));
        rc = SDSM_EPEER;
    } else if (!v || v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len) {
        sdsm_error_log("PMIx_Get(%s) of rank %u: not a %zu-byte object", k, r, len);
        rc = SDSM_EPROTO;
    } else {
        memcpy(out, v->data.bo.bytes, len);
    }
    if (v)
        PMIX_VALUE_RELEASE(v);
    return rc;
}

static int fence(long timeout_s)
{
    pmix_info_t info[2];
    bool collect = true;
    int tmo = (int)timeout_s;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &tmo, PMIX_INT);
    pmix_status_t st = PMIx_Fence(NULL, 0, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (st != PMIX_SUCCESS) {
        sdsm_error_log("PMIx_Fence over %u ranks failed: %s (waited at most %ld s: SDSM_TIMEOUT)", job_size,
                       PMIx_Error_string(st), timeout_s);
        return st == PMIX_ERR_TIMEOUT ? SDSM_ETIMEDOUT : SDSM_EPEER;
    }
    return 0;
}

int sdsm_pmix_exchange(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                       uint8_t key[SDSM_KEY_BYTES])
{
    int rc = put_bytes(KEY_ADDR, me, sizeof *me);
    if (!rc && self.rank == 0) {
        char hex[2 * SDSM_KEY_BYTES + 1];
        if (sdsm_auth_key_generate(hex) || sdsm_auth_key_parse(hex, key)) {
            sdsm_error_log("cannot make a job key: %m");
            return SDSM_ESYS;
        }
        memset(hex, 0, sizeof hex);
        rc = put_bytes(KEY_JOBKEY, key, SDSM_KEY_BYTES);
    }
    pmix_status_t st;
    if (!rc && (st = PMIx_Commit()) != PMIX_SUCCESS) {
        sdsm_error_log("PMIx_Commit failed: %s", PMIx_Error_string(st));
        rc = SDSM_EPEER;
    }
    if (!rc)
        rc = fence(timeout_s);
    if (!rc && self.rank != 0)
        rc = get_bytes(0, KEY_JOBKEY, key, SDSM_KEY_BYTES);
    for (uint32_t r = 0; !rc && r < job_size; r++)
        rc = get_bytes(r, KEY_ADDR, &table[r], sizeof *table);
    return rc;
}

void sdsm_pmix_abort(int code, const char *reason)
{
    if (!active)
        return;
    /* The launcher kills every rank of the job, this one included. */
    PMIx_Abort(code ? code : 1, reason, NULL, 0);
}

void sdsm_pmix_fini(void)
{
    if (!active)
        return;
    active = 0;
    PMIx_Finalize(NULL, 0);
}

#endif
