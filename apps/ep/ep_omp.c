/* ep_omp.c - EP with OpenMP: each thread a block range, one critical update. */
#include <omp.h>
#include <stdio.h>

#include "app.h"
#include "ep_kernel.h"

int main(int argc, char **argv)
{
    ep_param_t p;
    ep_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    int nt = omp_get_max_threads();
    app_header("ep", "omp", nt, "m=%d mk=%d pairs=%ld", p.m, p.mk, 1L << p.m);

    ep_result_t total = {0};
    double t0 = app_now();
#pragma omp parallel num_threads(nt)
    {
        long b0, b1;
        app_block(ep_nblocks(&p), omp_get_num_threads(), omp_get_thread_num(), &b0, &b1);
        ep_result_t mine = {0};
        ep_blocks(&p, b0, b1, &mine);
#pragma omp critical
        ep_add(&total, &mine);
    }
    app_time(app_now() - t0);
    ep_print_result(&total);
    if (inject)
        total.q[0]++;
    ep_result_t ref = {0};
    ep_blocks(&p, 0, ep_nblocks(&p), &ref);
    char msg[256];
    int ok = ep_compare(&total, &ref, msg, sizeof msg);
    return app_verdict(ok, "ep against the sequential kernel: %s", msg);
}
