/*
 * nbody_kernel.c - gravitational N-body problem, direct O(n^2) summation
 * (seed 000, section 7.1.1): every step computes all pairwise attractions,
 * then each body's velocity and position (symplectic Euler, softened
 * gravity, G = 1).
 *
 * Sizes:
 *   small   n=512   steps=10
 *   medium  n=8192  steps=40   (~10 s sequentially here)
 *   paper   n=1000  steps=10   (seed 000 figs. 18a, 21b, 23: "1000 bodies,
 *                               10 iterations")
 *
 * Floating point: the sum for body i runs over j = 0 .. n-1 in the same
 * order in every version, with the same code, so every version must agree
 * with the sequential run bit for bit (tolerance 0).
 */
#include "nbody_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void nb_params(int argc, char **argv, nb_param_t *p)
{
    p->n = app_pick(argc, argv, "n", 512, 8192, 1000);
    p->steps = app_pick(argc, argv, "steps", 10, 40, 10);
    p->seed = (unsigned long)app_opt_long(argc, argv, "seed", 20010901);
    p->dt = 1e-3;
    p->eps2 = 1e-4; /* softening length 0.01 */
    if (p->n < 1 || p->n > (1L << 26) || p->steps < 0) {
        fprintf(stderr, "nbody: need 1 <= n <= 2^26 and steps >= 0\n");
        exit(2);
    }
}

void nb_init(const nb_param_t *p, nb_body_t *pos, nb_vel_t *vel)
{
    app_rng_t r;
    app_rng_seed(&r, p->seed);
    for (long i = 0; i < p->n; i++) {
        pos[i].x = app_rng_double(&r);
        pos[i].y = app_rng_double(&r);
        pos[i].z = app_rng_double(&r);
        pos[i].m = 1.0 / (double)p->n;
        vel[i].x = 0.1 * (app_rng_double(&r) - 0.5);
        vel[i].y = 0.1 * (app_rng_double(&r) - 0.5);
        vel[i].z = 0.1 * (app_rng_double(&r) - 0.5);
        vel[i].pad = 0;
    }
}

void nb_step(const nb_param_t *p, const nb_body_t *cur, long lo, long hi, nb_body_t *next, nb_vel_t *vel)
{
    const long n = p->n;
    const double dt = p->dt, eps2 = p->eps2;
    for (long i = lo; i < hi; i++) {
        const double xi = cur[i].x, yi = cur[i].y, zi = cur[i].z;
        double ax = 0, ay = 0, az = 0;
        for (long j = 0; j < n; j++) { /* j == i adds exactly 0 */
            double dx = cur[j].x - xi, dy = cur[j].y - yi, dz = cur[j].z - zi;
            double r2 = dx * dx + dy * dy + dz * dz + eps2;
            double inv = 1.0 / sqrt(r2);
            double s = cur[j].m * inv * inv * inv;
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        nb_vel_t *v = &vel[i - lo];
        v->x += ax * dt;
        v->y += ay * dt;
        v->z += az * dt;
        nb_body_t *o = &next[i - lo];
        o->x = xi + v->x * dt;
        o->y = yi + v->y * dt;
        o->z = zi + v->z * dt;
        o->m = cur[i].m;
    }
}

void nb_run(const nb_param_t *p, nb_body_t *pos, nb_vel_t *vel, nb_body_t *scratch)
{
    nb_body_t *cur = pos, *next = scratch;
    for (long s = 0; s < p->steps; s++) {
        nb_step(p, cur, 0, p->n, next, vel);
        nb_body_t *t = cur;
        cur = next;
        next = t;
    }
    if (cur != pos)
        memcpy(pos, cur, (size_t)p->n * sizeof *pos);
}

void nb_print_result(const nb_param_t *p, const nb_body_t *pos, const nb_vel_t *vel)
{
    double cx = 0, cy = 0, cz = 0, ke = 0;
    for (long i = 0; i < p->n; i++) {
        cx += pos[i].m * pos[i].x;
        cy += pos[i].m * pos[i].y;
        cz += pos[i].m * pos[i].z;
        ke += 0.5 * pos[i].m * (vel[i].x * vel[i].x + vel[i].y * vel[i].y + vel[i].z * vel[i].z);
    }
    app_result("centre=(%.15f,%.15f,%.15f) kinetic=%.15e", cx, cy, cz, ke);
}

int nb_compare(const nb_param_t *p, const nb_body_t *pos, const nb_vel_t *vel, const nb_body_t *rpos,
               const nb_vel_t *rvel, char *msg, unsigned long msglen)
{
    long bad = 0, first = -1;
    double maxd = 0;
    for (long i = 0; i < p->n; i++) {
        const double a[6] = {pos[i].x, pos[i].y, pos[i].z, vel[i].x, vel[i].y, vel[i].z};
        const double b[6] = {rpos[i].x, rpos[i].y, rpos[i].z, rvel[i].x, rvel[i].y, rvel[i].z};
        if (memcmp(a, b, sizeof a) || pos[i].m != rpos[i].m) {
            bad++;
            if (first < 0)
                first = i;
            double d = app_max_rel_diff(a, b, 6);
            maxd = d > maxd ? d : maxd;
        }
    }
    if (bad)
        snprintf(msg, msglen,
                 "%ld of %ld bodies differ from the sequential run (first %ld, max rel diff %.3g; "
                 "tolerance 0, bit-exact)",
                 bad, p->n, first, maxd);
    else
        snprintf(msg, msglen, "%ld bodies after %ld steps bit-exact (tolerance 0)", p->n, p->steps);
    return bad == 0;
}
