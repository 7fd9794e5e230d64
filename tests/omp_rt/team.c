/* Team size and ids, barriers, several regions in a row.  (Shared data is
 * reached only through S, which every rank sets the same.) */
#include "rt.h"

static struct {
    long round;
    long val[1024], sum[1024], bad[1024];
} * S;

int main(void)
{
    int n = omp_get_max_threads();
    CHECK(n == sdsm_thread_count(), "max threads %d, team %d", n, sdsm_thread_count());
    CHECK(!omp_in_parallel() && omp_get_num_threads() == 1 && omp_get_thread_num() == 0, "outside");
#pragma omp parallel
    {
        S = rt_shared(sizeof *S);
    }
    for (S->round = 1; S->round <= 5; S->round++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            if (nt != sdsm_thread_count() || t != sdsm_thread_id() || omp_in_parallel() != (nt > 1) ||
                omp_get_level() != 1 || omp_get_team_size(1) != nt || omp_get_ancestor_thread_num(1) != t)
                S->bad[t] = 1;
            S->val[t] = S->round * 100 + t;
#pragma omp barrier
            /* everyone sees everyone's write after the barrier */
            long sum = 0;
            for (int k = 0; k < nt; k++)
                sum += S->val[k];
            S->sum[t] = sum;
        }
        long want = 0;
        for (int k = 0; k < n; k++)
            want += S->round * 100 + k;
        for (int k = 0; k < n; k++) {
            CHECK(!S->bad[k], "thread %d saw a wrong team", k);
            CHECK(S->sum[k] == want, "round %ld thread %d sum %ld want %ld", S->round, k, S->sum[k], want);
        }
    }
    printf("OK team %d\n", n);
    return 0;
}
