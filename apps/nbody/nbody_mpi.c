/* nbody_mpi.c - N-body with MPI (seed 000's MPI program: each rank computes
 * its block, MPI_Allgather(v) of the positions every step).  Every rank
 * computes the initial state itself instead of receiving it by MPI_Bcast
 * (set-up, not timed). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "nbody_kernel.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    nb_param_t p;
    nb_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    if (me == 0)
        app_header("nbody", "mpi", np, "n=%ld steps=%ld", p.n, p.steps);

    MPI_Datatype body;
    MPI_Type_contiguous(4, MPI_DOUBLE, &body);
    MPI_Type_commit(&body);
    int *cnt = malloc((size_t)np * sizeof *cnt), *dsp = malloc((size_t)np * sizeof *dsp);
    for (int r = 0; r < np; r++) {
        long lo, hi;
        app_block(p.n, np, r, &lo, &hi);
        cnt[r] = (int)(hi - lo);
        dsp[r] = (int)lo;
    }
    long lo = dsp[me], hi = lo + cnt[me];
    size_t nb = (size_t)p.n;
    nb_body_t *cur = malloc(nb * sizeof *cur), *next = malloc(nb * sizeof *next);
    nb_vel_t *vel = malloc(nb * sizeof *vel);
    if (!cur || !next || !vel)
        MPI_Abort(MPI_COMM_WORLD, 1);
    nb_init(&p, cur, vel);
    MPI_Barrier(MPI_COMM_WORLD);

    double t0 = app_now();
    for (long s = 0; s < p.steps; s++) {
        nb_step(&p, cur, lo, hi, next + lo, vel + lo);
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, next, cnt, dsp, body, MPI_COMM_WORLD);
        nb_body_t *t = cur;
        cur = next;
        next = t;
    }
    double t1 = app_now();

    /* Velocities to rank 0 for the check (not timed). */
    MPI_Gatherv(me == 0 ? MPI_IN_PLACE : vel + lo, cnt[me], body, vel, cnt, dsp, body, 0, MPI_COMM_WORLD);
    int status = 0;
    if (me == 0) {
        app_time(t1 - t0);
        nb_print_result(&p, cur, vel);
        if (inject)
            cur[p.n / 2].x += 1e-9;
        nb_body_t *rpos = malloc(nb * sizeof *rpos);
        nb_vel_t *rvel = malloc(nb * sizeof *rvel);
        if (!rpos || !rvel)
            MPI_Abort(MPI_COMM_WORLD, 1);
        nb_init(&p, rpos, rvel);
        nb_run(&p, rpos, rvel, next);
        char msg[256];
        int ok = nb_compare(&p, cur, vel, rpos, rvel, msg, sizeof msg);
        status = app_verdict(ok, "nbody against the sequential kernel: %s", msg);
        free(rpos);
        free(rvel);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(cur);
    free(next);
    free(vel);
    free(cnt);
    free(dsp);
    MPI_Type_free(&body);
    MPI_Finalize();
    return status;
}
