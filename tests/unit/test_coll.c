/*
 * test_coll.c - core/coll.c (which collective call a rank is in, and the
 * mismatch check) and core/blocked.c (what each thread waits for).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/status.h"
#include "core/coll.h"
#include "core/stats.h"
#include "core/blocked.h"

static sdsm_coll_t rec(uint32_t kind, uint32_t seq, uint64_t a0, uint64_t a1, uint64_t a2)
{
    return (sdsm_coll_t){.kind = kind, .seq = seq, .arg = {a0, a1, a2}};
}

static int check(int src, sdsm_coll_t c) { return sdsm_coll_check(src, &c); }

static void test_describe(void)
{
    char b[256];
    sdsm_coll_t c = rec(SDSM_COLL_BARRIER, 2, 0, 0, 0);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_barrier() (manager 0) (collective #2)");
    c = rec(SDSM_COLL_BARRIER, 0, 1, 1, 0);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_barrier_at(1) (collective #0)");
    c = rec(SDSM_COLL_ALLOC, 4, 4096, 1, (uint64_t)-2);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_alloc(size 4096, home -2) (collective #4)");
    c = rec(SDSM_COLL_ALLOC, 4, 4096, 8, 0);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_calloc(size 4096, element 8, home 0) (collective #4)");
    c = rec(SDSM_COLL_BCAST, 0, 0x1000, 64, 3);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_bcast(0x1000, 64 bytes, root 3) (collective #0)");
    c = rec(SDSM_COLL_FINALIZE, 9, 0, 0, 0);
    sdsm_coll_describe(&c, b, sizeof b);
    CHECK_STR(b, "sdsm_finalize() (collective #9)");
}

static void test_begin(void)
{
    sdsm_coll_reset();
    sdsm_coll_begin(SDSM_COLL_BARRIER, 0, 0, 0);
    sdsm_coll_begin(SDSM_COLL_ALLOC, 100, 1, 0);
    const sdsm_coll_t *c = sdsm_coll_current();
    CHECK_U(c->kind, ==, SDSM_COLL_ALLOC);
    CHECK_U(c->seq, ==, 1);
    CHECK_U(c->arg[0], ==, 100);
    sdsm_coll_t s;
    sdsm_coll_snapshot(&s);
    CHECK_MEM(&s, c, sizeof s);
}

static void test_agreeing_calls(void)
{
    sdsm_coll_reset();
    /* Four ranks through 40 calls (more than the ring), reporting in a scrambled
     * order, each rank at most one call ahead, some calls reported twice. */
    for (uint32_t seq = 0; seq < 40; seq++)
        for (int k = 0; k < 4; k++) {
            int r = (int)((seq * 3 + (uint32_t)k) % 4);
            sdsm_coll_t c = rec(seq % 3 ? SDSM_COLL_BARRIER : SDSM_COLL_BCAST, seq, 0, 8, 1);
            CHECK_I(check(r, c), ==, 0);
            if (k == 2)
                CHECK_I(check(r, c), ==, 0);
        }
    /* sdsm_barrier and sdsm_barrier_at of the same manager are the same barrier. */
    CHECK_I(check(0, rec(SDSM_COLL_BARRIER, 40, 2, 0, 0)), ==, 0);
    CHECK_I(check(1, rec(SDSM_COLL_BARRIER, 40, 2, 1, 0)), ==, 0);
    /* Allocations of the same kind with other arguments: the allocator's call. */
    CHECK_I(check(0, rec(SDSM_COLL_ALLOC, 41, 4096, 1, 0)), ==, 0);
    CHECK_I(check(1, rec(SDSM_COLL_ALLOC, 41, 8192, 1, 0)), ==, 0);
    CHECK_I(check(0, rec(SDSM_COLL_FREE, 42, 0x1000, 0, 0)), ==, 0);
    CHECK_I(check(1, rec(SDSM_COLL_FREE, 42, 0x2000, 0, 0)), ==, 0);
    /* A record far behind the ring has nothing to be compared with. */
    CHECK_I(check(2, rec(SDSM_COLL_FINALIZE, 26, 0, 0, 0)), ==, 0);
}

static void test_malformed(void)
{
    sdsm_coll_reset();
    CHECK_I(check(0, rec(SDSM_COLL_NONE, 0, 0, 0, 0)), ==, SDSM_EPROTO);
    CHECK_I(check(0, rec(SDSM_COLL_NKINDS, 0, 0, 0, 0)), ==, SDSM_EPROTO);
    CHECK_I(check(0, rec(0xffffffffu, 0, 0, 0, 0)), ==, SDSM_EPROTO);
}

