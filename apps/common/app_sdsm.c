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
