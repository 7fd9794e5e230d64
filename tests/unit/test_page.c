/*
 * test_page.c - mem/page.c: the page state machine (transition table and
 * names) and the shared region's two views, dirty list and copysets.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/config.h"
#include "core/status.h"
#include "mem/page.h"

enum { I = SDSM_PG_INVALID, F = SDSM_PG_FETCHING, RO = SDSM_PG_READ_ONLY, RW = SDSM_PG_READ_WRITE };

/*
 * Expected legality, written out from the diagram in page.h:
 *   [from][to] = {legal at a non-home rank, legal at the home}
 *
 *   INVALID  -> FETCHING     fault (not home)                remote only
 *   INVALID  -> READ_ONLY    fault at the home (no fetch)    home only
 *   INVALID  -> READ_WRITE   fault at the home (no fetch)    home only
 *   FETCHING -> READ_ONLY    reply                           any rank
 *   FETCHING -> INVALID      fetch abandoned: the HOME_REQ claim made this
 *                            rank the home (hlrc.c on_home_rep); not drawn
 *                            in the diagram but required by the protocol
 *   READ_ONLY  -> READ_WRITE write fault (twin unless home)  any rank
 *   READ_WRITE -> READ_ONLY  release (diff sent)             any rank
 *   READ_ONLY  -> INVALID    invalidation / barrier notice   remote only
 *   READ_WRITE -> INVALID    invalidation                    remote only
 *                            ("the home's copy is never invalidated")
 * Everything else is illegal, including every self-transition (the diagram
 * has no self-loops) and FETCHING -> READ_WRITE.
 */
static const struct {
    int remote, home;
} expected[SDSM_PG_NSTATES][SDSM_PG_NSTATES] = {
    /*              to: INVALID   FETCHING  READ_ONLY  READ_WRITE */
    [I] = {[I] = {0, 0}, [F] = {1, 0}, [RO] = {0, 1}, [RW] = {0, 1}},
    [F] = {[I] = {1, 1}, [F] = {0, 0}, [RO] = {1, 1}, [RW] = {0, 0}},
    [RO] = {[I] = {1, 0}, [F] = {1, 0}, [RO] = {0, 0}, [RW] = {1, 1}}, /* RO->F: update push */
    [RW] = {[I] = {1, 0}, [F] = {0, 0}, [RO] = {1, 1}, [RW] = {0, 0}},
};

static void check_pair(unsigned from, unsigned to)
{
    for (int home = 0; home < 2; home++) {
        int want = home ? expected[from][to].home : expected[from][to].remote;
        int got = sdsm_page_transition_ok(from, to, home);
        if (!CHECK_I(!!got, ==, want))
            fprintf(stderr, "    %s -> %s at %s\n", sdsm_pstate_name(from), sdsm_pstate_name(to),
                    home ? "the home" : "a non-home rank");
    }
}

/* Every pair except INVALID -> INVALID (see test_transition_invalid_self). */
static void test_transition_table(void)
{
    for (unsigned from = 0; from < SDSM_PG_NSTATES; from++)
        for (unsigned to = 0; to < SDSM_PG_NSTATES; to++)
            if (!(from == I && to == I))
                check_pair(from, to);
    /* is_home is a truth value, not just 0/1 */
    CHECK_I(!!sdsm_page_transition_ok(I, RO, 7), ==, 1);
    CHECK_I(!!sdsm_page_transition_ok(I, F, -1), ==, 0);
    /* out of range states are never legal */
    for (unsigned s = 0; s <= SDSM_PG_NSTATES + 1; s++)
        for (int home = 0; home < 2; home++) {
            CHECK_I(sdsm_page_transition_ok(SDSM_PG_NSTATES, s, home), ==, 0);
            CHECK_I(sdsm_page_transition_ok(s, SDSM_PG_NSTATES, home), ==, 0);
            CHECK_I(sdsm_page_transition_ok(s, 255, home), ==, 0);
            CHECK_I(sdsm_page_transition_ok(~0u, s, home), ==, 0);
        }
}

/* The diagram has no INVALID -> INVALID loop and no code path needs one. */
static void test_transition_invalid_self(void) { check_pair(I, I); }

static void test_state_names(void)
{
    CHECK_STR(sdsm_pstate_name(SDSM_PG_INVALID), "INVALID");
    CHECK_STR(sdsm_pstate_name(SDSM_PG_FETCHING), "FETCHING");
    CHECK_STR(sdsm_pstate_name(SDSM_PG_READ_ONLY), "READ_ONLY");
    CHECK_STR(sdsm_pstate_name(SDSM_PG_READ_WRITE), "READ_WRITE");
    CHECK_STR(sdsm_pstate_name(SDSM_PG_NSTATES), "?");
    CHECK_STR(sdsm_pstate_name(SDSM_PG_NSTATES + 1), "?");
    CHECK_STR(sdsm_pstate_name(255), "?");
    CHECK_STR(sdsm_pstate_name(~0u), "?");
    CHECK_I(SDSM_PG_INVALID, ==, 0); /* zero-filled metadata must mean INVALID */
}

