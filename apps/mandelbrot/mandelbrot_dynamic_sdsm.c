/*
 * mandelbrot_dynamic_sdsm.c - mandelbrot-dynamic on sdsm (seed 000, 7.1.2):
 * a work pool without a master.  The image is divided into `blocks` (64)
 * blocks of rows; a shared counter, protected by lock 0, hands out the next
 * block number to whichever rank asks; a rank computes the block straight
 * into the shared image.  One lock per block, one barrier at the end.
 *
 * Homes (--home): which rank computes a block is known only at run time, so
 * the image is SDSM_HOME_FIRST_TOUCH by default: the rank that takes a block
 * becomes the home of its pages by writing them, and nothing is diffed (the
 * cost is one small home claim per page).  --home block and --home 0 (the
 * paper: everything at process 0) are there for comparison; with them a rank
 * writing a block homed elsewhere fetches its pages and sends them back as
 * diffs at the barrier.  The counter has a page of its own, homed at rank 0.
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "mandelbrot_kernel.h"

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    mb_param_t p;
    mb_params(argc, argv, &p);
    app_sdsm_check_t opt = app_sdsm_check_opts(argc, argv);
    const char *hs = app_opt_str(argc, argv, "home", "first-touch");
    int home = !strcmp(hs, "first-touch") ? SDSM_HOME_FIRST_TOUCH
               : !strcmp(hs, "block")     ? SDSM_HOME_BLOCK
               : !strcmp(hs, "cyclic")    ? SDSM_HOME_CYCLIC
                                          : (int)app_opt_long(argc, argv, "home", 0);
    if (home >= np)
        sdsm_abort(2, "mandelbrot: --home must be first-touch, block, cyclic or a rank < %d", np);
    if (me == 0)
        app_header("mandelbrot-dynamic", "sdsm", np,
                   "%ldx%ld maxit=%ld re=%g..%g im=%g..%g blocks=%ld home=%s", p.w, p.h, p.maxit, p.x0, p.x1,
                   p.y0, p.y1, p.blocks, hs);

    int *img = sdsm_calloc((size_t)(p.w * p.h), sizeof(int), home);
    long *counter = sdsm_calloc(1, sizeof(long), 0);
    sdsm_barrier();

    double t0 = app_now();
    long done = 0;
    for (;;) {
        sdsm_lock(0);
        long b = (*counter)++;
        sdsm_unlock(0);
        if (b >= p.blocks)
            break;
        long r0, r1;
        mb_block_rows(&p, b, &r0, &r1);
        mb_rows(&p, r0, r1, img + r0 * p.w);
        done++;
    }
    sdsm_barrier();
    double t1 = app_now();
    if (app_opt_long(argc, argv, "verbose", 0))
        fprintf(stderr, "rank %d computed %ld blocks\n", me, done);

    int status = 0;
    if (me == 0 && !opt.check) {
        app_time(t1 - t0);
    } else if (me == 0) {
        app_time(t1 - t0);
        status = mb_check(&p, img, opt.inject, "mandelbrot-dynamic");
    }
    sdsm_finalize();
    return status;
}
