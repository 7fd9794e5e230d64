/*
 * slow_grant.c - a preload library for mp_lock_pass_order: a thread that
 * has just sent a lock grant (LOCK_GRANT) sleeps SLOW_GRANT_US
 * microseconds (default 3000) before it goes on, as if the scheduler had
 * preempted it there.  A rank that passes a cached lock on sends a grant
 * and a note to the lock's manager; the sleep lets the lock go round the
 * other ranks and come back meanwhile, so an order of the two sends that
 * lets a later pass's note overtake an earlier one shows at once instead
 * of once in a hundred loaded runs.
 *
 *   sdsmrun -n 4 env LD_PRELOAD=libslow_grant.so PROGRAM...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "net/msg.h"
#include "net/wire.h"

typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
    static sendmsg_fn real;
    static long us = -1;
    if (!real)
        real = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
    if (us < 0) {
        const char *e = getenv("SLOW_GRANT_US");
        us = e ? atol(e) : 3000;
    }
    ssize_t r = real(fd, m, flags);
    sdsm_hdr_t h;
    if (r > 0 && m->msg_iovlen >= 1 && m->msg_iov[0].iov_len == sizeof h) {
        __builtin_memcpy(&h, m->msg_iov[0].iov_base, sizeof h);
        static __thread unsigned seed;
        if (!seed)
            seed = (unsigned)(uintptr_t)&seed | 1;
        if (h.type == SDSM_MSG_LOCK_GRANT && rand_r(&seed) % 4 == 0) {
            struct timespec ts = {us / 1000000, us % 1000000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    return r;
}
