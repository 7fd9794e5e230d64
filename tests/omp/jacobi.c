/*
 * jacobi.c - several parallel regions per iteration, many iterations: a
 * Jacobi relaxation on a 2-D grid on the heap, one region for the sweep,
 * one for the copy back with a max-reduction of the change, and the serial
 * code between them testing convergence and changing a boundary value.
 * Each cell's value is computed by the same expression whatever thread
 * runs it, so the grid is bit-identical to the one-thread run.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "omptest.h"

#define N 192

static double boundary = 100.0; /* changed by the serial code between regions */

int main(void)
{
    double(*u)[N] = malloc(sizeof(double[N][N]));
    double(*v)[N] = malloc(sizeof(double[N][N]));
    if (!u || !v)
        return 1;
#pragma omp parallel for
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            u[i][j] = v[i][j] = 0;

    int it;
    double change = 0;
    for (it = 0; it < 120; it++) {
        if (it == 60)
            boundary = 50.0;
#pragma omp parallel for schedule(static)
        for (int j = 0; j < N; j++)
            u[0][j] = v[0][j] = boundary;
#pragma omp parallel for schedule(static)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
        change = 0;
#pragma omp parallel for schedule(static) reduction(max : change)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++) {
                double d = fabs(v[i][j] - u[i][j]);
                change = d > change ? d : change;
                u[i][j] = v[i][j];
            }
        if (change < 1e-9)
            break;
    }
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            s += u[i][j];
    printf("jacobi: %d iterations, last change %.17g\n", it, change);
    printf("jacobi: sum %.17g digest %016llx\n", s, (unsigned long long)ot_hash(u, sizeof(double[N][N])));

    /* the same with the regions' threads finding rows dynamically */
    for (it = 0; it < 20; it++) {
#pragma omp parallel for schedule(dynamic, 4)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
#pragma omp parallel for schedule(guided)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                u[i][j] = v[i][j];
    }
    printf("dynamic sweeps: digest %016llx\n", (unsigned long long)ot_hash(u, sizeof(double[N][N])));
    free(u);
    free(v);
    return ot_done();
}
