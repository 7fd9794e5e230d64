/*
 * status.c - the names of the error codes, and the translation of a
 * negated errno value into them (status.h).
 */
#include "status.h"

#include <errno.h>
#include <string.h>

static const char *const names[] = {
    [SDSM_EINVAL - SDSM_EINVAL] = "invalid argument",
    [SDSM_EINVAL - SDSM_ENOINIT] = "sdsm is not initialized (call sdsm_init first) or already finalized",
    [SDSM_EINVAL - SDSM_ENOMEM] = "out of memory or shared address space",
    [SDSM_EINVAL - SDSM_EMISMATCH] = "ranks passed different arguments to a collective call",
    [SDSM_EINVAL - SDSM_ENOTHELD] = "lock not held by the calling thread",
    [SDSM_EINVAL - SDSM_EPEER] = "a peer rank failed",
    [SDSM_EINVAL - SDSM_EPROTO] = "malformed message received",
    [SDSM_EINVAL - SDSM_ENOTSUP] = "not supported",
    [SDSM_EINVAL - SDSM_ESYS] = "system call failed",
    [SDSM_EINVAL - SDSM_ETIMEDOUT] = "timed out",
    [SDSM_EINVAL - SDSM_ESTATE] = "invalid state",
    [SDSM_EINVAL - SDSM_EHELD] = "lock already held by the calling thread",
    [SDSM_EINVAL - SDSM_ENOHOME] = "first-touch page has no home yet",
    [SDSM_EINVAL - SDSM_EAUTH] = "authentication with the job key failed",
};
_Static_assert(sizeof names / sizeof *names == (size_t)(SDSM_E_FIRST - SDSM_E_LAST + 1),
               "every SDSM_E* code has a name");

const char *sdsm_strerror(int err)
{
    if (err == 0)
        return "success";
    if (sdsm_status_is_code(err))
        return names[SDSM_E_FIRST - err];
    return "unknown error";
}

int sdsm_status_public(int rc)
{
    if (rc >= 0 || sdsm_status_is_code(rc))
        return rc;
    switch (-rc) {
    case ENOMEM: return SDSM_ENOMEM;
    case EINVAL:
    case ERANGE:
    case EFAULT:
    case EOVERFLOW: return SDSM_EINVAL;
    case ETIMEDOUT: return SDSM_ETIMEDOUT;
    case EPROTO:
    case EBADMSG: return SDSM_EPROTO;
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case EPIPE:
    case ENOTCONN:
    case ESHUTDOWN:
    case EHOSTUNREACH:
    case ENETUNREACH: return SDSM_EPEER;
    case ENOTSUP:
    case ENOSYS: return SDSM_ENOTSUP;
    default: return SDSM_ESYS;
    }
}
