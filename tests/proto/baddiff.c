/*
 * baddiff.c - an invalid diff batch that travels without an acknowledgement
 * (as a barrier's diffs to its manager do) stops the job, naming its
 * sender: nobody else would learn that those writes were lost.  Rank 1
 * sends rank 0 a batch naming a page past the heap, then waits in a
 * barrier that never completes.
 */
#define PT_NAME "baddiff"
#include "pt.h"

#include "mem/diff.h"
#include "net/net.h"

int main(int argc, char **argv)
{
    sdsm_init(&argc, &argv);
    if (sdsm_nprocs() != 2)
        sdsm_abort(2, "%s needs 2 ranks", PT_NAME);
    sdsm_barrier();
    if (sdsm_rank() == 1) {
        uint32_t batch[4] = {0xfffffff0u, 8, 1, 2}; /* page, bytes, then "diff" bytes */
        sdsm_net_send(0, SDSM_MSG_DIFF, SDSM_DIFF_NOACK, 0, batch, sizeof batch, NULL, 0);
    }
    sdsm_barrier();
    printf("not stopped: %s\n", PT_NAME);
    sdsm_finalize();
    return 0;
}
