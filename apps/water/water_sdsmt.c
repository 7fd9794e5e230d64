/*
 * water_sdsmt.c - the molecular dynamics on sdsm with compute threads:
 * P ranks x T threads (sdsmrun --threads T).
 *
 * The shared data are laid out as in water_sdsm.c: positions and forces in
 * one block per rank, homed at it, and the energy page homed at rank 0.
 * Thread id (sdsm_thread_id, rank-major) owns molecules app_block(n, P x T,
 * id), which lie inside its rank's block, and runs water_sdsm.c's step on
 * them: its own velocities, its own private force accumulator and
 * sdsm_barrier (every thread of every rank).  The threads of a rank share
 * its copy of the other ranks' positions: a page is fetched once per rank,
 * and the rank's own molecules do not travel between its threads.
 *
 * What the threads of one process can do that processes cannot: combine
 * their results in memory before they go to the shared data.  After the
 * pair forces the rank's threads meet (sdsm_group_barrier) and split the
 * owner blocks their accumulators reach between them; each adds its blocks'
 * sums over all the rank's accumulators into the shared forces under the
 * block's lock (16 + owner), so a block lock is taken once per rank and
 * step, not once per thread.  Likewise one thread per rank adds the rank's
 * potential and kinetic energies under the energy lock.
 *
 * As in water_sdsm.c the order of the locked sums depends on who gets the
 * locks first; the check (rank 0's main thread, after the join) compares
 * positions, forces and energies with the sequential kernel within 1e-9.
 */
#include <sdsm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_sdsm.h"
#include "water_kernel.h"

#define LOCK_ENERGY 1
#define LOCK_BLOCK  16 /* + owner rank */

/* What the threads of a rank share (set by the main thread). */
static struct {
    water_prob p;
    int n, steps, np;
    long *lo;            /* rank r's molecules: [lo[r], lo[r+1]) */
    int *owner;          /* rank owning molecule j */
    double **pos, **frc; /* per rank, shared */
    double *energy;      /* shared */
    double t0, t1;
    int T;           /* compute threads per rank */
    double **acc;    /* per thread of this rank: its private force accumulator */
    double *pe, *ke; /* per thread of this rank: its energies of the step */
} G;

/* The molecules the pairs of rank me's threads reach: [*rlo, *rlo + return)
 * mod n.  Each thread's accumulator is zero outside its own part of it. */
static long rank_reach(int me, long *rlo)
{
    long n = G.n, lo, hi, reach = 0;
    int nt = G.np * G.T;
    app_block(n, nt, me * G.T, rlo, &hi);
    for (int t = 0; t < G.T; t++) {
        app_block(n, nt, me * G.T + t, &lo, &hi);
        if (hi > lo) {
            long end = (hi - 1 - *rlo) + water_npartners((int)n, (int)(hi - 1)) + 1;
            reach = end > reach ? end : reach;
        }
    }
    return reach < n ? reach : n;
}

/* Every compute thread of this rank has got here. */
static void rank_meet(void)
{
    int rc = sdsm_group_barrier(0);
    if (rc)
        sdsm_abort(1, "water: sdsm_group_barrier: %s", sdsm_strerror(rc));
}

/* Add the sum of the rank's accumulators over its reach into the shared
 * forces, one owner block at a time, each under its lock: thread lt of the
 * rank takes the blocks lt, lt + T, ...  Called once all the rank's
 * accumulators are complete (rank_meet). */
static void merge_forces(int lt, long rlo, long reach)
{
    long n = G.n;
    int seg = 0;
    for (long k = 0; k < reach; seg++) {
        long j0 = (rlo + k) % n;
        int o = G.owner[j0];
        long cnt = G.lo[o + 1] - j0;
        if (cnt > reach - k)
            cnt = reach - k;
        k += cnt;
        if (seg % G.T != lt)
            continue;
        sdsm_lock(LOCK_BLOCK + o);
        double *dst = G.frc[o] + (size_t)(j0 - G.lo[o]) * WATER_NV;
        for (long e = 0; e < cnt * WATER_NV; e++) {
            double sum = 0;
            for (int t = 0; t < G.T; t++)
                sum += G.acc[t][(size_t)j0 * WATER_NV + (size_t)e];
            dst[e] += sum;
        }
        sdsm_unlock(LOCK_BLOCK + o);
    }
}

/* Thread 0 of the rank adds its threads' energies, in thread order, to
 * *total under the energy lock (after rank_meet). */
static void merge_energy(int lt, const double *part, double *total)
{
    if (lt != 0)
        return;
    double sum = 0;
    for (int t = 0; t < G.T; t++)
        sum += part[t];
    sdsm_lock(LOCK_ENERGY);
    *total += sum;
    sdsm_unlock(LOCK_ENERGY);
}

