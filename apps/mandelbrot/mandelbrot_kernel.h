/*
 * mandelbrot_kernel.h - Mandelbrot set iteration counts, shared by every
 * version of mandelbrot-static and mandelbrot-dynamic.
 */
#ifndef MANDELBROT_KERNEL_H
#define MANDELBROT_KERNEL_H

typedef struct mb_param {
    long w, h;   /* pixels: columns (real axis), rows (imaginary axis) */
    long maxit;  /* iteration limit */
    long blocks; /* work units of the dynamic version: blocks of rows */
    double x0, x1, y0, y1;
} mb_param_t;

/* --size small|medium|paper, --width, --height (default: --n for both),
 * --maxit, --blocks.  Exits on bad values. */
void mb_params(int argc, char **argv, mb_param_t *p);

/* Iteration counts of rows [r0, r1) into out (row r0 at out[0], w ints a row). */
void mb_rows(const mb_param_t *p, long r0, long r1, int *out);

/* Rows [*r0, *r1) of work block b of p->blocks. */
void mb_block_rows(const mb_param_t *p, long b, long *r0, long *r1);

/* Print the result line (total iterations, pixels at the limit). */
void mb_print_result(const mb_param_t *p, const int *img);

/* Compare exactly; a one-line description in msg.  Returns 1 if equal. */
int mb_compare(const mb_param_t *p, const int *img, const int *ref, char *msg, unsigned long msglen);

/* The self-check of a parallel version: print the result line, run the
 * sequential kernel (inject != 0: with one pixel deliberately wrong), compare
 * exactly and print PASSED/FAILED naming `app`.  Returns the exit status
 * (0 passed, 1 failed or out of memory). */
int mb_check(const mb_param_t *p, const int *img, int inject, const char *app);

#endif
