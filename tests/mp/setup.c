/*
 * setup.c - a job whose set-up goes wrong in a chosen rank.
 *
 *   mp_setup late R SECS   rank R sleeps SECS seconds before sdsm_init, so
 *                          with SDSM_TIMEOUT below SECS the others give up
 *                          waiting for it: the launcher must blame rank R.
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
    return mp_finish("setup");
}
