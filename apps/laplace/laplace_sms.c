/*
 * laplace_sms.c - the Jacobi iteration of laplace_sdsm.c written against
 * SMS's interface (sms.h, libsdsm_compat) instead of sdsm.h: each process's
 * rows in one block whose page manager is that process (sms_alloc's second
 * argument), sms_barrier(0) between sweeps.  The result is checked against
 * the sequential kernel like the other versions: every value bit for bit.
 */
#include <sms.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "laplace_kernel.h"

static double **rows(long n, size_t rowbytes)
{
    double **row = malloc((size_t)n * sizeof *row);
    if (!row)
        sms_error("laplace_sms: out of memory");
    for (int p = 0; p < sms_nproc; p++) {
        long lo, hi;
        app_block(n, sms_nproc, p, &lo, &hi);
        size_t bytes = (size_t)(hi - lo) * rowbytes;
        char *c = sms_alloc((int)(bytes ? bytes : 1), p);
        for (long i = lo; i < hi; i++)
            row[i] = (double *)(void *)(c + (size_t)(i - lo) * rowbytes);
    }
    return row;
}

int main(int argc, char **argv)
{
    sms_startup(argc, argv);
    int me = sms_proc_id, np = sms_nproc;
    long n = app_pick(argc, argv, "n", 256, 4096, 1024);
    long iters = app_pick(argc, argv, "iters", 50, 600, 50);
    long corrupt = app_opt_long(argc, argv, "corrupt", 0);
    if (n < 3 || iters < 1 || n < np)
        sms_error("laplace_sms: need --n >= 3 (and >= processes) and --iters >= 1");
    size_t rowbytes = (size_t)n * sizeof(double);
    double **a = rows(n, rowbytes), **b = rows(n, rowbytes);
    long lo, hi;
    app_block(n, np, me, &lo, &hi);
    for (long i = lo; i < hi; i++) {
        laplace_init_row(i, n, a[i]);
        memcpy(b[i], a[i], rowbytes);
    }
    long ulo = lo > 1 ? lo : 1, uhi = hi < n - 1 ? hi : n - 1;
    sms_barrier(0);
    double t0 = app_now();
    for (long it = 0; it < iters; it++) {
        laplace_sweep(a, b, n, ulo, uhi);
        sms_barrier(0);
        double **t = a;
        a = b;
        b = t;
    }
    double t1 = app_now();
    if (corrupt && me == np - 1 && uhi > ulo)
        a[uhi - 1][n / 2] *= 1.001;
    sms_barrier(0);
    int status = 0;
    if (me == 0) { /* process 0 reads the whole grid: fine at test sizes */
        double rresid, *ref = laplace_run(n, iters, &rresid, NULL), maxdiff = 0, sum = 0;
        long bad = 0;
        for (long i = 0; i < n; i++) {
            for (long j = 0; j < n; j++) {
                bad += memcmp(&a[i][j], &ref[(size_t)i * n + j], sizeof(double)) != 0;
                sum += a[i][j];
            }
            maxdiff = fmax(maxdiff, app_max_rel_diff(a[i], ref + (size_t)i * n, (size_t)n));
        }
        app_header("laplace", "sms", np, "n=%ld iters=%ld", n, iters);
        app_time(t1 - t0);
        app_result("checksum=%.12e", sum);
        status = app_verdict(bad == 0,
                             "grid vs sequential kernel through sms.h: %ld values differ "
                             "(max rel diff %.3g)",
                             bad, maxdiff);
        free(ref);
    }
    free(a);
    free(b);
    sms_shutdown();
    return status;
}
