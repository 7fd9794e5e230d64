/*
 * water_kernel.c - the sequential molecular dynamics shared by every version,
 * and the report and check the parallel versions end with.
 *
 * Sizes (water_*.c pick them with --size):
 *   small   343 molecules (7^3), 4 steps   (milliseconds: runs under ctest)
 *   medium 4096 molecules (16^3), 30 steps (about 7 s sequentially on the
 *          2-core test machine)
 *   paper  1728 molecules (12^3), 5 steps  (seed 002 table 3: "1728 mols
 *          5 steps", SPLASH WATER-NSQUARED's input)
 * Reduced units: O-O sigma = epsilon = 1, masses O = 16, H = 1, lattice
 * spacing 1.15, time step 0.002, cutoff = half the box.
 */
#include "water_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define SPACING 1.15
#define M_O     16.0
#define M_H     1.0
#define K_OH    500.0 /* O-H spring */
#define R_OH    0.33
#define K_HH    100.0  /* H-H spring (keeps the angle) */
#define R_HH    0.5222 /* 2 * 0.33 * sin(52.25 deg) */
#define TEMP    0.5

static const double mass[3] = {M_O, M_H, M_H};
/* Lennard-Jones 4*eps and sigma^2 per atom-type pair: [O/H][O/H] */
static const double lj_4eps[2][2] = {{4.0 * 1.0, 4.0 * 0.1}, {4.0 * 0.1, 4.0 * 0.05}};
static const double lj_sig2[2][2] = {{1.0, 0.25}, {0.25, 0.09}};

void water_prob_init(water_prob *p, int n, int steps)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->steps = steps;
    p->dt = 0.002;
    p->side = 1;
    while (p->side * p->side * p->side < n)
        p->side++;
    p->box = SPACING * p->side;
    p->cutoff = 0.5 * p->box;
    p->cutoff2 = p->cutoff * p->cutoff;
    p->seed = 27182818;
}

void water_init_mol(const water_prob *p, int i, double *pos, double *vel)
{
    app_rng_t r;
    app_rng_seed(&r, p->seed + (uint64_t)i);
    int s = p->side;
    double o[3] = {SPACING * (i % s), SPACING * ((i / s) % s), SPACING * (i / (s * s))};
    for (int c = 0; c < 3; c++)
        o[c] += 0.1 * (app_rng_double(&r) - 0.5);
    /* a random unit vector a and a unit vector b perpendicular to it */
    double a[3], b[3], t[3];
    double na, nb;
    do {
        for (int c = 0; c < 3; c++)
            a[c] = 2 * app_rng_double(&r) - 1;
        na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    } while (na < 0.1 || na > 1);
    do {
        for (int c = 0; c < 3; c++)
            t[c] = 2 * app_rng_double(&r) - 1;
        b[0] = a[1] * t[2] - a[2] * t[1];
        b[1] = a[2] * t[0] - a[0] * t[2];
        b[2] = a[0] * t[1] - a[1] * t[0];
        nb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    } while (nb < 0.1);
    double ca = cos(52.25 * M_PI / 180) * R_OH, sa = sin(52.25 * M_PI / 180) * R_OH;
    for (int c = 0; c < 3; c++) {
        a[c] /= na;
        b[c] /= nb;
        pos[c] = o[c];
        pos[3 + c] = o[c] + ca * a[c] + sa * b[c];
        pos[6 + c] = o[c] + ca * a[c] - sa * b[c];
    }
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            vel[3 * k + c] = sqrt(12.0 * TEMP / mass[k]) * (app_rng_double(&r) - 0.5);
}

static double spring(const double *x, const double *y, double *fx, double *fy, double k, double r0)
{
    double d[3] = {y[0] - x[0], y[1] - x[1], y[2] - x[2]};
    double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double e = r - r0, g = k * e / r; /* force on x is +g d */
    for (int c = 0; c < 3; c++) {
        fx[c] += g * d[c];
        fy[c] -= g * d[c];
    }
    return 0.5 * k * e * e;
}

double water_intra(const double *pos, double *f)
{
    for (int k = 0; k < WATER_NV; k++)
        f[k] = 0;
    double e = spring(pos, pos + 3, f, f + 3, K_OH, R_OH);
    e += spring(pos, pos + 6, f, f + 6, K_OH, R_OH);
    e += spring(pos + 3, pos + 6, f + 3, f + 6, K_HH, R_HH);
    return e;
}

double water_pair(const water_prob *p, const double *pi, const double *pj, double *fi, double *fj)
{
    double s[3], d2 = 0;
    for (int c = 0; c < 3; c++) {
        double d = pj[c] - pi[c];
        s[c] = -p->box * rint(d / p->box); /* image shift applied to j */
        d += s[c];
        d2 += d * d;
    }
    if (d2 >= p->cutoff2)
        return 0;
    double e = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int ta = a > 0, tb = b > 0;
            double d[3], r2 = 0;
            for (int c = 0; c < 3; c++) {
                d[c] = pj[3 * b + c] + s[c] - pi[3 * a + c];
                r2 += d[c] * d[c];
            }
            double q = lj_sig2[ta][tb] / r2, q3 = q * q * q;
            e += lj_4eps[ta][tb] * (q3 * q3 - q3);
            /* force on j along d: 4 eps (12 q^6 - 6 q^3) / r^2 */
            double g = lj_4eps[ta][tb] * (12.0 * q3 * q3 - 6.0 * q3) / r2;
            for (int c = 0; c < 3; c++) {
                fj[3 * b + c] += g * d[c];
                fi[3 * a + c] -= g * d[c];
            }
        }
    return e;
}

