/* ep_mpi.c - EP with MPI: each rank a block range, then MPI_Reduce to rank 0
 * (with a user operation: the sums are 128-bit fixed point). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "ep_kernel.h"

/* MPI buffers need not be 16-byte aligned: copy through aligned locals. */
static void reduce_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) {
        ep_result_t a, b;
        memcpy(&a, (char *)in + i * sizeof a, sizeof a);
        memcpy(&b, (char *)inout + i * sizeof b, sizeof b);
        ep_add(&b, &a);
        memcpy((char *)inout + i * sizeof b, &b, sizeof b);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    ep_param_t p;
    ep_params(argc, argv, &p);
    int inject = (int)app_opt_long(argc, argv, "inject-error", 0);
    if (me == 0)
        app_header("ep", "mpi", np, "m=%d mk=%d pairs=%ld", p.m, p.mk, 1L << p.m);

    MPI_Datatype rtype;
    MPI_Type_contiguous((int)sizeof(ep_result_t), MPI_BYTE, &rtype);
    MPI_Type_commit(&rtype);
    MPI_Op op;
    MPI_Op_create(reduce_op, 1, &op);
    long b0, b1;
    app_block(ep_nblocks(&p), np, me, &b0, &b1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = app_now();
    ep_result_t mine = {0}, total = {0};
    ep_blocks(&p, b0, b1, &mine);
    MPI_Reduce(&mine, &total, 1, rtype, op, 0, MPI_COMM_WORLD);
    double t1 = app_now();

    int status = 0;
    if (me == 0) {
        app_time(t1 - t0);
        ep_print_result(&total);
        if (inject)
            total.q[0]++;
        ep_result_t ref = {0};
        ep_blocks(&p, 0, ep_nblocks(&p), &ref);
        char msg[256];
        int ok = ep_compare(&total, &ref, msg, sizeof msg);
        status = app_verdict(ok, "ep against the sequential kernel: %s", msg);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Type_free(&rtype);
    MPI_Finalize();
    return status;
}
