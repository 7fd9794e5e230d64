/*
 * nbody_kernel.h - the O(n^2) gravitational N-body step shared by every
 * version.
 */
#ifndef NBODY_KERNEL_H
#define NBODY_KERNEL_H

/* 32 bytes: 128 bodies per 4 KB page. */
typedef struct nb_body {
    double x, y, z, m;
} nb_body_t;

typedef struct nb_vel {
    double x, y, z, pad;
} nb_vel_t;

typedef struct nb_param {
    long n, steps;
    double dt, eps2;
    unsigned long seed;
} nb_param_t;

/* --size small|medium|paper, --n, --steps, --seed.  Exits on bad values. */
void nb_params(int argc, char **argv, nb_param_t *p);

/* Initial state of body i (positions in the unit cube, equal masses summing
 * to 1, small random velocities): pos and vel of all n bodies. */
void nb_init(const nb_param_t *p, nb_body_t *pos, nb_vel_t *vel);

/*
 * One step for bodies [lo, hi): reads the positions of all n bodies in cur,
 * writes the new positions of body i to next[i - lo] and updates vel[i - lo].
 * Body i's acceleration is summed over j = 0 .. n-1 in that order, so the
 * result for a body does not depend on how the bodies are split.
 */
void nb_step(const nb_param_t *p, const nb_body_t *cur, long lo, long hi, nb_body_t *next, nb_vel_t *vel);

/* The whole run sequentially: pos and vel hold the initial state on entry
 * and the final one on return (pos is swapped with the scratch array as
 * needed; scratch holds n bodies). */
void nb_run(const nb_param_t *p, nb_body_t *pos, nb_vel_t *vel, nb_body_t *scratch);

/* Print the result line (centre of mass and kinetic energy). */
void nb_print_result(const nb_param_t *p, const nb_body_t *pos, const nb_vel_t *vel);

/* Compare positions and velocities bit for bit; a one-line description in
 * msg.  Returns 1 if identical. */
int nb_compare(const nb_param_t *p, const nb_body_t *pos, const nb_vel_t *vel, const nb_body_t *rpos,
               const nb_vel_t *rvel, char *msg, unsigned long msglen);

#endif