void water_kick(const water_prob *p, double *vel, const double *f)
{
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            vel[3 * k + c] += 0.5 * p->dt * f[3 * k + c] / mass[k];
}

void water_drift(const water_prob *p, double *pos, const double *vel)
{
    for (int k = 0; k < WATER_NV; k++)
        pos[k] += p->dt * vel[k];
}

double water_kinetic(const double *vel)
{
    double e = 0;
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            e += 0.5 * mass[k] * vel[3 * k + c] * vel[3 * k + c];
    return e;
}

static double inter_all(const water_prob *p, const double *pos, double *frc)
{
    int n = p->n;
    double e = 0;
    for (int i = 0; i < n; i++) {
        int np = water_npartners(n, i);
        for (int k = 1; k <= np; k++) {
            int j = (i + k) % n;
            e += water_pair(p, pos + (size_t)i * WATER_NV, pos + (size_t)j * WATER_NV,
                            frc + (size_t)i * WATER_NV, frc + (size_t)j * WATER_NV);
        }
    }
    return e;
}

void water_seq_run(const water_prob *p, double *pos, double *frc, double *energy)
{
    int n = p->n;
    double *vel = malloc(sizeof(double) * WATER_NV * (size_t)n);
    if (!vel)
        abort();
    for (int i = 0; i < n; i++)
        water_init_mol(p, i, pos + (size_t)i * WATER_NV, vel + (size_t)i * WATER_NV);
    double pe = 0, ke = 0;
    for (int i = 0; i < n; i++) {
        pe += water_intra(pos + (size_t)i * WATER_NV, frc + (size_t)i * WATER_NV);
        ke += water_kinetic(vel + (size_t)i * WATER_NV);
    }
    pe += inter_all(p, pos, frc);
    energy[0] = pe;
    energy[1] = ke;
    for (int s = 1; s <= p->steps; s++) {
        pe = 0;
        for (int i = 0; i < n; i++) {
            double *x = pos + (size_t)i * WATER_NV, *v = vel + (size_t)i * WATER_NV,
                   *f = frc + (size_t)i * WATER_NV;
            water_kick(p, v, f);
            water_drift(p, x, v);
            pe += water_intra(x, f);
        }
        pe += inter_all(p, pos, frc);
        ke = 0;
        for (int i = 0; i < n; i++) {
            water_kick(p, vel + (size_t)i * WATER_NV, frc + (size_t)i * WATER_NV);
            ke += water_kinetic(vel + (size_t)i * WATER_NV);
        }
        energy[2 * s] = pe;
        energy[2 * s + 1] = ke;
    }
    free(vel);
}

void water_report(const char *version, int procs, int threads, const water_prob *p, const double *energy,
                  double secs)
{
    int steps = p->steps;
    if (threads > 0)
        app_header("water", version, procs, "n=%d steps=%d threads=%d", p->n, steps, threads);
    else
        app_header("water", version, procs, "n=%d steps=%d", p->n, steps);
    app_time(secs);
    app_result("energy: potential %.12e kinetic %.12e total %.12e (initial total %.12e)", energy[2 * steps],
               energy[2 * steps + 1], energy[2 * steps] + energy[2 * steps + 1], energy[0] + energy[1]);
}

int water_check(const water_prob *p, double *pos, const double *frc, const double *energy, int fail)
{
    int steps = p->steps;
    size_t nv = (size_t)p->n * WATER_NV;
    double *rpos = malloc(sizeof(double) * nv), *rfrc = malloc(sizeof(double) * nv);
    double *ren = malloc(sizeof(double) * 2 * (size_t)(steps + 1));
    int status = -1;
    if (!rpos || !rfrc || !ren)
        goto out;
    if (fail)
        pos[nv / 2] += 1e-6;
    water_seq_run(p, rpos, rfrc, ren);
    double dp = app_max_rel_diff(pos, rpos, nv), df = app_max_rel_diff(frc, rfrc, nv);
    double de = 0;
    for (int k = 0; k < 2 * (steps + 1); k++) {
        double d = fabs(energy[k] - ren[k]) / fmax(fabs(ren[k]), 1.0);
        de = d > de || isnan(d) ? d : de;
    }
    status = app_verdict(dp <= WATER_TOL && df <= WATER_TOL && de <= WATER_TOL,
                         "positions, forces and %d energies vs sequential: max rel diff %.3g, "
                         "%.3g, %.3g (tolerance %.0e)",
                         2 * (steps + 1), dp, df, de, WATER_TOL);
out:
    free(rpos);
    free(rfrc);
    free(ren);
    return status;
}

int water_check_blocks(const water_prob *p, double *const *pos, double *const *frc, const long *lo, int np,
                       const double *energy, int fail)
{
    size_t nv = (size_t)p->n * WATER_NV;
    double *ppos = malloc(sizeof(double) * nv), *pfrc = malloc(sizeof(double) * nv);
    int status = -1;
    if (ppos && pfrc) {
        for (int r = 0; r < np; r++) {
            size_t bytes = sizeof(double) * WATER_NV * (size_t)(lo[r + 1] - lo[r]);
            memcpy(ppos + (size_t)lo[r] * WATER_NV, pos[r], bytes);
            memcpy(pfrc + (size_t)lo[r] * WATER_NV, frc[r], bytes);
        }
        status = water_check(p, ppos, pfrc, energy, fail);
    }
    free(ppos);
    free(pfrc);
    return status;
}
