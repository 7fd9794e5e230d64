/*
 * water_seq.c - the sequential molecular dynamics (water_kernel.c), timed whole.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "water_kernel.h"

int main(int argc, char **argv)
{
    int n = (int)app_pick(argc, argv, "n", 343, 4096, 1728);
    int steps = (int)app_pick(argc, argv, "steps", 4, 30, 5);
    if (n < 2 || steps < 1) {
        fprintf(stderr, "water: needs n >= 2 and steps >= 1\n");
        return 2;
    }
    water_prob p;
    water_prob_init(&p, n, steps);
    double *pos = malloc(sizeof(double) * WATER_NV * (size_t)n);
    double *frc = malloc(sizeof(double) * WATER_NV * (size_t)n);
    double *en = malloc(sizeof(double) * 2 * (size_t)(steps + 1));
    app_header("water", "seq", 1, "n=%d steps=%d", n, steps);
    double t0 = app_now();
    water_seq_run(&p, pos, frc, en);
    app_time(app_now() - t0);
    app_result("energy: potential %.12e kinetic %.12e total %.12e (initial total %.12e)", en[2 * steps],
               en[2 * steps + 1], en[2 * steps] + en[2 * steps + 1], en[0] + en[1]);
    free(pos);
    free(frc);
    free(en);
    return 0;
}
