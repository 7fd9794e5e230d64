/*
 * water_omp.c - the molecular dynamics with OpenMP, in the same shape as
 * water_sdsm.c: thread t owns a block of molecules, computes the pairs
 * (i, i+1..i+n/2) of its molecules into a private accumulator and adds it to
 * the shared forces block by block under one lock per block; energies are
 * summed under a lock.  Check as in water_sdsm.c (tolerance 1e-9 relative).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "water_kernel.h"

int main(int argc, char **argv)
{
    int n = (int)app_pick(argc, argv, "n", 343, 4096, 1728);
    int steps = (int)app_pick(argc, argv, "steps", 4, 30, 5);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    if (n < 2 || steps < 1) {
        fprintf(stderr, "water: needs n >= 2 and steps >= 1\n");
        return 2;
    }
    water_prob p;
    water_prob_init(&p, n, steps);
    int nt = omp_get_max_threads();
    if (nt > n)
        nt = n;
    size_t nv = (size_t)n * WATER_NV;
    double *pos = malloc(sizeof(double) * nv), *vel = malloc(sizeof(double) * nv),
           *frc = malloc(sizeof(double) * nv);
    double *energy = calloc(2 * (size_t)(steps + 1), sizeof(double));
    long *lo = malloc(sizeof(long) * (size_t)(nt + 1));
    int *owner = malloc(sizeof(int) * (size_t)n);
    omp_lock_t *locks = malloc(sizeof(omp_lock_t) * (size_t)(nt + 1));
    if (!pos || !vel || !frc || !energy || !lo || !owner || !locks)
        return 1;
    for (int r = 0; r <= nt; r++) {
        lo[r] = (long)n * r / nt;
        omp_init_lock(&locks[r]); /* locks[nt]: the energy sums */
    }
    for (int r = 0; r < nt; r++)
        for (long j = lo[r]; j < lo[r + 1]; j++)
            owner[j] = r;
    double t0 = 0;
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num();
        long mlo = lo[me], mhi = lo[me + 1], nown = mhi - mlo;
        double *acc = calloc(nv, sizeof(double));
        long span = nown > 0 ? (mhi - 1 - mlo) + water_npartners(n, (int)(mhi - 1)) + 1 : 0;
        if (span > n)
            span = n;
        for (long i = mlo; i < mhi; i++)
            water_init_mol(&p, (int)i, pos + (size_t)i * WATER_NV, vel + (size_t)i * WATER_NV);
#pragma omp barrier
#pragma omp master
        t0 = app_now();
        for (int s = 0; s <= steps; s++) {
            double pe = 0, ke = 0;
            for (long i = mlo; i < mhi; i++) {
                double *xi = pos + (size_t)i * WATER_NV, *vi = vel + (size_t)i * WATER_NV;
                if (s > 0) {
                    water_kick(&p, vi, frc + (size_t)i * WATER_NV);
                    water_drift(&p, xi, vi);
                }
                pe += water_intra(xi, frc + (size_t)i * WATER_NV);
            }
#pragma omp barrier
            for (long k = 0; k < span; k++)
                memset(acc + (size_t)((mlo + k) % n) * WATER_NV, 0, sizeof(double) * WATER_NV);
            for (long i = mlo; i < mhi; i++) {
                int cnt = water_npartners(n, (int)i);
                for (int k = 1; k <= cnt; k++) {
                    long j = (i + k) % n;
                    pe += water_pair(&p, pos + (size_t)i * WATER_NV, pos + (size_t)j * WATER_NV,
                                     acc + (size_t)i * WATER_NV, acc + (size_t)j * WATER_NV);
                }
            }
            for (long k = 0; k < span;) {
                long j0 = (mlo + k) % n;
                int o = owner[j0];
                long cnt = lo[o + 1] - j0;
                if (cnt > span - k)
                    cnt = span - k;
                omp_set_lock(&locks[o]);
                for (long e = 0; e < cnt * WATER_NV; e++)
                    frc[(size_t)j0 * WATER_NV + (size_t)e] += acc[(size_t)j0 * WATER_NV + (size_t)e];
                omp_unset_lock(&locks[o]);
                k += cnt;
            }
            omp_set_lock(&locks[nt]);
            energy[2 * s] += pe;
            omp_unset_lock(&locks[nt]);
#pragma omp barrier
            for (long i = mlo; i < mhi; i++) {
                double *vi = vel + (size_t)i * WATER_NV;
                if (s > 0)
                    water_kick(&p, vi, frc + (size_t)i * WATER_NV);
                ke += water_kinetic(vi);
            }
            omp_set_lock(&locks[nt]);
            energy[2 * s + 1] += ke;
            omp_unset_lock(&locks[nt]);
        }
        free(acc);
    }
    double t1 = app_now();
    water_report("omp", nt, 0, &p, energy, t1 - t0);
    int status = water_check(&p, pos, frc, energy, fail);
    if (status < 0) {
        fprintf(stderr, "water: out of memory for the check\n");
        status = 1;
    }
    for (int r = 0; r <= nt; r++)
        omp_destroy_lock(&locks[r]);
    free(locks);
    free(pos);
    free(vel);
    free(frc);
    free(energy);
    free(lo);
    free(owner);
    return status;
}
