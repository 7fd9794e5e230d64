/*
 * setup.c - a job whose set-up goes wrong in a chosen rank.
 *
 *   mp_setup late R SECS   rank R sleeps SECS seconds before sdsm_init, so
 *                          with SDSM_TIMEOUT below SECS the others give up
 *                          waiting for it: the launcher must blame rank R.
 *   mp_setup hold R        after set-up every rank prints
 *                          "mp-setup-ready rank R pid P"; rank R then sleeps
 *                          while the others wait for it in a barrier (for a
 *                          test that kills rank R while the launcher is stopped).
 * Prints "OK setup" from rank 0 when the job completes.
 */
#define _GNU_SOURCE
#define MP_NAME "setup"
#include "mp.h"

#include <unistd.h>

int main(int argc, char **argv)
{
    const char *r = getenv("SDSM_RANK");
    int me = r ? atoi(r) : 0;
    if (argc >= 4 && strcmp(argv[1], "late") == 0 && me == atoi(argv[2]))
        mp_sleep_ms(atol(argv[3]) * 1000);
    mp_init(&argc, &argv);
    MP_OK(sdsm_barrier());
    if (argc >= 3 && strcmp(argv[1], "hold") == 0) {
        printf("mp-setup-ready rank %d pid %d\n", me, (int)getpid());
        fflush(stdout);
        if (me == atoi(argv[2]))
            mp_sleep_ms(60000);
        MP_OK(sdsm_barrier());
    }
    return mp_finish("setup");
}
