/*
 * app_sdsm.c - see app_sdsm.h.
 */
#include "app_sdsm.h"

#include <sdsm.h>
#include <stdlib.h>

#include "app.h"

void *app_sdsm_rows(long nrows, size_t rowbytes)
{
    int nprocs = sdsm_nprocs();
    char **row = malloc((size_t)nrows * sizeof *row);
    if (!row)
        sdsm_abort(1, "out of memory");
    for (int r = 0; r < nprocs; r++) {
        long lo, hi;
        app_block(nrows, nprocs, r, &lo, &hi);
        size_t bytes = (size_t)(hi - lo) * rowbytes;
        char *c = sdsm_alloc(bytes ? bytes : 1, r);
        for (long i = lo; i < hi; i++)
            row[i] = c + (size_t)(i - lo) * rowbytes;
    }
    return row;
}

int app_sdsm_threads(void) { return sdsm_thread_count() / sdsm_nprocs(); }

void app_sdsm_run_threads(void *(*fn)(void *), void *arg)
{
    int nt = app_sdsm_threads();
    sdsm_thread_t *t = malloc((size_t)nt * sizeof *t);
    if (!t)
        sdsm_abort(1, "out of memory");
    for (int k = 0; k < nt; k++) {
        int rc = sdsm_thread_create(&t[k], 0, fn, arg);
        if (rc)
            sdsm_abort(1, "sdsm_thread_create (thread %d of rank %d): %s", k, sdsm_rank(), sdsm_strerror(rc));
    }
    for (int k = 0; k < nt; k++) {
        int rc = sdsm_thread_join(t[k], NULL);
        if (rc)
            sdsm_abort(1, "sdsm_thread_join (thread %d of rank %d): %s", k, sdsm_rank(), sdsm_strerror(rc));
    }
    free(t);
}

app_sdsm_check_t app_sdsm_check_opts(int argc, char **argv)
{
    app_sdsm_check_t c;
    c.inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    c.check = (int)app_opt_long(argc, argv, "check", 1);
    return c;
}
