/*
 * nbody_sdsm.c - N-body on sdsm (seed 000, 7.1.1: a barrier per step, no
 * locks; positions and velocities shared).
 *
 * Each rank updates a block of bodies.  The shared position arrays (two,
 * read one step and written the next) and the velocity array are laid out
 * as one page-aligned slot per rank, and SDSM_HOME_BLOCK makes slot r's
 * pages homed at rank r: a rank writes only its own home pages, so nothing
 * is diffed; at each barrier the other ranks' copies of the pages written
 * are invalidated and re-fetched (with sequential prefetch) when the next
 * step reads all positions.  Velocities are only written by their owner and
 * read by nobody during the run: they never travel until the final check.
 *
 * At each step a rank copies all positions into a private contiguous array
 * (O(n), against O(n^2 / P) arithmetic) and runs the sequential kernel on
 * its block; barriers: 1 + steps.
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "nbody_kernel.h"

#define PAGE     4096L
#define PER_PAGE (PAGE / (long)sizeof(nb_body_t))

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    nb_param_t p;
    nb_params(argc, argv, &p);
    app_sdsm_check_t opt = app_sdsm_check_opts(argc, argv);
    if (me == 0)
        app_header("nbody", "sdsm", np, "n=%ld steps=%ld", p.n, p.steps);

    /* Slot of rank r: bodies [lo_r, hi_r) at [r * stride, r * stride + hi_r - lo_r). */
    long *lo = malloc((size_t)np * sizeof *lo), *hi = malloc((size_t)np * sizeof *hi);
    long maxblk = 0;
    for (int r = 0; r < np; r++) {
        app_block(p.n, np, r, &lo[r], &hi[r]);
        maxblk = hi[r] - lo[r] > maxblk ? hi[r] - lo[r] : maxblk;
    }
    long stride = (maxblk + PER_PAGE - 1) / PER_PAGE * PER_PAGE;
    if (stride == 0)
        stride = PER_PAGE;
    size_t words = (size_t)stride * (size_t)np * 4; /* 4 doubles per body */
    nb_body_t *sa = sdsm_calloc(words, sizeof(double), SDSM_HOME_BLOCK);
    nb_body_t *sb = sdsm_calloc(words, sizeof(double), SDSM_HOME_BLOCK);
    nb_vel_t *sv = sdsm_calloc(words, sizeof(double), SDSM_HOME_BLOCK);
    nb_body_t *mine = sa + (size_t)me * stride;
    if (sdsm_home_of(mine) != me || sdsm_home_of(mine + stride - 1) != me ||
        sdsm_home_of(sv + (size_t)me * stride) != me)
        sdsm_abort(1, "nbody: slot of rank %d is not homed there", me);

    nb_body_t *all = malloc((size_t)p.n * sizeof *all);
    nb_vel_t *vel0 = malloc((size_t)p.n * sizeof *vel0);
    if (!all || !vel0)
        sdsm_abort(1, "nbody: out of memory");
    nb_init(&p, all, vel0); /* every rank computes the (cheap) initial state */
    memcpy(mine, all + lo[me], (size_t)(hi[me] - lo[me]) * sizeof *all);
    memcpy(sv + (size_t)me * stride, vel0 + lo[me], (size_t)(hi[me] - lo[me]) * sizeof *vel0);
    sdsm_barrier();

    double t0 = app_now();
    nb_body_t *cur = sa, *next = sb;
    for (long s = 0; s < p.steps; s++) {
        for (int r = 0; r < np; r++)
            memcpy(all + lo[r], cur + (size_t)r * stride, (size_t)(hi[r] - lo[r]) * sizeof *all);
        nb_step(&p, all, lo[me], hi[me], next + (size_t)me * stride, sv + (size_t)me * stride);
        sdsm_barrier();
        nb_body_t *t = cur;
        cur = next;
        next = t;
    }
    double t1 = app_now();

    int status = 0;
    if (me == 0 && !opt.check) {
        app_time(t1 - t0);
    } else if (me == 0) {
        app_time(t1 - t0);
        nb_vel_t *vel = malloc((size_t)p.n * sizeof *vel);
        nb_body_t *rpos = malloc((size_t)p.n * sizeof *rpos), *tmp = malloc((size_t)p.n * sizeof *tmp);
        nb_vel_t *rvel = malloc((size_t)p.n * sizeof *rvel);
        if (!vel || !rpos || !tmp || !rvel)
            sdsm_abort(1, "nbody: out of memory");
        for (int r = 0; r < np; r++) {
            memcpy(all + lo[r], cur + (size_t)r * stride, (size_t)(hi[r] - lo[r]) * sizeof *all);
            memcpy(vel + lo[r], sv + (size_t)r * stride, (size_t)(hi[r] - lo[r]) * sizeof *vel);
        }
        nb_print_result(&p, all, vel);
        if (opt.inject)
            all[p.n / 2].x += 1e-9;
        nb_init(&p, rpos, rvel);
        nb_run(&p, rpos, rvel, tmp);
        char msg[256];
        int ok = nb_compare(&p, all, vel, rpos, rvel, msg, sizeof msg);
        status = app_verdict(ok, "nbody against the sequential kernel: %s", msg);
        free(vel);
        free(rpos);
        free(tmp);
        free(rvel);
    }
    free(all);
    free(vel0);
    free(lo);
    free(hi);
    sdsm_finalize();
    return status;
}
