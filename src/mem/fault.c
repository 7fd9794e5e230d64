/*
 * fault.c - SIGSEGV entry point.
 *
 * Kept short on purpose (no malloc, no stdio): find the page, learn read or
 * write from the CPU's error code, call the protocol.  Faults outside the
 * shared region, or on shared addresses that belong to no live allocation,
 * are passed on: to the previous SA_SIGINFO handler (sanitizers, debuggers'
 * helpers), or, where the default action was to follow, to the crash
 * report (crash.c: one line on what the address is and where the program
 * was), which restores the default action before we return, so the
 * faulting instruction runs again and the process dies with SIGSEGV and a
 * core dump exactly as it would without sdsm.  A fault on the guard below a
 * stack in shared memory (sdsm_fault_guard) stops the job with a message
 * naming that stack: the protocol would serve the guard like any page of
 * its block, and the overflow would go on into the memory underneath.
 */
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/wait.h"
#include "core/blocked.h"
#include "mem/crash.h"
#include "mem/page.h"

static struct sigaction old_segv;
static sdsm_fault_fn handler;
static int installed;
static struct {
    uint32_t first, n;
    char what[512];
} guard;
/* The pthread stacks of a rank (sdsm_fault_guards): count stacks, stride
 * pages apart, each above n guard pages. */
static struct {
    uint32_t first, n, stride, count;
    char what[256];
} stacks;

void sdsm_fault_guard(uint32_t first, uint32_t n, const char *what)
{
    guard.first = first;
    guard.n = n;
    snprintf(guard.what, sizeof guard.what, "%s", what ? what : "");
}

void sdsm_fault_guards(uint32_t first, uint32_t n, uint32_t stride, uint32_t count, const char *what)
{
    stacks.first = first;
    stacks.n = n;
    stacks.stride = stride;
    stacks.count = count;
    snprintf(stacks.what, sizeof stacks.what, "%s", what ? what : "");
}

static int in_stack_guard(uint32_t pg)
{
    uint32_t off = pg - stacks.first;
    return stacks.stride && pg >= stacks.first && off / stacks.stride < stacks.count &&
           off % stacks.stride < stacks.n;
}

int sdsm_fault_guarded(uint32_t first, uint32_t n)
{
    uint64_t end = (uint64_t)first + n;
    if (guard.n && guard.first < end && first < (uint64_t)guard.first + guard.n)
        return 1;
    uint64_t rows_end = (uint64_t)stacks.first + (uint64_t)stacks.stride * stacks.count;
    return stacks.stride && stacks.count && stacks.first < end && first < rows_end;
}

int sdsm_fault_is_write(const void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ctx;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#elif defined(__aarch64__)
    /* ESR is in the first extension record; WnR is bit 6. */
    const ucontext_t *uc = ctx;
    const struct _aarch64_ctx *h = (const void *)uc->uc_mcontext.__reserved;
    while (h->magic) {
        if (h->magic == ESR_MAGIC)
            return (((const struct esr_context *)h)->esr >> 6) & 1;
        h = (const void *)((const char *)h + h->size);
    }
    return 0;
#else
    (void)ctx;
    return -1; /* unknown: the protocol treats a fault on a readable page as a write */
#endif
}

static void chain(int sig, siginfo_t *si, void *ctx)
{
    if ((old_segv.sa_flags & SA_SIGINFO) && old_segv.sa_sigaction) {
        old_segv.sa_sigaction(sig, si, ctx);
        return;
    }
    if (old_segv.sa_handler != SIG_DFL && old_segv.sa_handler != SIG_IGN) {
        old_segv.sa_handler(sig);
        return;
    }
    /* Default action: say what crashed, then die of it on return. */
    sdsm_crash_report(sig, si, ctx);
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    uint32_t pg;
    if (si->si_code > 0 && sdsm_region_page_of(si->si_addr, &pg)) {
        /* Before the protocol: it would make the guard an ordinary page. */
        if (pg - guard.first < guard.n)
            sdsm_fatal("%s; access at %p", guard.what, si->si_addr);
        if (in_stack_guard(pg))
            sdsm_fatal("%s; access at %p", stacks.what, si->si_addr);
        int saved = errno;
        sdsm_wait_save_t sv; /* so a fault that never ends says which page it waits for */
        sdsm_wait_enter(&sv, SDSM_WAIT_PAGE, pg);
        uint64_t t0 = sdsm_now_ns();
        int rc = handler(pg, sdsm_fault_is_write(ctx));
        sdsm_stat_add(SDSM_ST_FAULT_WAIT_NS, sdsm_now_ns() - t0);
        sdsm_wait_leave(&sv);
        sdsm_wait_resume();
        errno = saved;
        if (rc == 0)
            return;
    }
    chain(sig, si, ctx);
}

int sdsm_fault_install(sdsm_fault_fn fn)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    /* SA_ONSTACK: a thread whose stack is itself shared memory (an OpenMP
     * program's master) takes its faults on an alternate stack. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    handler = fn;
    if (sigaction(SIGSEGV, &sa, &old_segv)) {
        sdsm_error_log("sigaction(SIGSEGV): %m");
        return SDSM_ESYS;
    }
    installed = 1;
    return sdsm_crash_install();
}

void sdsm_fault_uninstall(void)
{
    if (installed) {
        sigaction(SIGSEGV, &old_segv, NULL);
        sdsm_crash_uninstall();
    }
    installed = 0;
    guard.n = 0;
}
