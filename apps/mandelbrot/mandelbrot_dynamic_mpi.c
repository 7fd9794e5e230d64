/*
 * mandelbrot_dynamic_mpi.c - mandelbrot-dynamic with MPI.  The work counter
 * lives in an MPI window at rank 0 and is taken with MPI_Fetch_and_op
 * (passive target), so every rank, rank 0 included, computes blocks - the
 * same work pool without a master as the sdsm version (the paper's MPI
 * program used a separate master process instead).  Each rank keeps the
 * blocks it computed and sends them to rank 0 at the end (tag = block);
 * the timed section ends when rank 0 has the whole image.
 */
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
        app_header("mandelbrot-dynamic", "mpi", np, "%ldx%ld maxit=%ld re=%g..%g im=%g..%g blocks=%ld", p.w,
                   p.h, p.maxit, p.x0, p.x1, p.y0, p.y1, p.blocks);
    size_t npix = (size_t)(p.w * p.h);
    long maxrows = (p.h + p.blocks - 1) / p.blocks;
    if (maxrows * p.w > 0x7fffffffL)
        MPI_Abort(MPI_COMM_WORLD, 2);

    long *counter;
    MPI_Win win;
    MPI_Win_allocate(me == 0 ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &counter, &win);
    if (me == 0)
        *counter = 0;
    int *img = me == 0 ? malloc(npix * sizeof *img) : NULL;
    long *mine = malloc((size_t)p.blocks * sizeof *mine); /* blocks this rank computed */
    int **buf = calloc((size_t)p.blocks, sizeof *buf);
    if ((me == 0 && !img) || !mine || !buf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = app_now();
    long done = 0;
    const long one = 1;
    for (;;) {
        long b;
        MPI_Fetch_and_op(&one, &b, MPI_LONG, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        if (b >= p.blocks)
            break;
        long r0, r1;
        mb_block_rows(&p, b, &r0, &r1);
        int *out;
        if (me == 0)
            out = img + r0 * p.w;
        else if (!(out = buf[done] = malloc((size_t)((r1 - r0) * p.w) * sizeof *out)))
            MPI_Abort(MPI_COMM_WORLD, 1);
        mb_rows(&p, r0, r1, out);
        mine[done++] = b;
    }
    if (me == 0) {
        for (long k = done; k < p.blocks; k++) {
            MPI_Status st;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            long r0, r1;
            mb_block_rows(&p, st.MPI_TAG, &r0, &r1);
            MPI_Recv(img + r0 * p.w, (int)((r1 - r0) * p.w), MPI_INT, st.MPI_SOURCE, st.MPI_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        for (long k = 0; k < done; k++) {
            long r0, r1;
            mb_block_rows(&p, mine[k], &r0, &r1);
            MPI_Send(buf[k], (int)((r1 - r0) * p.w), MPI_INT, 0, (int)mine[k], MPI_COMM_WORLD);
        }
    }
    double t1 = app_now();
    MPI_Win_unlock_all(win);

    int status = 0;
    if (me == 0) {
        app_time(t1 - t0);
        status = mb_check(&p, img, inject, "mandelbrot-dynamic");
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (long k = 0; k < done; k++)
        free(buf[k]);
    free(buf);
    free(mine);
    free(img);
    MPI_Win_free(&win);
    MPI_Finalize();
    return status;
}
