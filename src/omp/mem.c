/*
 * mem.c - where an OpenMP program's shared data lives (see omp_int.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "omp_int.h"
#include "sdsm.h"

void sdsm_omp_boot(int *argc, char ***argv)
{
    int rc = sdsm_init(argc, argv);
    if (rc) {
        fprintf(stderr, "sdsm: OpenMP program: sdsm_init failed: %s\n", sdsm_strerror(rc));
        exit(1);
    }
}

void *sdsm_omp_master_stack(size_t *len)
{
    *len = 0;
    return NULL;
}

int sdsm_omp_is_shared(const void *p)
{
    return sdsm_home_of(p) >= 0;
}
