/*
 * heap.c - the heap is shared: blocks from malloc, calloc, realloc,
 * posix_memalign and aligned_alloc, made in serial code or inside a
 * region by any thread, are readable and writable by every thread and by
 * the serial code; free works on any block from any thread, including
 * blocks another thread made; memory freed and allocated again is usable.
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "omptest.h"

#define N      100000
#define BLOCKS 256

struct node {
    struct node *next;
    int value;
};

static unsigned char *blocks[BLOCKS];
static size_t sizes[BLOCKS];

static size_t block_size(int i)
{
    return 16 + (size_t)(i * 97) % 3000 + (i % 64 == 0 ? 200000 : 0); /* some large */
}

int main(void)
{
    /* serial malloc, parallel fill, serial read */
    double *a = malloc(N * sizeof *a);
    long *z = calloc(N, sizeof *z);
    if (!a || !z)
        return 1;
#pragma omp parallel for
    for (int i = 0; i < N; i++)
        a[i] = (i % 1000) * 0.25;
    double s = 0;
    for (int i = 0; i < N; i++)
        s += a[i];
    printf("malloc: %.17g\n", s);

    /* calloc is zeroed, as every thread sees it */
    long nonzero = 0;
#pragma omp parallel for reduction(+ : nonzero)
    for (int i = 0; i < N; i++)
        nonzero += z[i] != 0;
    ot_check(nonzero == 0, "calloc: zeroed");

    /* realloc keeps the contents; the moved block is shared too */
    a = realloc(a, 4 * N * sizeof *a);
    if (!a)
        return 1;
#pragma omp parallel for
    for (int i = N; i < 4 * N; i++)
        a[i] = a[i % N] + i / N;
    s = 0;
    for (int i = 0; i < 4 * N; i++)
        s += a[i];
    printf("realloc: %.17g\n", s);
    free(a);
    free(z);

    /* free, then allocate again: the new block works everywhere */
    for (int round = 0; round < 3; round++) {
        int *b = malloc((size_t)(round + 1) * 40000 * sizeof *b);
#pragma omp parallel for schedule(static, 100)
        for (int i = 0; i < (round + 1) * 40000; i++)
            b[i] = i ^ round;
        long t = 0;
        for (int i = 0; i < (round + 1) * 40000; i++)
            t += b[i];
        printf("round %d: %ld\n", round, t);
        free(b);
    }

    /* blocks allocated inside a region by whichever thread runs the
     * iteration, filled there, read by the serial code */
#pragma omp parallel for schedule(dynamic, 3)
    for (int i = 0; i < BLOCKS; i++) {
        sizes[i] = block_size(i);
        if (i % 3 == 0)
            blocks[i] = calloc(sizes[i], 1);
        else
            blocks[i] = malloc(sizes[i]);
        if (!blocks[i])
            continue;
        for (size_t k = 0; k < sizes[i]; k++) /* calloc's zeros in the sum */
            blocks[i][k] = (unsigned char)((i % 3 == 0 ? blocks[i][k] : 0) + i + k);
    }
    uint64_t h = 0;
    int missing = 0;
    for (int i = 0; i < BLOCKS; i++) {
        if (!blocks[i]) {
            missing++;
            continue;
        }
        h ^= ot_hash(blocks[i], sizes[i]) + (uint64_t)i;
    }
    ot_check(!missing, "malloc/calloc in a region");
    printf("blocks made in a region: digest %016llx\n", (unsigned long long)h);

    /* another thread reads, grows (realloc) and frees them */
    long sum = 0;
#pragma omp parallel for schedule(static, 5) reduction(+ : sum)
    for (int i = 0; i < BLOCKS; i++) {
        int j = (i + 7) % BLOCKS;
        unsigned char *p = realloc(blocks[j], sizes[j] * 2);
        if (!p)
            continue;
        memset(p + sizes[j], 1, sizes[j]);
        for (size_t k = 0; k < 2 * sizes[j]; k++)
            sum += p[k];
        blocks[j] = p;
    }
    printf("realloc in a region: %ld\n", sum);
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < BLOCKS; i++) {
        free(blocks[(i * 5 + 3) % BLOCKS]); /* 5 is prime to 256: each once */
    }

    /* a linked list built in a region, walked by the serial code */
    struct node *head = NULL;
#pragma omp parallel for
    for (int i = 0; i < 2000; i++) {
        struct node *n = malloc(sizeof *n);
        n->value = i;
#pragma omp critical
        {
            n->next = head;
            head = n;
        }
    }
    long lsum = 0;
    int len = 0;
    while (head) {
        struct node *n = head;
        lsum += n->value;
        len++;
        head = n->next;
        free(n);
    }
    printf("list: %d nodes, sum %ld\n", len, lsum);

    /* aligned allocations and strdup */
    void *al = NULL;
    int aligned = posix_memalign(&al, 4096, 3 * 4096) == 0 && ((uintptr_t)al % 4096) == 0;
    double *al2 = aligned_alloc(64, 64 * 100);
    aligned &= al2 && (uintptr_t)al2 % 64 == 0;
    ot_check(aligned, "posix_memalign and aligned_alloc: aligned");
    if (al && al2) {
#pragma omp parallel for
        for (int i = 0; i < 3 * 4096; i++)
            ((unsigned char *)al)[i] = (unsigned char)(i * 7);
#pragma omp parallel for
        for (int i = 0; i < 800; i++)
            al2[i] = i / 2.0;
        double as = 0;
        for (int i = 0; i < 800; i++)
            as += al2[i];
        printf("aligned: %016llx %.17g\n", (unsigned long long)ot_hash(al, 3 * 4096), as);
    }
    free(al);
    free(al2);
    return ot_done();
}
