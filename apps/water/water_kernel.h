/*
 * water_kernel.h - a simplified molecular dynamics of rigid-ish three-atom
 * molecules in the shape of SPLASH WATER-NSQUARED, plain C.
 *
 * Each molecule is O, H1, H2 (9 doubles of positions, velocities, forces:
 * atom a, coordinate c at [3 * a + c]).  Intra-molecular forces: harmonic
 * O-H and H-H springs.  Inter-molecular forces: if the minimum-image O-O
 * distance of two molecules is below the cutoff (half the box, as in
 * WATER-NSQUARED), all nine atom pairs interact through Lennard-Jones terms
 * (per atom-type pair epsilon/sigma), with the image shift of the O-O vector.
 * Every molecule i interacts with the next half of the molecules
 * (j = i+1 .. i+n/2, wrapping), so each pair is computed exactly once.
 * Integration: velocity Verlet.
 */
#ifndef WATER_KERNEL_H
#define WATER_KERNEL_H

#include <stdint.h>

typedef struct {
    int n, steps;
    double dt, box, cutoff, cutoff2;
    int side; /* molecules start on a side^3 lattice */
    uint64_t seed;
} water_prob;

#define WATER_NV 9 /* doubles per molecule */

void water_prob_init(water_prob *p, int n, int steps);

/* Initial position and velocity of molecule i. */
void water_init_mol(const water_prob *p, int i, double *pos, double *vel);

/* Sets f (9 doubles) to the intra-molecular forces; returns their energy. */
double water_intra(const double *pos, double *f);

/* Number of partners of molecule i: they are (i + k) % n for k = 1..count. */
static inline int water_npartners(int n, int i) { return (n - 1) / 2 + ((n % 2 == 0 && i < n / 2) ? 1 : 0); }

/* Interaction of molecules i and j: adds the forces to fi and fj and returns
 * the energy (0 beyond the cutoff). */
double water_pair(const water_prob *p, const double *pi, const double *pj, double *fi, double *fj);

/* v += dt/2 * f / m */
void water_kick(const water_prob *p, double *vel, const double *f);
/* pos += dt * v */
void water_drift(const water_prob *p, double *pos, const double *vel);
/* Kinetic energy of one molecule. */
double water_kinetic(const double *vel);

/*
 * The sequential algorithm.  pos, frc: n * 9 doubles (the final state);
 * energy: 2 * (steps + 1) doubles, {potential, kinetic} after the initial
 * force computation and after every step.
 */
void water_seq_run(const water_prob *p, double *pos, double *frc, double *energy);

/*
 * The end of the parallel versions, in one process after the timed part.
 * water_report prints the header ("n=<n> steps=<steps>", then
 * " threads=<threads>" if threads > 0), the time and the energies.
 * water_check compares the final positions and forces (n * WATER_NV each,
 * whole) and the 2 (steps + 1) energies with the sequential kernel, within
 * WATER_TOL, and prints the verdict; fail (the check's own test) first moves
 * one position.  water_check_blocks does the same for positions and forces
 * in per-rank blocks (rank r's molecules [lo[r], lo[r+1]) at pos[r],
 * frc[r]).  The checks return the exit status, or -1 when out of memory
 * (the caller says so its own way).
 */
#define WATER_TOL 1e-9 /* the sums' order differs from the sequential run's */

void water_report(const char *version, int procs, int threads, const water_prob *p, const double *energy,
                  double secs);
int water_check(const water_prob *p, double *pos, const double *frc, const double *energy, int fail);
int water_check_blocks(const water_prob *p, double *const *pos, double *const *frc, const long *lo, int np,
                       const double *energy, int fail);

#endif
