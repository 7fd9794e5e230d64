/* mandelbrot_static_mpi.c - mandelbrot-static with MPI (seed 000: each rank
 * computes its fixed block of rows, MPI_Gatherv collects them at rank 0). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "mandelbrot_kernel.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mb_param_t p;
    mb_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    if (me == 0)
        app_header("mandelbrot-static", "mpi", np, "%ldx%ld maxit=%ld re=%g..%g im=%g..%g", p.w, p.h, p.maxit,
                   p.x0, p.x1, p.y0, p.y1);
    if (p.w * p.h > 0x7fffffffL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int *cnt = malloc((size_t)np * sizeof *cnt), *dsp = malloc((size_t)np * sizeof *dsp);
    for (int r = 0; r < np; r++) {
        long lo, hi;
        app_block(p.h, np, r, &lo, &hi);
        cnt[r] = (int)((hi - lo) * p.w);
        dsp[r] = (int)(lo * p.w);
    }
    size_t npix = (size_t)(p.w * p.h);
    int *img = malloc((me == 0 ? npix : (size_t)cnt[me] + 1) * sizeof *img);
    if (!img)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = app_now();
    long lo = dsp[me] / p.w, hi = lo + cnt[me] / p.w;
    mb_rows(&p, lo, hi, img); /* rank 0's rows start at 0: in place */
    MPI_Gatherv(me == 0 ? MPI_IN_PLACE : img, cnt[me], MPI_INT, img, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD);
    double t1 = app_now();

    int status = 0;
    if (me == 0) {
        app_time(t1 - t0);
        status = mb_check(&p, img, inject, "mandelbrot-static");
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(img);
    free(cnt);
    free(dsp);
    MPI_Finalize();
    return status;
}
