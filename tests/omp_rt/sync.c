/* critical (unnamed, named, nested names), atomic on int/long/float/double,
 * omp locks and nest locks, single, sections, master/masked, tasks: the
 * counters they protect come out exact. */
#include "rt.h"

#define M 25
static struct {
    long crit, a, b, l, nl, single, masked, task;
    int i32;
    long i64;
    float f;
    double d;
    unsigned u8cap;
    long sec[8], secthr[8];
    long captured[1024 * M];
    omp_lock_t lock;
    omp_nest_lock_t nest;
    long tested;
} * S;

int main(void)
{
#pragma omp parallel
    S = rt_shared(sizeof *S);
    int nt = omp_get_max_threads();
    omp_init_lock(&S->lock);
    omp_init_nest_lock(&S->nest);
#pragma omp parallel
    {
        for (int k = 0; k < M; k++) {
#pragma omp critical
            S->crit++;
#pragma omp critical(alpha)
            {
                S->a++;
#pragma omp critical(beta)
                S->b++;
            }
#pragma omp atomic
            S->i32 += 2;
#pragma omp atomic update
            S->i64 += 3;
#pragma omp atomic
            S->f += 0.5f;
#pragma omp atomic
            S->d += 0.25;
            long old;
#pragma omp atomic capture
            old = S->i64++;
            S->captured[omp_get_thread_num() * M + k] = old;
            omp_set_lock(&S->lock);
            S->l++;
            omp_unset_lock(&S->lock);
            omp_set_nest_lock(&S->nest);
            omp_set_nest_lock(&S->nest);
            S->nl++;
            omp_unset_nest_lock(&S->nest);
            omp_unset_nest_lock(&S->nest);
        }
        while (!omp_test_lock(&S->lock))
            ;
        S->tested++;
        omp_unset_lock(&S->lock);
#pragma omp single
        S->single++;
#pragma omp masked
        S->masked++;
#pragma omp master
        S->masked++;
#pragma omp sections
        {
#pragma omp section
            S->sec[1]++, S->secthr[1] = omp_get_thread_num();
#pragma omp section
            S->sec[2]++, S->secthr[2] = omp_get_thread_num();
#pragma omp section
            S->sec[3]++, S->secthr[3] = omp_get_thread_num();
        }
#pragma omp single
        {
            for (int k = 0; k < 10; k++) {
#pragma omp task
                {
#pragma omp atomic
                    S->task++;
                }
            }
#pragma omp taskwait
        }
    }
    CHECK(S->crit == (long)nt * M, "critical %ld", S->crit);
    CHECK(S->a == (long)nt * M && S->b == (long)nt * M, "named %ld %ld", S->a, S->b);
    CHECK(S->i32 == 2 * nt * M, "atomic int %d", S->i32);
    CHECK(S->i64 == 4L * nt * M, "atomic long %ld", S->i64);
    CHECK(S->f == 0.5f * nt * M, "atomic float %g", S->f);
    CHECK(S->d == 0.25 * nt * M, "atomic double %g", S->d);
    CHECK(S->l == (long)nt * M && S->nl == (long)nt * M, "locks %ld %ld", S->l, S->nl);
    CHECK(S->tested == nt, "test_lock %ld", S->tested);
    CHECK(S->single == 1 && S->masked == 2 && S->task == 10, "single %ld masked %ld task %ld", S->single,
          S->masked, S->task);
    for (int s = 1; s <= 3; s++)
        CHECK(S->sec[s] == 1, "section %d ran %ld times", s, S->sec[s]);
    /* every value the capture returned is distinct: the increments were atomic */
    static char seen[4 * 1024 * M + 1];
    for (int k = 0; k < nt * M; k++) {
        long v = S->captured[k];
        CHECK(v >= 0 && v < 4L * nt * M && !seen[v], "capture %ld twice or out of range", v);
        seen[v] = 1;
    }
    omp_destroy_lock(&S->lock);
    omp_destroy_nest_lock(&S->nest);
    printf("OK sync %d\n", nt);
    return 0;
}