static void test_state_prot(void)
{
    CHECK_I(sdsm_page_prot(SDSM_PG_INVALID), ==, PROT_NONE);
    CHECK_I(sdsm_page_prot(SDSM_PG_FETCHING), ==, PROT_NONE);
    CHECK_I(sdsm_page_prot(SDSM_PG_READ_ONLY), ==, PROT_READ);
    CHECK_I(sdsm_page_prot(SDSM_PG_READ_WRITE), ==, PROT_READ | PROT_WRITE);
}

/* ---------------------------------------------------------------- region */

#define BASE (SDSM_DEFAULT_HEAP_BASE + 0x1000000000ul) /* clear of a live region */

static void quiet(void)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0)
        dup2(fd, 2);
}

/* Can the application view at p be read (and written)?  Probed in a child. */
static int probe(volatile uint8_t *p, int write)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        quiet(); /* a sanitizer would report the expected fault */
        signal(SIGSEGV, SIG_DFL);
        uint8_t v = *p;
        if (write)
            *p = (uint8_t)(v + 1);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_region(void)
{
    const size_t ps = 16384, size = 64 * ps;
    if (!CHECK_I(sdsm_region_init(size, ps, BASE, 1, 70), ==, 0))
        return;
    sdsm_region_t *R = &sdsm_region;
    CHECK_U((uintptr_t)R->app, ==, BASE);
    CHECK_U(R->size, ==, size);
    CHECK_U(R->page_size, ==, ps);
    CHECK_U(R->shift, ==, 14);
    CHECK_U(R->npages, ==, 64);
    CHECK_I(R->rank, ==, 1);
    CHECK_I(R->nprocs, ==, 70);
    CHECK_U(R->copyset_words, ==, 2);
    CHECK(R->rt != NULL && R->rt != R->app);
    CHECK(R->twin != NULL && R->pages != NULL && R->dirty != NULL);

    /* address helpers */
    uint32_t pg = 12345;
    CHECK_I(sdsm_region_page_of(R->app, &pg), ==, 1);
    CHECK_U(pg, ==, 0);
    CHECK_I(sdsm_region_page_of(R->app + 5 * ps + 17, &pg), ==, 1);
    CHECK_U(pg, ==, 5);
    CHECK_I(sdsm_region_page_of(R->app + size - 1, &pg), ==, 1);
    CHECK_U(pg, ==, 63);
    pg = 12345;
    CHECK_I(sdsm_region_page_of(R->app + size, &pg), ==, 0);
    CHECK_I(sdsm_region_page_of(R->app - 1, &pg), ==, 0);
    CHECK_U(pg, ==, 12345);
    CHECK(sdsm_page_app(3) == R->app + 3 * ps);
    CHECK(sdsm_page_rt(3) == R->rt + 3 * ps);
    CHECK(sdsm_page_twin(3) == R->twin + 3 * ps);

    /* fresh metadata: every page INVALID, no access through the app view */
    for (uint32_t i = 0; i < R->npages; i++)
        CHECK_U(sdsm_page(i)->state, ==, SDSM_PG_INVALID);
    CHECK_I(probe(sdsm_page_app(2), 0), ==, 0);

    /* the runtime view writes what the application view reads */
    memset(sdsm_page_rt(2), 0x5A, ps);
    sdsm_page_set(2, SDSM_PG_READ_ONLY, 1, 1);
    CHECK_U(sdsm_page(2)->state, ==, SDSM_PG_READ_ONLY);
    CHECK_I(probe(sdsm_page_app(2), 0), ==, 1);
    CHECK_I(probe(sdsm_page_app(2), 1), ==, 0);
    CHECK_U(sdsm_page_app(2)[ps - 1], ==, 0x5A);
    CHECK_I(probe(sdsm_page_app(3), 0), ==, 0); /* the neighbour is untouched */
    sdsm_page_set(2, SDSM_PG_READ_WRITE, 1, 1);
    CHECK_I(probe(sdsm_page_app(2), 1), ==, 1);
    sdsm_page_app(2)[7] = 0x11;
    CHECK_U(sdsm_page_rt(2)[7], ==, 0x11);
    /* protect = 0 changes the state only */
    sdsm_page_set(2, SDSM_PG_READ_ONLY, 1, 0);
    CHECK_U(sdsm_page(2)->state, ==, SDSM_PG_READ_ONLY);
    CHECK_I(probe(sdsm_page_app(2), 1), ==, 1);
    sdsm_page_protect(2, 1, SDSM_PG_READ_ONLY);
    CHECK_I(probe(sdsm_page_app(2), 1), ==, 0);
    /* a remote path: INVALID -> FETCHING -> READ_ONLY -> INVALID */
    sdsm_page_set(9, SDSM_PG_FETCHING, 0, 1);
    CHECK_I(probe(sdsm_page_app(9), 0), ==, 0);
    sdsm_page_set(9, SDSM_PG_READ_ONLY, 0, 1);
    CHECK_I(probe(sdsm_page_app(9), 0), ==, 1);
    sdsm_page_set(9, SDSM_PG_INVALID, 0, 1);
    CHECK_I(probe(sdsm_page_app(9), 0), ==, 0);
    /* a batched protection over a range */
    sdsm_page_protect(10, 4, SDSM_PG_READ_WRITE);
    CHECK_I(probe(sdsm_page_app(10), 1), ==, 1);
    CHECK_I(probe(sdsm_page_app(13) + ps - 1, 1), ==, 1);
    CHECK_I(probe(sdsm_page_app(14), 0), ==, 0);

    /* dirty list: each page once per interval, in order */
    sdsm_page_mark_dirty(5);
    sdsm_page_mark_dirty(3);
    sdsm_page_mark_dirty(5);
    sdsm_page_mark_dirty(63);
    uint32_t out[64];
    CHECK_U(sdsm_page_take_dirty(out), ==, 3);
    CHECK_U(out[0], ==, 5);
    CHECK_U(out[1], ==, 3);
    CHECK_U(out[2], ==, 63);
    CHECK_U(sdsm_page(5)->flags & SDSM_PGF_DIRTY, ==, SDSM_PGF_DIRTY);
    CHECK_U(sdsm_page_take_dirty(out), ==, 0);

    /* copysets across the 64-rank word boundary */
    CHECK_I(sdsm_copyset_has(4, 0), ==, 0);
    CHECK_I(sdsm_copyset_add(4, 0), ==, 0);
    CHECK_I(sdsm_copyset_add(4, 63), ==, 0);
    CHECK_I(sdsm_copyset_add(4, 64), ==, 0);
    CHECK_I(sdsm_copyset_add(4, 69), ==, 0);
    for (int r = 0; r < 70; r++)
        CHECK_I(sdsm_copyset_has(4, r), ==, r == 0 || r == 63 || r == 64 || r == 69);
    CHECK_I(sdsm_copyset_has(5, 0), ==, 0);
    sdsm_copyset_clear(4);
    for (int r = 0; r < 70; r++)
        CHECK_I(sdsm_copyset_has(4, r), ==, 0);
    free(sdsm_page(4)->copyset);
    sdsm_page(4)->copyset = NULL;

    /* announced pages (alloc.h): a bit each, across the 64-page word boundary */
    for (uint32_t i = 0; i < R->npages; i++)
        CHECK_I(sdsm_page_announced(i), ==, 0);
    sdsm_page_set_announce(60, 3, 1);
    sdsm_page_set_announce(5, 1, 1);
    for (uint32_t i = 0; i < R->npages; i++)
        CHECK_I(sdsm_page_announced(i), ==, i == 5 || (i >= 60 && i < 63));
    sdsm_page_set_announce(61, 2, 0);
    for (uint32_t i = 0; i < R->npages; i++)
        CHECK_I(sdsm_page_announced(i), ==, i == 5 || i == 60);

    sdsm_region_fini();
    CHECK(sdsm_region.app == NULL);
    CHECK_I(sdsm_region_page_of((void *)BASE, &pg), ==, 0);

    /* the same base is free again */
    CHECK_I(sdsm_region_init(4 * 4096, 4096, BASE, 0, 1), ==, 0);
    CHECK_U(sdsm_region.npages, ==, 4);
    CHECK_U(sdsm_region.shift, ==, 12);
    sdsm_region_fini();

    /* an occupied base is refused, not replaced */
    void *busy =
        mmap((void *)BASE, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(busy == (void *)BASE);
    fprintf(stderr, "(an error about mapping the shared region is expected here)\n");
    CHECK_I(sdsm_region_init(4 * 4096, 4096, BASE, 0, 1), ==, SDSM_ESYS);
    munmap(busy, 4096);
}

/* An illegal transition stops the process (sdsm_page_set -> sdsm_fatal). */
static void test_illegal_transition_is_fatal(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        quiet();
        if (sdsm_region_init(4 * 4096, 4096, BASE, 0, 1))
            _exit(3);
        sdsm_page_set(1, SDSM_PG_READ_WRITE, 0, 1); /* INVALID -> READ_WRITE away from home */
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st));
    CHECK_I(WEXITSTATUS(st), !=, 0);
    CHECK_I(WEXITSTATUS(st), !=, 3);
}

int main(void)
{
    RUN(test_transition_table);
    RUN_BUG(test_transition_invalid_self,
            "src/mem/page.c legal[INVALID][INVALID] = 1: the page.h diagram has no such edge");
    RUN(test_state_names);
    RUN(test_state_prot);
    RUN(test_region);
    RUN(test_illegal_transition_is_fatal);
    return ck_done("test_page");
}