static void *water_thread(void *arg)
{
    (void)arg;
    int id = sdsm_thread_id(), me = sdsm_rank(), n = G.n, lt = id % G.T;
    long mlo, mhi, rlo;
    app_block(n, sdsm_thread_count(), id, &mlo, &mhi);
    long nown = mhi - mlo;
    double *x = G.pos[me] + (size_t)(mlo - G.lo[me]) * WATER_NV;
    double *f = G.frc[me] + (size_t)(mlo - G.lo[me]) * WATER_NV;
    double *vel = malloc(sizeof(double) * WATER_NV * (size_t)(nown > 0 ? nown : 1));
    double *acc = calloc((size_t)n * WATER_NV, sizeof(double)); /* private partial forces */
    if (!vel || !acc)
        sdsm_abort(1, "water: out of memory");
    /* Molecules our pairs reach: [mlo, mlo + span) mod n. */
    long span = nown > 0 ? (mhi - 1 - mlo) + water_npartners(n, (int)(mhi - 1)) + 1 : 0;
    if (span > n)
        span = n;
    long reach = rank_reach(me, &rlo);
    G.acc[lt] = acc; /* the rank's other threads read it after the barrier below */

    for (long i = mlo; i < mhi; i++)
        water_init_mol(&G.p, (int)i, x + (size_t)(i - mlo) * WATER_NV, vel + (size_t)(i - mlo) * WATER_NV);
    sdsm_barrier();
    if (id == 0)
        G.t0 = sdsm_wtime();

    for (int s = 0; s <= G.steps; s++) {
        double pe = 0, ke = 0;
        /* own molecules: (kick, drift,) intra forces */
        for (long i = 0; i < nown; i++) {
            double *xi = x + (size_t)i * WATER_NV, *vi = vel + (size_t)i * WATER_NV;
            if (s > 0) {
                water_kick(&G.p, vi, f + (size_t)i * WATER_NV);
                water_drift(&G.p, xi, vi);
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
                int o = G.owner[j];
                pe += water_pair(&G.p, xi, G.pos[o] + (size_t)(j - G.lo[o]) * WATER_NV,
                                 acc + (size_t)i * WATER_NV, acc + (size_t)j * WATER_NV);
            }
        }
        G.pe[lt] = pe;
        rank_meet();
        merge_forces(lt, rlo, reach);
        merge_energy(lt, G.pe, &G.energy[2 * s]);
        sdsm_barrier();
        /* own molecules: second kick, kinetic energy */
        for (long i = 0; i < nown; i++) {
            double *vi = vel + (size_t)i * WATER_NV;
            if (s > 0)
                water_kick(&G.p, vi, f + (size_t)i * WATER_NV);
            ke += water_kinetic(vi);
        }
        G.ke[lt] = ke;
        rank_meet();
        merge_energy(lt, G.ke, &G.energy[2 * s + 1]);
    }
    sdsm_barrier();
    if (id == 0)
        G.t1 = sdsm_wtime();
    free(vel);
    free(acc);
    return NULL;
}

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = G.np = sdsm_nprocs();
    int n = G.n = (int)app_pick(argc, argv, "n", 343, 4096, 1728);
    int steps = G.steps = (int)app_pick(argc, argv, "steps", 4, 30, 5);
    int fail = (int)app_opt_long(argc, argv, "fail", 0);
    if (n < 2 || steps < 1)
        sdsm_abort(2, "water: needs n >= 2 and steps >= 1");
    if (sdsm_thread_count() > n)
        sdsm_abort(2, "water: more threads (%d) than molecules (%d)", sdsm_thread_count(), n);
    water_prob_init(&G.p, n, steps);

    G.lo = malloc(sizeof(long) * (size_t)(np + 1));
    G.owner = malloc(sizeof(int) * (size_t)n);
    G.pos = malloc(sizeof(double *) * 2 * (size_t)np);
    if (!G.lo || !G.owner || !G.pos)
        sdsm_abort(1, "water: out of memory");
    G.frc = G.pos + np;
    for (int r = 0; r <= np; r++)
        G.lo[r] = (long)n * r / np;
    for (int r = 0; r < np; r++)
        G.pos[r] = sdsm_calloc((size_t)(G.lo[r + 1] - G.lo[r]) * WATER_NV, sizeof(double), r);
    for (int r = 0; r < np; r++)
        G.frc[r] = sdsm_calloc((size_t)(G.lo[r + 1] - G.lo[r]) * WATER_NV, sizeof(double), r);
    G.energy = sdsm_calloc(2 * (size_t)(steps + 1), sizeof(double), 0);
    G.T = app_sdsm_threads();
    G.acc = calloc((size_t)G.T, sizeof *G.acc);
    G.pe = calloc((size_t)G.T, sizeof *G.pe);
    G.ke = calloc((size_t)G.T, sizeof *G.ke);
    if (!G.acc || !G.pe || !G.ke)
        sdsm_abort(1, "water: out of memory");
    for (int r = 0; r < np; r++)
        for (long j = G.lo[r]; j < G.lo[r + 1]; j++)
            G.owner[j] = r;

    app_sdsm_run_threads(water_thread, NULL);

    int status = 0;
    if (me == 0) { /* after the join: positions, forces and energies vs sequential */
        water_report("sdsmt", np, G.T, &G.p, G.energy, G.t1 - G.t0);
        status = water_check_blocks(&G.p, G.pos, G.frc, G.lo, np, G.energy, fail);
        if (status < 0)
            sdsm_abort(1, "water: out of memory for the check");
    }
    free(G.acc), free(G.pe), free(G.ke);
    free(G.owner);
    free(G.pos);
    free(G.lo);
    sdsm_finalize();
    return status;
}
