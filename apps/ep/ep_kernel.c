/*
 * ep_kernel.c - the EP kernel (NAS Parallel Benchmarks' EP shape, written
 * from its description in seeds 002/004, not from the NPB source).
 *
 * 2^m pairs (u1, u2) of uniform deviates in [0, 1) are drawn from one
 * stream; x = 2 u1 - 1, y = 2 u2 - 1 is accepted when t = x^2 + y^2 is in
 * (0, 1], and then X = x sqrt(-2 ln t / t), Y = y sqrt(-2 ln t / t) are
 * independent Gaussian deviates (Marsaglia's polar method).  The kernel
 * counts the pairs per square annulus l = floor(max(|X|, |Y|)) (10 bins)
 * and sums X and Y.
 *
 * The stream is app_rng (splitmix64) from one seed.  Its state advances by
 * a constant per draw, so the state at any position is computed directly:
 * block b of 2^mk pairs starts 2 * 2^mk * b draws into the stream.  Every
 * version, split any way, therefore draws exactly the numbers the
 * sequential program draws.  The X and Y sums are accumulated per block in
 * double and added across blocks in 128-bit fixed point (ep_kernel.h), so
 * the totals are bit-identical however the blocks are split: every version
 * is compared exactly (tolerance 0), counts and sums.
 *
 * Sizes (m = log2 pairs, mk = log2 pairs per block):
 *   small   m=20 mk=10   (1 M pairs, ~20 ms)
 *   medium  m=29 mk=10   (537 M pairs, ~6 s sequentially here)
 *   paper   m=28 mk=10   (seed 002 table 3: "ep M=28, MK=10", i.e. NPB
 *                         class A; MK=10 read as 2^10 pairs per block)
 */
#include "ep_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#define EP_GOLDEN 0x9E3779B97F4A7C15ull /* app_rng's state increment */

void ep_params(int argc, char **argv, ep_param_t *p)
{
    p->m = (int)app_pick(argc, argv, "m", 20, 29, 28);
    p->mk = (int)app_pick(argc, argv, "mk", 10, 10, 10);
    p->seed = (uint64_t)app_opt_long(argc, argv, "seed", 314159265);
    if (p->m < 1 || p->m > 40 || p->mk < 0 || p->mk > p->m) {
        fprintf(stderr, "ep: need 1 <= m <= 40 and 0 <= mk <= m (got m=%d mk=%d)\n", p->m, p->mk);
        exit(2);
    }
}

void ep_blocks(const ep_param_t *p, long b0, long b1, ep_result_t *acc)
{
    const long pairs = 1L << p->mk;
    app_rng_t base;
    app_rng_seed(&base, p->seed);
    for (long b = b0; b < b1; b++) {
        app_rng_t r = base;
        r.s += (uint64_t)b * (uint64_t)(2 * pairs) * EP_GOLDEN; /* jump ahead */
        double sx = 0, sy = 0;
        long q[EP_NQ] = {0};
        for (long k = 0; k < pairs; k++) {
            double x = 2.0 * app_rng_double(&r) - 1.0;
            double y = 2.0 * app_rng_double(&r) - 1.0;
            double t = x * x + y * y;
            if (t <= 1.0 && t > 0.0) {
                double f = sqrt(-2.0 * log(t) / t);
                double gx = x * f, gy = y * f;
                double a = fmax(fabs(gx), fabs(gy));
                int l = a < EP_NQ - 1 ? (int)a : EP_NQ - 1;
                q[l]++;
                sx += gx;
                sy += gy;
            }
        }
        acc->sx += (ep_fix_t)ldexp(sx, EP_FIX_BITS); /* |sx| < 1024 * 13 < 2^14: no overflow */
        acc->sy += (ep_fix_t)ldexp(sy, EP_FIX_BITS);
        for (int l = 0; l < EP_NQ; l++)
            acc->q[l] += q[l];
    }
}

void ep_add(ep_result_t *acc, const ep_result_t *add)
{
    acc->sx += add->sx;
    acc->sy += add->sy;
    for (int l = 0; l < EP_NQ; l++)
        acc->q[l] += add->q[l];
}

double ep_fix_to_double(ep_fix_t v) { return ldexp((double)v, -EP_FIX_BITS); }

static double rel(ep_fix_t a, ep_fix_t b)
{
    double db = ep_fix_to_double(b);
    return fabs(ep_fix_to_double(a - b)) / fmax(fabs(db), 1e-300);
}

int ep_compare(const ep_result_t *got, const ep_result_t *ref, char *msg, unsigned long msglen)
{
    int bad_q = 0;
    for (int l = 0; l < EP_NQ; l++)
        bad_q += got->q[l] != ref->q[l];
    int bad_s = (got->sx != ref->sx) + (got->sy != ref->sy);
    double d = fmax(rel(got->sx, ref->sx), rel(got->sy, ref->sy));
    snprintf(msg, msglen,
             "%d of %d annulus counts and %d of 2 sums differ (max rel diff of sx, sy %.3g; "
             "tolerance 0: sums are exact in 2^-%d fixed point)",
             bad_q, EP_NQ, bad_s, d, EP_FIX_BITS);
    return !bad_q && !bad_s;
}

void ep_print_result(const ep_result_t *r)
{
    long total = 0;
    char qs[256];
    size_t o = 0;
    for (int l = 0; l < EP_NQ; l++) {
        total += r->q[l];
        o += (size_t)snprintf(qs + o, sizeof qs - o, "%s%ld", l ? "," : "", r->q[l]);
    }
    app_result("sx=%.15e sy=%.15e pairs=%ld q=%s", ep_fix_to_double(r->sx), ep_fix_to_double(r->sy), total,
               qs);
}
