/*
 * mandelbrot_static_sdsm.c - mandelbrot-static on sdsm (seed 000, 7.1.2):
 * the image is split into one fixed block of rows per rank, computed
 * straight into the shared image; one barrier at the end, no locks.
 *
 * The image is homed SDSM_HOME_BLOCK and each rank's rows are the rows that
 * start in its home pages, so every rank writes only (or, for a row that
 * straddles two ranks' pages, almost only) its own home pages: nothing is
 * diffed and the final barrier carries no data.  (The paper homed the whole
 * image at process 0.)
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "app_sdsm.h"
#include "mandelbrot_kernel.h"

#define PAGE 4096L

/* Rows whose first byte lies in the pages SDSM_HOME_BLOCK gives rank r. */
static void home_rows(long h, long rowbytes, int np, int r, long *lo, long *hi)
{
    long pages = (h * rowbytes + PAGE - 1) / PAGE, k = (pages + np - 1) / np;
    long b0 = (r * k < pages ? r * k : pages) * PAGE;
    long b1 = ((r + 1) * k < pages ? (r + 1) * k : pages) * PAGE;
    *lo = (b0 + rowbytes - 1) / rowbytes;
    *hi = (b1 + rowbytes - 1) / rowbytes;
    *lo = *lo < h ? *lo : h;
    *hi = *hi < h ? *hi : h;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    mb_param_t p;
    mb_params(argc, argv, &p);
    app_sdsm_check_t opt = app_sdsm_check_opts(argc, argv);
    if (me == 0)
        app_header("mandelbrot-static", "sdsm", np, "%ldx%ld maxit=%ld re=%g..%g im=%g..%g", p.w, p.h,
                   p.maxit, p.x0, p.x1, p.y0, p.y1);

    int *img = sdsm_calloc((size_t)(p.w * p.h), sizeof(int), SDSM_HOME_BLOCK);
    long lo, hi;
    home_rows(p.h, p.w * (long)sizeof(int), np, me, &lo, &hi);
    sdsm_barrier();

    double t0 = app_now();
    mb_rows(&p, lo, hi, img + lo * p.w);
    sdsm_barrier();
    double t1 = app_now();

    int status = 0;
    if (me == 0 && !opt.check) {
        app_time(t1 - t0);
    } else if (me == 0) {
        app_time(t1 - t0);
        status = mb_check(&p, img, opt.inject, "mandelbrot-static");
    }
    sdsm_finalize();
    return status;
}
