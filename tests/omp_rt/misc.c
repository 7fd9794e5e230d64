/* Data on main's stack passed to regions, copyprivate, nested and
 * serialized regions (num_threads(1), if(0), omp_set_num_threads(1)),
 * taskloop, orphaned constructs, omp_get/set_schedule, the level calls,
 * omp_alloc. */
#include "rt.h"

static void orphan(long *count)
{
#pragma omp for schedule(dynamic, 2)
    for (int i = 0; i < 100; i++) {
#pragma omp atomic
        (*count)++;
    }
}

int main(void)
{
    int nt = omp_get_max_threads();
    long onstack[64] = {0}, count = 0, nested_bad = 0, serial_bad = 0, tl = 0;
    /* main's stack: the master's frame is shared with every thread */
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        if (t < 64)
            onstack[t] = t + 1;
        int v = -1;
#pragma omp single copyprivate(v)
        v = 42 + omp_get_thread_num();
        if (v != 42)
            onstack[t % 64] = -1000;
        orphan(&count);
        /* nested: a team of one */
#pragma omp parallel
        {
            if (omp_get_num_threads() != 1 || omp_get_thread_num() != 0 || omp_get_level() != 2 ||
                omp_get_active_level() != (nt > 1) || omp_get_ancestor_thread_num(1) != t)
#pragma omp atomic
                nested_bad++;
#pragma omp barrier
#pragma omp for schedule(dynamic)
            for (int i = 0; i < 10; i++)
                ;
        }
#pragma omp taskloop
        for (int i = 0; i < 20; i++) {
#pragma omp atomic
            tl++;
        }
    }
    for (int t = 0; t < nt && t < 64; t++)
        CHECK(onstack[t] == t + 1, "main's stack: thread %d wrote %ld", t, onstack[t]);
    CHECK(count == 100, "orphaned loop %ld", count);
    CHECK(nested_bad == 0, "nested region seen wrong by %ld threads", nested_bad);
    CHECK(tl == 20L * nt, "taskloop %ld", tl);
    orphan(&count); /* outside any region: a team of one */
    CHECK(count == 200, "orphaned loop outside %ld", count);
    /* serialized regions */
#pragma omp parallel num_threads(1)
    serial_bad += omp_get_num_threads() != 1 || omp_in_parallel();
#pragma omp parallel if (count < 0)
    serial_bad += omp_get_num_threads() != 1;
    omp_set_num_threads(1);
#pragma omp parallel
    serial_bad += omp_get_num_threads() != 1;
    omp_set_num_threads(nt);
    CHECK(serial_bad == 0, "serialized regions");
    long all = 0;
#pragma omp parallel reduction(+ : all)
    all += omp_get_num_threads() == nt;
    CHECK(all == nt, "back to the full team: %ld", all);
    omp_sched_t k;
    int c;
    omp_set_schedule(omp_sched_guided, 7);
    omp_get_schedule(&k, &c);
    CHECK(k == omp_sched_guided && c == 7, "schedule %d %d", (int)k, c);
    CHECK(omp_get_wtick() > 0 && omp_get_wtime() > 0, "wtime");

    /* omp_alloc: shared blocks, made by the master or by the last thread */
    long *blk = omp_alloc(nt * sizeof(long), omp_default_mem_alloc), *blk2 = NULL;
#pragma omp parallel
    {
        blk[omp_get_thread_num()] = omp_get_thread_num() * 3;
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            blk2 = omp_alloc(nt * sizeof(long), omp_default_mem_alloc);
#pragma omp barrier
        blk2[omp_get_thread_num()] = blk[omp_get_thread_num()] + 1;
    }
    for (int t = 0; t < nt; t++)
        CHECK(blk2[t] == t * 3 + 1, "omp_alloc block: thread %d wrote %ld", t, blk2[t]);
    omp_free(blk, omp_default_mem_alloc);
    if (nt == 1)
        omp_free(blk2, omp_default_mem_alloc); /* else its rank frees it: left to the end */
    printf("OK misc %d\n", nt);
    return 0;
}
