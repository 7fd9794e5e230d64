/*
 * water_sdsm.c - the molecular dynamics on sdsm (SPMD), WATER-NSQUARED style.
 *
 * Molecules are block-partitioned (app_block); rank r owns [lo_r, hi_r).
 * Shared, one block per rank homed at it: the positions and the forces of
 * its molecules.  Private: the velocities (only the owner uses them) and a
 * per-rank force accumulator.  A page holding the two energy sums is shared
 * (homed at rank 0).
 *
 * Per step:
 *   own molecules: kick, drift, intra-molecular forces (overwrite own forces)
 *   barrier
 *   inter-molecular forces for the pairs (i, i+1..i+n/2) with i owned:
 *     accumulated privately, then added to the shared forces block by block,
 *     each block under its lock (lock 16 + owner); potential energy added to
 *     the global sum under lock 1
 *   barrier
 *   own molecules: kick; kinetic energy added under lock 1
 * The force computation is done once more before the first step.
 *
 * The order in which the ranks add their partial forces (and energies)
 * depends on who gets the locks first, so the sums are rounded differently
 * from the sequential run.  Check: rank 0 runs the sequential kernel and
 * compares final positions, forces and every energy with tolerance 1e-9
 * (relative, |a-b|/max(|b|,1)); the measured difference is printed
 * (water_kernel.c: water_check_blocks).
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "water_kernel.h"

#define LOCK_ENERGY 1
#define LOCK_BLOCK  16 /* + owner rank */

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    int n = (int)app_pick(argc, argv, "n", 343, 4096, 1728);
    int steps = (int)app_pick(argc, argv, "steps", 4, 30, 5);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    if (n < 2 || steps < 1)
        sdsm_abort(2, "water: needs n >= 2 and steps >= 1");
    if (np < 1 || np > n) /* np >= 1 also tells gcc that the allocations below are sane */
        sdsm_abort(2, "water: more ranks (%d) than molecules (%d)", np, n);
    water_prob p;
    water_prob_init(&p, n, steps);

    long *lo = malloc(sizeof(long) * (size_t)(np + 1));
    for (int r = 0; r <= np; r++)
        lo[r] = (long)n * r / np;
    double **pos = malloc(sizeof(double *) * 2 * (size_t)np), **frc = pos + np;
    for (int r = 0; r < np; r++)
        pos[r] = sdsm_calloc((size_t)(lo[r + 1] - lo[r]) * WATER_NV, sizeof(double), r);
    for (int r = 0; r < np; r++)
        frc[r] = sdsm_calloc((size_t)(lo[r + 1] - lo[r]) * WATER_NV, sizeof(double), r);
    double *energy = sdsm_calloc(2 * (size_t)(steps + 1), sizeof(double), 0);

    long mlo = lo[me], mhi = lo[me + 1], nown = mhi - mlo;
    double *x = pos[me], *f = frc[me];
    double *vel = malloc(sizeof(double) * WATER_NV * (size_t)(nown > 0 ? nown : 1));
    double *acc = calloc((size_t)n * WATER_NV, sizeof(double)); /* private partial forces */
    int *owner = malloc(sizeof(int) * (size_t)n);               /* rank owning molecule j */
    if (!vel || !acc || !owner)
        sdsm_abort(1, "water: out of memory");
    for (int r = 0; r < np; r++)
        for (long j = lo[r]; j < lo[r + 1]; j++)
            owner[j] = r;
    /* Molecules our pairs reach: [mlo, mlo + span) mod n. */
    long span = nown > 0 ? (mhi - 1 - mlo) + water_npartners(n, (int)(mhi - 1)) + 1 : 0;
    if (span > n)
        span = n;

    for (long i = mlo; i < mhi; i++)
        water_init_mol(&p, (int)i, x + (size_t)(i - mlo) * WATER_NV, vel + (size_t)(i - mlo) * WATER_NV);
    sdsm_barrier();
    double t0 = sdsm_wtime();

    for (int s = 0; s <= steps; s++) {
        double pe = 0, ke = 0;
        /* own molecules: (kick, drift,) intra forces */
        for (long i = 0; i < nown; i++) {
            double *xi = x + (size_t)i * WATER_NV, *vi = vel + (size_t)i * WATER_NV;
            if (s > 0) {
                water_kick(&p, vi, f + (size_t)i * WATER_NV);
                water_drift(&p, xi, vi);
            }
            pe += water_intra(xi, f + (size_t)i * WATER_NV);
        }
        sdsm_barrier();
        /* inter-molecular forces, privately */
        for (long k = 0; k < span; k++)
            memset(acc + (size_t)((mlo + k) % n) * WATER_NV, 0, sizeof(double) * WATER_NV);
        for (long i = mlo; i < mhi; i++) {
            const double *xi = x + (size_t)(i - mlo) * WATER_NV;
            int cnt = water_npartners(n, (int)i);
            for (int k = 1; k <= cnt; k++) {
                long j = (i + k) % n;
                int o = owner[j];
                pe += water_pair(&p, xi, pos[o] + (size_t)(j - lo[o]) * WATER_NV, acc + (size_t)i * WATER_NV,
                                 acc + (size_t)j * WATER_NV);
            }
        }
        /* merge into the shared forces, one owner block at a time */
        for (long k = 0; k < span;) {
            long j0 = (mlo + k) % n;
            int o = owner[j0];
            long cnt = lo[o + 1] - j0;
            if (cnt > span - k)
                cnt = span - k;
            sdsm_lock(LOCK_BLOCK + o);
            double *dst = frc[o] + (size_t)(j0 - lo[o]) * WATER_NV;
            const double *src = acc + (size_t)j0 * WATER_NV;
            for (long e = 0; e < cnt * WATER_NV; e++)
                dst[e] += src[e];
            sdsm_unlock(LOCK_BLOCK + o);
            k += cnt;
        }
        sdsm_lock(LOCK_ENERGY);
        energy[2 * s] += pe;
        sdsm_unlock(LOCK_ENERGY);
        sdsm_barrier();
        /* own molecules: second kick, kinetic energy */
        for (long i = 0; i < nown; i++) {
            double *vi = vel + (size_t)i * WATER_NV;
            if (s > 0)
                water_kick(&p, vi, f + (size_t)i * WATER_NV);
            ke += water_kinetic(vi);
        }
        sdsm_lock(LOCK_ENERGY);
        energy[2 * s + 1] += ke;
        sdsm_unlock(LOCK_ENERGY);
    }
    sdsm_barrier();
    double t1 = sdsm_wtime();

    int status = 0;
    if (me == 0) {
        water_report("sdsm", np, 0, &p, energy, t1 - t0);
        status = water_check_blocks(&p, pos, frc, lo, np, energy, fail);
        if (status < 0)
            sdsm_abort(1, "water: out of memory for the check");
    }
    free(vel);
    free(acc);
    free(owner);
    free(pos);
    free(lo);
    sdsm_finalize();
    return status;
}
