/*
 * main.c - the program's entry: start the job, then run main on rank 0.
 * (Minimal: the team comes with the libgomp ABI.)
 */
#include <stdlib.h>

#include "omp_int.h"
#include "sdsm.h"

int sdsm_omp_main(int argc, char **argv, char **envp, int (*real_main)(int, char **, char **))
{
    sdsm_omp_boot(&argc, &argv);
    int status = 0;
    if (sdsm_rank() == 0)
        status = real_main(argc, argv, envp);
    sdsm_finalize();
    return status;
}
