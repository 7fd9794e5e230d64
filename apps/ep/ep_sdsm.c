/*
 * ep_sdsm.c - EP on sdsm.
 *
 * The blocks of the random stream are block-distributed over the ranks; each
 * rank generates its own blocks into private memory and, once at the end,
 * adds its partial result to the shared 112-byte result under a lock (the
 * shape of the TreadMarks/JIAJIA ep of seed 002: 2 barriers, 1 lock per
 * process).  The result is homed at rank 0, which verifies it.
 */
#include <sdsm.h>
#include <stdio.h>

#include "app.h"
#include "app_sdsm.h"
#include "ep_kernel.h"

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    int me = sdsm_rank(), np = sdsm_nprocs();
    ep_param_t p;
    ep_params(argc, argv, &p);
    app_sdsm_check_t opt = app_sdsm_check_opts(argc, argv);
    if (me == 0)
        app_header("ep", "sdsm", np, "m=%d mk=%d pairs=%ld", p.m, p.mk, 1L << p.m);

    /* Element size 8: a diff carries only the changed words. */
    ep_result_t *shared = sdsm_calloc(sizeof(ep_result_t) / 8, 8, 0);
    _Static_assert(sizeof(ep_result_t) % 8 == 0, "ep_result_t is whole words");
    long b0, b1;
    app_block(ep_nblocks(&p), np, me, &b0, &b1);
    sdsm_barrier();

    double t0 = app_now();
    ep_result_t mine = {0};
    ep_blocks(&p, b0, b1, &mine);
    sdsm_lock(0);
    ep_add(shared, &mine);
    sdsm_unlock(0);
    sdsm_barrier();
    double t1 = app_now();

    int status = 0;
    if (me == 0 && !opt.check) {
        app_time(t1 - t0);
    } else if (me == 0) {
        app_time(t1 - t0);
        ep_result_t got = *shared;
        ep_print_result(&got);
        if (opt.inject)
            got.q[0]++;
        ep_result_t ref = {0};
        ep_blocks(&p, 0, ep_nblocks(&p), &ref);
        char msg[256];
        int ok = ep_compare(&got, &ref, msg, sizeof msg);
        status = app_verdict(ok, "ep against the sequential kernel: %s", msg);
    }
    sdsm_finalize();
    return status;
}
