/*
 * test_idmap.c - core/idmap.c: ids in runs, far apart and colliding,
 * growth through many doublings, absent ids, and every entry visited once
 * by sdsm_idmap_each; checked against a plain model.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "core/idmap.h"

#define N 200000

static int count_each(void *v, void *arg)
{
    long *sum = arg;
    sum[0] += 1;
    sum[1] += (long)(uintptr_t)v;
    return 0;
}

static int stop_at_three(void *v, void *arg)
{
    (void)v;
    return ++*(int *)arg == 3;
}

static void test_map(void)
{
    sdsm_idmap_t m = {0};
    CHECK(sdsm_idmap_get(&m, 0) == NULL);
    CHECK(sdsm_idmap_get(&m, 12345) == NULL);

    /* ids in a run (lock ids of a program), then far apart, then with the
     * same low bits (a stride of 1 << 12) */
    uint32_t *ids = malloc(N * sizeof *ids);
    if (!CHECK(ids != NULL))
        return;
    for (int i = 0; i < N; i++)
        ids[i] = i < N / 2       ? (uint32_t)i
                 : i < 3 * N / 4 ? (uint32_t)i * 40503u + 7u
                                 : (uint32_t)(i - 3 * N / 4) << 12 | 1u;
    long want_sum = 0;
    int wrong_put = 0;
    for (int i = 0; i < N; i++) {
        if (sdsm_idmap_get(&m, ids[i])) /* an id of two classes at once: skip */
            continue;
        wrong_put += sdsm_idmap_put(&m, ids[i], (void *)(uintptr_t)(i + 1)) != 0;
        want_sum += i + 1;
    }
    CHECK_I(wrong_put, ==, 0);
    CHECK(m.n <= N && m.n > N - 100);
    CHECK(m.cap >= 2 * m.n);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        uintptr_t v = (uintptr_t)sdsm_idmap_get(&m, ids[i]);
        wrong += v == 0 || ids[v - 1] != ids[i];
    }
    CHECK_I(wrong, ==, 0);
    /* absent ids */
    int absent = 0;
    for (uint32_t id = N; id < N + 1000; id++)
        absent += sdsm_idmap_get(&m, id * 7u + 3u) == NULL || (id * 7u + 3u) < N / 2;
    CHECK_I(absent, ==, 1000);
    CHECK(sdsm_idmap_get(&m, UINT32_MAX) == NULL);

    long sum[2] = {0, 0};
    sdsm_idmap_each(&m, count_each, sum);
    CHECK_I(sum[0], ==, (long)m.n);
    CHECK_I(sum[1], ==, want_sum);
    int seen = 0;
    sdsm_idmap_each(&m, stop_at_three, &seen);
    CHECK_I(seen, ==, 3);

    sdsm_idmap_free(&m);
    CHECK(m.cap == 0 && m.n == 0 && sdsm_idmap_get(&m, 1) == NULL);
    free(ids);
}

int main(void)
{
    RUN(test_map);
    return ck_done("idmap");
}
