/*
 * mm_seq.c - the sequential matrix product (no sdsm): the reference time
 * for the speedups.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "mm_kernel.h"

int main(int argc, char **argv)
{
    long n = app_pick(argc, argv, "n", 128, 3072, 2048);
    if (n < 1) {
        fprintf(stderr, "mm: need --n >= 1\n");
        return 2;
    }
    double secs, sum = 0;
    double *c = mm_run(n, &secs);
    for (long i = 0; i < n; i++) {
        double s;
        mm_row_digest(c + (size_t)i * n, n, &s);
        sum += s;
    }
    app_header("mm", "seq", 1, "n=%ld", n);
    app_time(secs);
    app_result("checksum=%.12e", sum);
    free(c);
    return 0;
}
