/*
 * app_sdsm.h - helpers the sdsm versions of the applications share (linked
 * only into them: the other versions do not link the sdsm library).
 */
#ifndef APP_SDSM_H
#define APP_SDSM_H

#include <stddef.h>

/*
 * Row pointers (malloc'ed, free() them) to an nrows x rowbytes matrix in
 * shared memory, distributed in blocks of rows (app_block): the rows
 * [lo, hi) of rank r are one allocation homed at r.  Collective: every rank
 * calls it with the same arguments, in the same order as its other
 * allocations.
 */
void *app_sdsm_rows(long nrows, size_t rowbytes);

/*
 * The threaded versions (<app>_sdsmt): SDSM_THREADS compute threads per
 * rank (sdsmrun --threads T), work split by sdsm_thread_id() over
 * sdsm_thread_count() parts.  app_block(n, P x T, r x T + t) for t < T
 * tile exactly rank r's block app_block(n, P, r), so app_sdsm_rows homes
 * every thread's rows at its rank.
 */
int app_sdsm_threads(void); /* compute threads per rank */
/* Start the rank's compute threads, each running fn(arg), and join them
 * all (from the main thread, after the allocations); aborts on an error. */
void app_sdsm_run_threads(void *(*fn)(void *), void *arg);

/*
 * The check options of the sdsm versions that end with a self-check (ep,
 * mandelbrot, nbody): --inject-error 1 changes a value before the comparison
 * (the check's own test); --check 0 reads no result and prints no verdict,
 * so that the statistics show the traffic of the computation alone (the
 * check reads every page).
 */
typedef struct {
    int inject, check;
} app_sdsm_check_t;
app_sdsm_check_t app_sdsm_check_opts(int argc, char **argv);

#endif
