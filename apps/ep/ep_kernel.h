/*
 * ep_kernel.h - the EP ("embarrassingly parallel") kernel shared by every
 * version: Gaussian pairs by the acceptance method, counted per annulus.
 */
#ifndef EP_KERNEL_H
#define EP_KERNEL_H

#include <stdint.h>

#define EP_NQ 10 /* annuli: pair (X,Y) counts in bin floor(max(|X|,|Y|)) */

/* Sums are kept in fixed point, units of 2^-EP_FIX_BITS, in 128-bit
 * integers: each block's sum (a double, summed from zero in the block) is
 * converted exactly (bits below 2^-64 dropped, the same way in every
 * version) and the blocks are added as integers, which is associative.  So
 * the totals do not depend on how the blocks are split or in which order the
 * parts are combined: every version matches the sequential run bit for bit. */
#define EP_FIX_BITS 64
__extension__ typedef __int128 ep_fix_t;

/* The result: 112 bytes, the whole shared data of the sdsm version. */
typedef struct ep_result {
    ep_fix_t sx, sy; /* sums of the accepted X and Y deviates, fixed point */
    long q[EP_NQ];   /* pairs per annulus */
} ep_result_t;

/* A fixed-point sum as a double. */
double ep_fix_to_double(ep_fix_t v);

/* The problem: 2^m pairs in 2^(m-mk) blocks of 2^mk pairs. */
typedef struct ep_param {
    int m, mk;
    uint64_t seed;
} ep_param_t;

static inline long ep_nblocks(const ep_param_t *p) { return 1L << (p->m - p->mk); }

/* Parameters from the command line: --size small|medium|paper, --m, --mk,
 * --seed.  Exits with a message when they are out of range. */
void ep_params(int argc, char **argv, ep_param_t *p);

/* Generate blocks [b0, b1) and add them to *acc in block order: each block
 * is summed from zero and then added, so any split of the blocks in ordered
 * runs gives the same per-block values. */
void ep_blocks(const ep_param_t *p, long b0, long b1, ep_result_t *acc);

/* acc += add (exact). */
void ep_add(ep_result_t *acc, const ep_result_t *add);

/* Compare got against the reference exactly (counts and fixed-point sums).
 * Writes a one-line description to msg; returns 1 if equal. */
int ep_compare(const ep_result_t *got, const ep_result_t *ref, char *msg, unsigned long msglen);

/* Print the result line. */
void ep_print_result(const ep_result_t *r);

#endif
