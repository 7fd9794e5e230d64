/*
 * stencil.c - barrier-phased Jacobi iteration on a 2-D grid.
 *
 *   mp_stencil [ROWS COLS ITERS]     (default 64 1024 20)
 *
 * Two ROWS x COLS grids of doubles (SDSM_HOME_BLOCK), swapped every
 * iteration.  Rank r owns a contiguous block of rows; each iteration it
 * computes its rows of the new grid from the old one (reading its
 * neighbours' boundary rows), then everyone meets at a barrier.  At the end
 * every rank recomputes the whole recurrence sequentially in private memory
 * with the same row function and compares the shared grid bit for bit.
 */
#define MP_NAME "stencil"
#include "mp.h"

static int R, C;

static double initial(int i, int j)
{
    /* Irregular but exact values; the edges stay fixed. */
    return (double)((i * 131 + j * 17) % 97) * 0.25 + (i == 0 ? 100.0 : 0.0) + (j == C - 1 ? -50.0 : 0.0);
}

/* One row of the update.  Used by the parallel and the sequential run alike. */
static void __attribute__((noinline)) update_row(const double *old, double *nw, int i)
{
    double *out = nw + (size_t)i * C;
    if (i == 0 || i == R - 1) {
        for (int j = 0; j < C; j++)
            out[j] = old[(size_t)i * C + j];
        return;
    }
    const double *up = old + (size_t)(i - 1) * C, *mid = old + (size_t)i * C, *dn = old + (size_t)(i + 1) * C;
    out[0] = mid[0];
    for (int j = 1; j < C - 1; j++)
        out[j] = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]) + 0.0625 * mid[j];
    out[C - 1] = mid[C - 1];
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    R = argc > 1 ? atoi(argv[1]) : 64;
    C = argc > 2 ? atoi(argv[2]) : 1024;
    int iters = argc > 3 ? atoi(argv[3]) : 20;
    int n = sdsm_nprocs(), me = sdsm_rank();
    size_t cells = (size_t)R * C;

    double *g[2];
    g[0] = sdsm_alloc(cells * sizeof(double), SDSM_HOME_BLOCK);
    g[1] = sdsm_alloc(cells * sizeof(double), SDSM_HOME_BLOCK);
    MP_NONNULL(g[0]);
    MP_NONNULL(g[1]);
    int lo = (int)((long)R * me / n), hi = (int)((long)R * (me + 1) / n);

    for (int i = lo; i < hi; i++)
        for (int j = 0; j < C; j++)
            g[0][(size_t)i * C + j] = initial(i, j);
    MP_OK(sdsm_barrier());

    int cur = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = lo; i < hi; i++)
            update_row(g[cur], g[1 - cur], i);
        MP_OK(sdsm_barrier());
        cur = 1 - cur;
    }

    /* The same recurrence, sequentially and privately. */
    double *s[2] = {malloc(cells * sizeof(double)), malloc(cells * sizeof(double))};
    MP_ASSERT(s[0] && s[1], "out of memory");
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            s[0][(size_t)i * C + j] = initial(i, j);
    int sc = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < R; i++)
            update_row(s[sc], s[1 - sc], i);
        sc = 1 - sc;
    }

    for (size_t k = 0; k < cells; k++) {
        uint64_t want, got;
        memcpy(&want, &s[sc][k], 8);
        memcpy(&got, &g[cur][k], 8);
        if (want != got)
            sdsm_abort(1,
                       "%s: rank %d: grid[%zu][%zu] (index %zu): expected %.17g (0x%016llx), "
                       "got %.17g (0x%016llx)",
                       MP_NAME, me, k / C, k % C, k, s[sc][k], (unsigned long long)want, g[cur][k],
                       (unsigned long long)got);
    }
    /* The values must actually have moved away from the start. */
    MP_ASSERT(iters == 0 || g[cur][(size_t)1 * C + 1] != initial(1, 1), "grid did not change");
    free(s[0]);
    free(s[1]);
    MP_OK(sdsm_barrier());
    return mp_finish("stencil");
}
