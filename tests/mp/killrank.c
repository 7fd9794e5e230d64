/*
 * killrank.c - a rank dies by SIGKILL while the others are blocked.
 *
 *   mp_killrank
 *
 * After a barrier everyone has passed, rank 0 holds lock 9; the odd ranks
 * below N-1 block acquiring lock 9, the even ones (and rank 0) block in the
 * next barrier, which can never complete.  Rank N-1 waits 300 ms so they
 * are all asleep, prints "mp-mark-ms=<wall-clock ms>" (for the wrapper to
 * time the stop from) and raise(SIGKILL)s itself.  The job must stop on its
 * own: sdsmrun exits 128+9 naming rank N-1 and the signal.  Never prints OK.
 */
#define MP_NAME "killrank"
#include "mp.h"

#include <signal.h>

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int n = sdsm_nprocs(), me = sdsm_rank();
    volatile long *v = sdsm_alloc(sizeof(long), 0);
    MP_NONNULL(v);
    if (me == 0) {
        *v = 77;
        MP_OK(sdsm_lock(9));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("value before the kill", 0, 77, *v);

    if (me == n - 1) {
        mp_sleep_ms(300);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(stderr, "killrank: rank %d kills itself now, mp-mark-ms=%lld\n", me,
                (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
        fflush(stderr);
        raise(SIGKILL);
        sdsm_abort(1, "%s: rank %d: raise(SIGKILL) returned", MP_NAME, me);
    }
    if (me % 2 == 1) {
        sdsm_lock(9); /* held by rank 0 forever */
        sdsm_abort(1, "%s: rank %d: got lock 9, which rank 0 never releases", MP_NAME, me);
    }
    sdsm_barrier(); /* rank N-1 never arrives */
    sdsm_abort(1, "%s: rank %d: passed a barrier rank %d never reached", MP_NAME, me, n - 1);
}
