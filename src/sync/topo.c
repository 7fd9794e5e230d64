/*
 * topo.c - the shape of the tree barrier: by host, then by rank.
 *
 * Numbered by rank alone, most levels of the tree crossed the network when
 * a job has several ranks per host (and it lost to the central barrier on
 * the emulated cluster).  So the ranks of each host form a FANOUT-ary tree
 * of their own under the host's leader, and the leaders form one across
 * hosts: a barrier crosses the network once per level of the hosts' tree,
 * log over the hosts, and the rest stays on loopback.  The hosts' tree is
 * wider (host_fanout kids each): one network hop costs more than the root's
 * handling of a few more arrivals, so up to host_fanout + 1 hosts it is the
 * central barrier among the leaders, two hops each way, and with one rank
 * per host it is the central barrier.  The root's host
 * comes first and the root leads it; every list is in the order of
 * (rank - root) mod P, so on one host the tree is the one numbered by rank.
 *
 * A shape is built once per root (the barrier manager, rarely more than
 * one) and never changes: readers (the service thread's handlers and the
 * application thread) take it without a lock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "sync.h"

typedef struct shape {
    int *parent;  /* per rank; -1 at the root */
    int *kid_off; /* kids of r: kid[kid_off[r] .. kid_off[r + 1]) */
    int *kid;
} shape_t;

static struct {
    int n, fanout, host_fanout, hosts;
    int *host_of;               /* per rank: its host's number */
    _Atomic(shape_t *) *shapes; /* per root */
    pthread_mutex_t mtx;
} topo = {.mtx = PTHREAD_MUTEX_INITIALIZER};

int sdsm_topo_init(int n, const int *host_of, int fanout, int host_fanout)
{
    topo.n = n;
    topo.fanout = fanout;
    topo.host_fanout = host_fanout;
    topo.host_of = calloc((size_t)n, sizeof *topo.host_of);
    topo.shapes = calloc((size_t)n, sizeof *topo.shapes);
    if (!topo.host_of || !topo.shapes)
        return SDSM_ENOMEM;
    if (host_of)
        memcpy(topo.host_of, host_of, (size_t)n * sizeof *host_of);
    topo.hosts = host_of ? 0 : 1;
    for (int r = 0; host_of && r < n; r++)
        topo.hosts += host_of[r] == r;
    return 0;
}

int sdsm_topo_hosts(void) { return topo.hosts; }

void sdsm_topo_fini(void)
{
    for (int r = 0; topo.shapes && r < topo.n; r++) {
        shape_t *s = atomic_load(&topo.shapes[r]);
        if (s) {
            free(s->parent);
            free(s->kid_off);
            free(s->kid);
            free(s);
        }
    }
    free((void *)topo.shapes);
    free(topo.host_of);
    topo.n = 0;
    topo.shapes = NULL;
    topo.host_of = NULL;
}

/* The ranks grouped by host in rotated order: grp[] holds them group after
 * group, start[g] where group g begins (start[ngroups] == n).  Returns ngroups. */
static int group(int root, int *grp, int *start)
{
    int n = topo.n, ng = 0, *seen = calloc((size_t)n, sizeof *seen), at = 0;
    if (!seen)
        sdsm_fatal("no memory for the barrier tree");
    for (int v = 0; v < n; v++) { /* a host's number is some rank's, below n */
        int h = topo.host_of[(root + v) % n];
        if (h < 0 || h >= n || seen[h])
            continue;
        seen[h] = 1;
        start[ng++] = at;
        for (int w = v; w < n; w++)
            if (topo.host_of[(root + w) % n] == h)
                grp[at++] = (root + w) % n;
    }
    start[ng] = at;
    free(seen);
    return ng;
}

static void add_kid(shape_t *s, int *fill, int parent, int kid)
{
    s->parent[kid] = parent;
    s->kid[s->kid_off[parent] + fill[parent]++] = kid;
}

static shape_t *build(int root)
{
    int n = topo.n, F = topo.fanout, HF = topo.host_fanout;
    shape_t *s = calloc(1, sizeof *s);
    int *grp = malloc((size_t)n * sizeof *grp), *start = malloc(((size_t)n + 1) * sizeof *start);
    int *count = calloc((size_t)n, sizeof *count), *fill = calloc((size_t)n, sizeof *fill);
    if (!s || !grp || !start || !count || !fill || !(s->parent = malloc((size_t)n * sizeof(int))) ||
        !(s->kid_off = calloc((size_t)n + 1, sizeof(int))) || !(s->kid = malloc((size_t)n * sizeof(int))))
        sdsm_fatal("no memory for the barrier tree");
    int ng = group(root, grp, start);
    /* Parents first (to count kids), then the kids' lists. */
    for (int pass = 0; pass < 2; pass++) {
        for (int g = 0; g < ng; g++) {
            int k = start[g + 1] - start[g];
            for (int j = 1; j < k; j++) {
                int p = grp[start[g] + (j - 1) / F], c = grp[start[g] + j];
                pass ? add_kid(s, fill, p, c) : (void)count[p]++;
            }
            if (g > 0) {
                int p = grp[start[(g - 1) / HF]], c = grp[start[g]];
                pass ? add_kid(s, fill, p, c) : (void)count[p]++;
            }
        }
        for (int r = 0; !pass && r < n; r++)
            s->kid_off[r + 1] = s->kid_off[r] + count[r];
    }
    s->parent[root] = -1;
    free(grp);
    free(start);
    free(count);
    free(fill);
    return s;
}

static const shape_t *shape(int root)
{
    shape_t *s = atomic_load_explicit(&topo.shapes[root], memory_order_acquire);
    if (s)
        return s;
    pthread_mutex_lock(&topo.mtx);
    if (!(s = atomic_load(&topo.shapes[root]))) {
        s = build(root);
        atomic_store_explicit(&topo.shapes[root], s, memory_order_release);
    }
    pthread_mutex_unlock(&topo.mtx);
    return s;
}

int sdsm_topo_parent(int r, int root) { return shape(root)->parent[r]; }

int sdsm_topo_kids(int r, int root, const int **kids)
{
    const shape_t *s = shape(root);
    *kids = s->kid + s->kid_off[r];
    return s->kid_off[r + 1] - s->kid_off[r];
}
