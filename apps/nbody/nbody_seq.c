/* nbody_seq.c - N-body, sequential. */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "nbody_kernel.h"

int main(int argc, char **argv)
{
    nb_param_t p;
    nb_params(argc, argv, &p);
    app_header("nbody", "seq", 1, "n=%ld steps=%ld", p.n, p.steps);
    nb_body_t *pos = malloc((size_t)p.n * sizeof *pos), *tmp = malloc((size_t)p.n * sizeof *tmp);
    nb_vel_t *vel = malloc((size_t)p.n * sizeof *vel);
    if (!pos || !tmp || !vel) {
        fprintf(stderr, "nbody: out of memory\n");
        return 1;
    }
    nb_init(&p, pos, vel);
    double t0 = app_now();
    nb_run(&p, pos, vel, tmp);
    app_time(app_now() - t0);
    nb_print_result(&p, pos, vel);
    free(pos);
    free(tmp);
    free(vel);
    return 0;
}
