/* ep_seq.c - EP, sequential. */
#include <stdio.h>

#include "app.h"
#include "ep_kernel.h"

int main(int argc, char **argv)
{
    ep_param_t p;
    ep_params(argc, argv, &p);
    app_header("ep", "seq", 1, "m=%d mk=%d pairs=%ld", p.m, p.mk, 1L << p.m);
    ep_result_t r = {0};
    double t0 = app_now();
    ep_blocks(&p, 0, ep_nblocks(&p), &r);
    app_time(app_now() - t0);
    ep_print_result(&r);
    return 0;
}
