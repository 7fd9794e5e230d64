/*
 * finalize.c - what a process has once sdsm_finalize returns: every
 * descriptor the runtime opened is closed (counted in /proc/self/fd before
 * sdsm_init and after sdsm_finalize), and sdsm_rank()/sdsm_nprocs() still
 * give this process's rank and the job size, as documented in sdsm.h.
 * Every rank prints "finalized rank R of N" after finalize; the test checks
 * each line.  Rank 0 prints "OK finalize" when its own checks pass.
 */
#define _GNU_SOURCE
#define MP_NAME "finalize"
#include "mp.h"

#include <dirent.h>
#include <unistd.h>

/* Open descriptors, and their targets for the message. */
static int count_fds(char *list, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0, self = dirfd(d);
    size_t used = 0;
    list[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == self)
            continue;
        char path[300], target[128] = "?";
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t l = readlink(path, target, sizeof target - 1);
        target[l > 0 ? l : 1] = '\0';
        int w = snprintf(list + used, len - used, " %s->%s", e->d_name, target);
        if (w > 0 && (size_t)w < len - used)
            used += (size_t)w;
        n++;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    char before[2048], after[2048];
    int n0 = count_fds(before, sizeof before);
    mp_init(&argc, &argv);
    int me = sdsm_rank(), n = sdsm_nprocs();
    long *x = sdsm_calloc((size_t)n, sizeof(long), SDSM_HOME_CYCLIC);
    MP_NONNULL(x);
    x[me] = me + 1; /* some traffic, so every link has carried messages */
    MP_OK(sdsm_barrier());
    for (int r = 0; r < n; r++)
        MP_CHECK("x", r, r + 1, x[r]);
    if (sdsm_finalize() != 0) {
        fprintf(stderr, "finalize: rank %d: sdsm_finalize failed\n", me);
        return 1;
    }
    int n1 = count_fds(after, sizeof after);
    int ok = 1;
    if (n1 != n0) {
        fprintf(stderr,
                "finalize: rank %d: %d descriptors open before sdsm_init, %d after "
                "sdsm_finalize\n  before:%s\n  after: %s\n",
                me, n0, n1, before, after);
        ok = 0;
    }
    if (sdsm_rank() != me || sdsm_nprocs() != n) {
        fprintf(stderr, "finalize: rank %d: after sdsm_finalize sdsm_rank() = %d, sdsm_nprocs() = %d\n", me,
                sdsm_rank(), sdsm_nprocs());
        ok = 0;
    }
    printf("finalized rank %d of %d\n", sdsm_rank(), sdsm_nprocs());
    if (ok && me == 0)
        printf("OK finalize\n");
    fflush(stdout);
    return ok ? 0 : 1;
}
