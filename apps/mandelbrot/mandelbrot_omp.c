/* mandelbrot_omp.c - Mandelbrot with OpenMP.  Built twice: MB_DYNAMIC=0,
 * mandelbrot-static_omp (schedule(static) over rows: one contiguous block of
 * rows per thread), and MB_DYNAMIC=1, mandelbrot-dynamic_omp
 * (schedule(dynamic) over the 64 row blocks). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "mandelbrot_kernel.h"

int main(int argc, char **argv)
{
    mb_param_t p;
    mb_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    int nt = omp_get_max_threads();
    app_header(MB_APP, "omp", nt, "%ldx%ld maxit=%ld re=%g..%g im=%g..%g", p.w, p.h, p.maxit, p.x0, p.x1,
               p.y0, p.y1);
    size_t npix = (size_t)(p.w * p.h);
    int *img = malloc(npix * sizeof *img);
    if (!img) {
        fprintf(stderr, "mandelbrot: out of memory\n");
        return 1;
    }
    double t0 = app_now();
#if MB_DYNAMIC
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (long b = 0; b < p.blocks; b++) {
        long r0, r1;
        mb_block_rows(&p, b, &r0, &r1);
        mb_rows(&p, r0, r1, img + r0 * p.w);
    }
#else
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long i = 0; i < p.h; i++)
        mb_rows(&p, i, i + 1, img + i * p.w);
#endif
    app_time(app_now() - t0);
    int status = mb_check(&p, img, inject, MB_APP);
    free(img);
    return status;
}