/* Run the check in a child: a mismatch stops the process.  Its stderr and status. */
static int mismatch_in_child(sdsm_coll_t a, sdsm_coll_t b, char *out, size_t len)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        sdsm_coll_reset();
        check(0, a);
        check(1, b);
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && (n = read(fds[0], out + got, len - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_mismatch(void)
{
    char err[1024];
    int st = mismatch_in_child(rec(SDSM_COLL_BARRIER, 2, 0, 0, 0), rec(SDSM_COLL_ALLOC, 2, 4096, 1, 0), err,
                               sizeof err);
    CHECK_I(st, !=, 0);
    CHECK_HAS(err, "collective mismatch: rank 0 is in sdsm_barrier() (manager 0) (collective #2), "
                   "rank 1 in sdsm_alloc(size 4096, home 0) (collective #2)");
    st = mismatch_in_child(rec(SDSM_COLL_BARRIER, 0, 0, 1, 0), rec(SDSM_COLL_BARRIER, 0, 1, 1, 0), err,
                           sizeof err);
    CHECK_I(st, !=, 0);
    CHECK_HAS(err, "rank 0 is in sdsm_barrier_at(0) (collective #0), rank 1 in sdsm_barrier_at(1)");
    st = mismatch_in_child(rec(SDSM_COLL_BCAST, 5, 0x1000, 64, 0), rec(SDSM_COLL_BCAST, 5, 0x1000, 64, 1),
                           err, sizeof err);
    CHECK_I(st, !=, 0);
    CHECK_HAS(err, "root 0) (collective #5), rank 1 in sdsm_bcast(0x1000, 64 bytes, root 1)");
    st = mismatch_in_child(rec(SDSM_COLL_FREE, 1, 0x1000, 0, 0), rec(SDSM_COLL_ALLOC, 1, 4096, 1, 0), err,
                           sizeof err);
    CHECK_I(st, !=, 0);
    CHECK_HAS(err, "sdsm_free(0x1000) (collective #1), rank 1 in sdsm_alloc(");
    /* The same call agrees: the child gets to its own exit. */
    st = mismatch_in_child(rec(SDSM_COLL_FINALIZE, 1, 0, 0, 0), rec(SDSM_COLL_FINALIZE, 1, 0, 0, 0), err,
                           sizeof err);
    CHECK_I(st, ==, 0);
    CHECK_STR(err, "");
}

typedef struct seen {
    int n;
    uint32_t kind;
    int64_t id;
} seen_t;

static void visit(void *arg, int thread, uint32_t kind, int64_t id, uint64_t ns)
{
    (void)thread, (void)ns;
    seen_t *s = arg;
    s->n++;
    s->kind = kind;
    s->id = id;
}

static void test_waits(void)
{
    seen_t s = {0};
    sdsm_wait_each(visit, &s, 0);
    CHECK_I(s.n, ==, 0);
    sdsm_wait_save_t outer, inner;
    sdsm_wait_enter(&outer, SDSM_WAIT_LOCK, 7);
    usleep(20000);
    sdsm_wait_enter(&inner, SDSM_WAIT_PAGE, 123); /* a fault inside the wait */
    s = (seen_t){0};
    sdsm_wait_each(visit, &s, UINT64_MAX);
    CHECK_I(s.n, ==, 1);
    CHECK_U(s.kind, ==, SDSM_WAIT_PAGE);
    CHECK_I(s.id, ==, 123);
    sdsm_wait_leave(&inner);
    s = (seen_t){0};
    sdsm_wait_each(visit, &s, UINT64_MAX);
    CHECK_U(s.kind, ==, SDSM_WAIT_LOCK);
    CHECK_I(s.id, ==, 7);
    /* The lock wait kept its start time across the nested fault. */
    CHECK_U(sdsm_wait_longest_ns(sdsm_now_ns()), >=, 20000000u);
    sdsm_wait_leave(&outer);
    CHECK_U(sdsm_wait_longest_ns(sdsm_now_ns()), ==, 0);
}

int main(void)
{
    RUN(test_describe);
    RUN(test_begin);
    RUN(test_agreeing_calls);
    RUN(test_malformed);
    RUN(test_mismatch);
    RUN(test_waits);
    return ck_done("coll");
}
