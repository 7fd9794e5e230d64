/* mandelbrot_seq.c - Mandelbrot, sequential.  Built twice, as
 * mandelbrot-static_seq and mandelbrot-dynamic_seq (MB_APP names the app). */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "mandelbrot_kernel.h"

int main(int argc, char **argv)
{
    mb_param_t p;
    mb_params(argc, argv, &p);
    app_header(MB_APP, "seq", 1, "%ldx%ld maxit=%ld re=%g..%g im=%g..%g", p.w, p.h, p.maxit, p.x0, p.x1, p.y0,
               p.y1);
    int *img = malloc((size_t)(p.w * p.h) * sizeof *img);
    if (!img) {
        fprintf(stderr, "mandelbrot: out of memory\n");
        return 1;
    }
    double t0 = app_now();
    mb_rows(&p, 0, p.h, img);
    app_time(app_now() - t0);
    mb_print_result(&p, img);
    free(img);
    return 0;
}
