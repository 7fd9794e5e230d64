/*
 * test_topo.c - sync/topo.c: the tree barrier's shape.  Every rank but the
 * root has one parent and is its parent's kid; the tree reaches every rank
 * from the root; on one host it is the tree numbered by rank; with several
 * hosts, only the hosts' leaders have a parent on another host, and each
 * host is led by its lowest rank in the root's rotation (the root's own
 * host by the root), and the leaders' tree has its own fanout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "sync/sync.h"

#define F  4
#define HF 3 /* small, so that the hosts' tree has levels in these tests */

/* Checks the parent/kids agreement and that all n ranks hang from root. */
static int well_formed(int n, int root)
{
    int bad = 0, reached = 1, *seen = calloc((size_t)n, sizeof *seen),
        *queue = malloc((size_t)n * sizeof *queue);
    bad |= !CHECK_I(sdsm_topo_parent(root, root), ==, -1);
    queue[0] = root;
    seen[root] = 1;
    for (int head = 0; head < reached; head++) {
        const int *kids;
        int k = sdsm_topo_kids(queue[head], root, &kids);
        for (int i = 0; i < k; i++) {
            bad |= !CHECK_I(sdsm_topo_parent(kids[i], root), ==, queue[head]);
            bad |= !CHECK(!seen[kids[i]]);
            seen[kids[i]] = 1;
            queue[reached++] = kids[i];
        }
    }
    bad |= !CHECK_I(reached, ==, n);
    free(seen);
    free(queue);
    return bad;
}

static void test_one_host(void)
{
    for (int n = 1; n <= 40; n += 3) {
        CHECK_I(sdsm_topo_init(n, NULL, F, HF), ==, 0);
        for (int root = 0; root < n; root += 2) {
            if (well_formed(n, root))
                return;
            for (int r = 0; r < n; r++) { /* numbered by rank from the root */
                int v = (r - root + n) % n;
                if (!CHECK_I(sdsm_topo_parent(r, root), ==, v ? ((v - 1) / F + root) % n : -1))
                    return;
            }
        }
        sdsm_topo_fini();
    }
}

/* hosts hosts of per ranks each, the ranks dealt round robin (rank r on
 * host r % hosts) or in blocks. */
static void test_hosts(int hosts, int per, int dealt)
{
    int n = hosts * per, *host = malloc((size_t)n * sizeof *host);
    for (int r = 0; r < n; r++)
        host[r] = dealt ? r % hosts : r / per * per; /* a host's number is one of its ranks */
    CHECK_I(sdsm_topo_init(n, host, F, HF), ==, 0);
    for (int root = 0; root < n; root += 5) {
        if (well_formed(n, root))
            break;
        int cross = 0;
        for (int r = 0; r < n; r++) {
            int p = sdsm_topo_parent(r, root);
            if (p >= 0 && host[p] != host[r]) {
                cross++;
                for (int q = 0; q < n; q++) /* a leader: the first of its host from the root */
                    if (host[q] == host[r] && q != r)
                        CHECK(host[r] != host[root] && (q - root + n) % n > (r - root + n) % n);
            }
        }
        CHECK_I(cross, ==, hosts - 1);
        /* The leaders' tree: at most HF kids on other hosts each; with
         * HF + 1 hosts or fewer, every leader's parent is the root. */
        for (int r = 0; r < n; r++) {
            const int *kids;
            int k = sdsm_topo_kids(r, root, &kids), away = 0;
            for (int i = 0; i < k; i++)
                away += host[kids[i]] != host[r];
            CHECK_I(away, <=, HF);
            int p = sdsm_topo_parent(r, root);
            if (hosts <= HF + 1 && p >= 0 && host[p] != host[r])
                CHECK_I(p, ==, root);
        }
    }
    sdsm_topo_fini();
    free(host);
}

int main(void)
{
    RUN(test_one_host);
    test_hosts(4, 4, 0);
    test_hosts(4, 4, 1);
    test_hosts(8, 8, 1);
    test_hosts(16, 16, 0);
    test_hosts(3, 1, 0);
    test_hosts(4, 2, 1); /* HF + 1 hosts: the leaders hang from the root */
    test_hosts(40, 1, 0);
    return ck_done("topo");
}
