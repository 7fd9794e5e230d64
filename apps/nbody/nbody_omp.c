/* nbody_omp.c - N-body with OpenMP: each thread a block of bodies, a
 * barrier per step, the same kernel and order as the sequential run. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "nbody_kernel.h"

int main(int argc, char **argv)
{
    nb_param_t p;
    nb_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    int nt = omp_get_max_threads();
    app_header("nbody", "omp", nt, "n=%ld steps=%ld", p.n, p.steps);
    size_t nb = (size_t)p.n;
    nb_body_t *a = malloc(nb * sizeof *a), *b = malloc(nb * sizeof *b);
    nb_vel_t *vel = malloc(nb * sizeof *vel);
    nb_body_t *rpos = malloc(nb * sizeof *rpos), *tmp = malloc(nb * sizeof *tmp);
    nb_vel_t *rvel = malloc(nb * sizeof *rvel);
    if (!a || !b || !vel || !rpos || !tmp || !rvel) {
        fprintf(stderr, "nbody: out of memory\n");
        return 1;
    }
    nb_init(&p, a, vel);

    double t0 = app_now();
#pragma omp parallel num_threads(nt)
    {
        long lo, hi;
        app_block(p.n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        nb_body_t *cur = a, *next = b;
        for (long s = 0; s < p.steps; s++) {
            nb_step(&p, cur, lo, hi, next + lo, vel + lo);
#pragma omp barrier
            nb_body_t *t = cur;
            cur = next;
            next = t;
        }
    }
    double t1 = app_now();
    nb_body_t *fin = p.steps % 2 ? b : a;
    app_time(t1 - t0);
    nb_print_result(&p, fin, vel);
    if (inject)
        fin[p.n / 2].x += 1e-9;
    nb_init(&p, rpos, rvel);
    nb_run(&p, rpos, rvel, tmp);
    char msg[256];
    int ok = nb_compare(&p, fin, vel, rpos, rvel, msg, sizeof msg);
    int status = app_verdict(ok, "nbody against the sequential kernel: %s", msg);
    free(a);
    free(b);
    free(vel);
    free(rpos);
    free(tmp);
    free(rvel);
    return status;
}
