/*
 * libcalloc.c - memory the C library allocates for the program is the
 * program's heap too: strings from strdup, strndup, asprintf and
 * getline-like calls made in a region by any thread, read and freed by the
 * serial code (another process's thread under sdsm), and the other way
 * round.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "omptest.h"

#define N 64

int main(void)
{
    char *dup[N] = {0}, *ndup[N] = {0}, *fmt[N] = {0};
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < N; i++) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "string %d", i * i);
        dup[i] = strdup(tmp);
        ndup[i] = strndup(tmp, 8);
        if (asprintf(&fmt[i], "%d-%s", i, tmp) < 0)
            fmt[i] = NULL;
    }
    size_t total = 0;
    int missing = 0;
    for (int i = 0; i < N; i++) {
        if (!dup[i] || !ndup[i] || !fmt[i]) {
            missing++;
            continue;
        }
        total += strlen(dup[i]) + strlen(ndup[i]) + strlen(fmt[i]);
        free(dup[i]);
        free(ndup[i]);
        free(fmt[i]);
    }
    ot_check(!missing, "strdup, strndup, asprintf in a region");
    printf("strings made in a region: %zu chars\n", total);

    /* made by the serial code, read and freed by the threads */
    for (int i = 0; i < N; i++)
        if (asprintf(&fmt[i], "serial %d", 3 * i) < 0)
            fmt[i] = NULL;
    size_t sum = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : sum)
    for (int i = 0; i < N; i++) {
        if (fmt[i])
            sum += strlen(fmt[i]);
        free(fmt[i]);
    }
    printf("strings read and freed in a region: %zu chars\n", sum);
    return ot_done();
}
