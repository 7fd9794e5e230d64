/*
 * crash.c - the one line a rank prints before a crash in program code kills
 * it (format in crash.h).
 *
 * Without it the job only said "killed by signal 11" (and, from the other
 * ranks, "lost connection to rank 1").  The address is classified from what
 * this rank knows: the shared region and its live blocks, the stacks, their
 * guards and the thread-local storage of the threads that called
 * sdsm_crash_thread_enter (kept after they end, so a pointer into a thread
 * that has gone is named), what the loader has mapped; the instruction
 * pointer is symbolized with dladdr.
 *
 * Invariants: everything on the signal path is async-signal-safe (no malloc,
 * no stdio: a stack buffer, a small formatter, one write(2)), dladdr aside,
 * which takes only the loader's lock; the process then dies of the same
 * signal with its core (default action restored; the faulting instruction
 * runs again, or a signal that was sent is raised again).  The range table
 * is written under a mutex and read without one: a slot's kind is stored
 * last (release), so a reader sees whole entries.
 */
#include "mem/crash.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/log.h"
#include "core/status.h"
#include "mem/alloc.h"
#include "mem/fault.h"
#include "mem/page.h"

#define ALT_SIZE   (256u << 10) /* as the OpenMP master's: shared-memory faults run on it too */
#define NULL_ZONE  65536u       /* vm.mmap_min_addr's usual value: never mapped below */
#define MAIN_GAP   (1u << 20)   /* the kernel's stack_guard_gap below the main stack */
#define TCB_SIZE   4096u        /* glibc's thread descriptor (about 2.3 KiB) above the pointer */
#define MAX_RANGES 384          /* 3 per thread */

enum { R_FREE, R_STACK, R_GUARD, R_TLS };
enum { TID_NONE = -2, TID_MAIN = -1 };

typedef struct {
    _Atomic int kind;
    _Atomic int ended;
    int rank; /* whose thread: this rank's, or another's (sdsm_crash_note_tls) */
    int tid;  /* job-wide compute thread id, or TID_MAIN */
    uintptr_t lo, hi;
} range_t;

static range_t ranges[MAX_RANGES];
static _Atomic unsigned nranges;
static pthread_mutex_t ranges_mtx = PTHREAD_MUTEX_INITIALIZER;
static size_t tls_static; /* the initial modules' static TLS blocks, summed */

static __thread int my_tid __attribute__((tls_model("initial-exec"))) = TID_NONE;
static __thread void *my_alt __attribute__((tls_model("initial-exec")));

static const int other_sigs[] = {SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NOTHER ((int)(sizeof other_sigs / sizeof *other_sigs))
static struct sigaction old_other[NOTHER];
static int other_set[NOTHER];

/* ---- a formatter for the signal path ---- */

typedef struct {
    char s[1024];
    size_t n;
} line_t;

static void put(line_t *l, const char *s)
{
    while (*s && l->n < sizeof l->s - 1)
        l->s[l->n++] = *s++;
}

static void put_num(line_t *l, uint64_t v, unsigned base)
{
    char d[24];
    int i = 0;
    do {
        d[i++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (i > 0 && l->n < sizeof l->s - 1)
        l->s[l->n++] = d[--i];
}

static void put_hex(line_t *l, uint64_t v)
{
    put(l, "0x");
    put_num(l, v, 16);
}

static void put_dec(line_t *l, long v)
{
    if (v < 0)
        put(l, "-");
    put_num(l, v < 0 ? -(uint64_t)v : (uint64_t)v, 10);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/'); /* async-signal-safe in practice: no state */
    return b ? b + 1 : path;
}

/* ---- what the address is ---- */

static void put_thread(line_t *l, int tid)
{
    if (tid == TID_MAIN) {
        put(l, "the main thread");
        return;
    }
    put(l, "thread ");
    put_dec(l, tid);
}

static void put_range(line_t *l, const range_t *r)
{
    static const char *const names[] = {
        [R_STACK] = "the stack", [R_GUARD] = "the stack guard", [R_TLS] = "thread-local storage"};
    int k = atomic_load_explicit(&r->kind, memory_order_relaxed);
    put(l, names[k]);
    put(l, " of ");
    if (r->rank != sdsm_log_rank) {
        put(l, "rank ");
        put_dec(l, r->rank);
        put(l, "'s ");
        put_thread(l, r->tid);
        put(l, ": another rank's private memory, not shared (a pointer to a threadprivate or "
               "__thread variable, or copyin, passed to other ranks)");
        return;
    }
    int ended = atomic_load_explicit(&r->ended, memory_order_relaxed);
    put_thread(l, r->tid);
    put(l, r->tid == my_tid ? " (this thread)" : ended ? " (ended)" : " (another thread)");
    if (k == R_GUARD)
        put(l, ": a stack overflow");
    else if (ended)
        put(l, ": a pointer into a thread that has ended");
}

/* An address in a recorded stack, guard or TLS: 1 if named.  This rank's
 * own ranges first: another rank's may overlap them. */
static int what_range(line_t *l, uintptr_t a)
{
    unsigned n = atomic_load_explicit(&nranges, memory_order_acquire);
    for (int own = 1; own >= 0; own--)
        for (unsigned i = 0; i < n; i++) {
            const range_t *r = &ranges[i];
            int k = atomic_load_explicit(&r->kind, memory_order_acquire);
            if (k == R_FREE || a < r->lo || a >= r->hi || (r->rank == sdsm_log_rank) != own)
                continue;
            put_range(l, r);
            return 1;
        }
    return 0;
}

static void what_shared(line_t *l, uint32_t pg)
{
    const sdsm_alloc_rec_t *a = sdsm_alloc_find(pg);
    if (!a) {
        put(l, "shared memory in no live allocation (freed, or never allocated)");
        return;
    }
    /* The fault handler serves every page of a live block: it did not. */
    put(l, "shared memory of a live allocation (pages ");
    put_dec(l, a->first);
    put(l, "-");
    put_dec(l, (long)a->first + a->npages - 1);
    put(l, ") that the runtime did not serve: a protocol bug in sdsm, please report it");
}

static void what_protected(line_t *l, uintptr_t a, const void *ctx)
{
    Dl_info di;
    if (sdsm_fault_is_write(ctx) == 1)
        put(l, "read-only memory (mapped, not writable): a write to ");
    else
        put(l, "protected memory (mapped, no access allowed): an access to ");
    if (dladdr((void *)a, &di) && di.dli_fname && di.dli_fname[0]) {
        put(l, "the code or constant data of ");
        put(l, base_name(di.dli_fname));
    } else {
        put(l, "a protected mapping");
    }
}

static void what_segv(line_t *l, const siginfo_t *si, const void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    uint32_t pg;
    if (sdsm_region_page_of(si->si_addr, &pg))
        what_shared(l, pg);
    else if (si->si_code == SEGV_MAPERR && a < NULL_ZONE)
        put(l, "null pointer (an address in the first 64 KiB, where nothing is ever mapped)");
    else if (what_range(l, a))
        ;
    else if (si->si_code == SEGV_ACCERR)
        what_protected(l, a, ctx);
    else
        put(l, "unmapped: nothing is mapped there on this rank (another rank's private memory, "
               "or memory unmapped since)");
}

static void what_other(line_t *l, int sig, const siginfo_t *si)
{
    int c = si->si_code;
    if (sig == SIGFPE)
        put(l, c == FPE_INTDIV   ? "integer divide by zero"
               : c == FPE_INTOVF ? "integer overflow"
               : c == FPE_FLTDIV ? "floating-point divide by zero"
                                 : "arithmetic exception");
    else if (sig == SIGILL)
        put(l, c == ILL_ILLOPC   ? "illegal instruction (invalid opcode)"
               : c == ILL_ILLOPN ? "illegal instruction (invalid operand, or a trap)"
               : c == ILL_PRVOPC ? "illegal instruction (privileged)"
                                 : "illegal instruction");
    else if (sig == SIGBUS)
        put(l, c == BUS_ADRERR   ? "past the end of a mapped file (or no such physical address)"
               : c == BUS_ADRALN ? "misaligned access"
                                 : "bus error (hardware)");
    else
        put(l, "abort");
}

static void what_sent(line_t *l, int sig, const siginfo_t *si)
{
    if (sig == SIGABRT && si->si_pid == getpid()) {
        put(l, "abort() called (a failed assertion, or the C library found corruption)");
        return;
    }
    put(l, "sent by pid ");
    put_dec(l, si->si_pid);
}

/* ---- where the program was ---- */

static uintptr_t ip_of(const void *ctx)
{
    const ucontext_t *uc = ctx;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static void put_ip(line_t *l, const void *ctx)
{
    uintptr_t ip = ip_of(ctx);
    Dl_info di;
    put(l, "ip ");
    put_hex(l, ip);
    if (!ip || !dladdr((void *)ip, &di) || !di.dli_fname)
        return;
    const char *obj = base_name(di.dli_fname);
    if (di.dli_sname && di.dli_saddr) {
        put(l, " in ");
        put(l, di.dli_sname);
        put(l, "+");
        put_hex(l, ip - (uintptr_t)di.dli_saddr);
        put(l, " (");
        put(l, obj);
        put(l, ")");
    } else { /* no exported symbol: an offset for addr2line */
        put(l, " (");
        put(l, obj);
        put(l, "+");
        put_hex(l, ip - (uintptr_t)di.dli_fbase);
        put(l, ")");
    }
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
    }
}

static void die_same(int sig, const siginfo_t *si)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    /* Sent, not raised by an instruction: running it again would not fault.
     * Blocked in the handler, it is delivered when the handler returns. */
    if (si->si_code <= 0)
        raise(sig);
}

void sdsm_crash_report(int sig, const siginfo_t *si, const void *ctx)
{
    int saved = errno;
    line_t l = {.n = 0};
    put(&l, "sdsm: rank ");
    put_dec(&l, sdsm_log_rank < 0 ? 0 : sdsm_log_rank);
    put(&l, ": ");
    if (my_tid >= 0) {
        put_thread(&l, my_tid);
        put(&l, " (tid ");
    } else {
        put(&l, my_tid == TID_MAIN ? "main thread (tid " : "thread (tid ");
    }
    put_dec(&l, gettid());
    put(&l, ") crashed: ");
    put(&l, sig_name(sig));
    if (si->si_code > 0) {
        put(&l, " at ");
        put_hex(&l, (uintptr_t)si->si_addr);
        put(&l, ": ");
        if (sig == SIGSEGV)
            what_segv(&l, si, ctx);
        else
            what_other(&l, sig, si);
    } else {
        put(&l, ": ");
        what_sent(&l, sig, si);
    }
    put(&l, "; ");
    put_ip(&l, ctx);
    l.s[l.n++] = '\n';
    ssize_t w = write(STDERR_FILENO, l.s, l.n);
    (void)w;
    die_same(sig, si);
    errno = saved;
}

static void on_crash(int sig, siginfo_t *si, void *ctx) { sdsm_crash_report(sig, si, ctx); }

/* ---- the ranges of threads, and their alternate stacks ---- */

/* Under ranges_mtx.  This rank's entries overlapping [lo, hi) belong to
 * threads that have ended (the memory was reused): dropped; so is an older
 * entry of the same kind for the same thread of another rank. */
static void note(int kind, int rank, int tid, uintptr_t lo, uintptr_t hi)
{
    unsigned n = atomic_load_explicit(&nranges, memory_order_relaxed), slot = n;
    if (lo >= hi)
        return;
    for (unsigned i = 0; i < n; i++) {
        range_t *r = &ranges[i];
        int k = atomic_load_explicit(&r->kind, memory_order_relaxed);
        int stale = rank == sdsm_log_rank ? r->rank == rank && r->lo < hi && lo < r->hi
                                          : r->rank == rank && r->tid == tid && k == kind;
        if (k != R_FREE && stale)
            atomic_store_explicit(&r->kind, R_FREE, memory_order_release);
        if (slot == n && atomic_load_explicit(&r->kind, memory_order_relaxed) == R_FREE)
            slot = i;
    }
    if (slot >= MAX_RANGES)
        return;
    range_t *r = &ranges[slot];
    r->lo = lo;
    r->hi = hi;
    r->rank = rank;
    r->tid = tid;
    atomic_store_explicit(&r->ended, 0, memory_order_relaxed);
    atomic_store_explicit(&r->kind, kind, memory_order_release);
    if (slot == n)
        atomic_store_explicit(&nranges, n + 1, memory_order_release);
}

static int add_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    size_t *sum = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        size_t al = ph->p_align ? ph->p_align : 1;
        if (ph->p_type == PT_TLS)
            *sum += (ph->p_memsz + al - 1) / al * al;
    }
    return 0;
}

/* The calling thread's stack, guard and static TLS (from glibc's layout:
 * a thread's descriptor and TLS sit at the top of its stack mapping). */
static void note_thread(int tid)
{
    pthread_attr_t a;
    void *addr;
    size_t size, guard = 0, page = (size_t)getpagesize();
    if (pthread_getattr_np(pthread_self(), &a))
        return;
    int bad = pthread_attr_getstack(&a, &addr, &size) || pthread_attr_getguardsize(&a, &guard);
    pthread_attr_destroy(&a);
    if (bad)
        return;
    uintptr_t lo = (uintptr_t)addr, hi = lo + size, tp = (uintptr_t)pthread_self();
    guard = tid == TID_MAIN ? MAIN_GAP : (guard + page - 1) / page * page;
#if defined(__x86_64__) || defined(__i386__)
    uintptr_t tls_lo = tp - tls_static, tls_hi = tp + TCB_SIZE; /* TLS variant II: below tp */
#else
    uintptr_t tls_lo = tp, tls_hi = tp + TCB_SIZE + tls_static;
#endif
    uintptr_t stack_hi = hi;
    if (tp > lo && tp < hi) { /* the TLS is part of the stack mapping */
        tls_hi = hi;
        stack_hi = tls_lo;
    }
    int me = sdsm_log_rank;
    pthread_mutex_lock(&ranges_mtx);
    note(R_GUARD, me, tid, lo - guard, lo);
    note(R_STACK, me, tid, lo, stack_hi);
    note(R_TLS, me, tid, tls_lo, tls_hi);
    pthread_mutex_unlock(&ranges_mtx);
}

static void alt_stack_on(void)
{
    stack_t cur;
    size_t page = (size_t)getpagesize();
    if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
        return; /* it has one (a sanitizer's, or one of its own) */
    uint8_t *m = mmap(NULL, ALT_SIZE + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) {
        sdsm_warn("no alternate signal stack for this thread (mmap: %m): a stack overflow "
                  "will not be reported");
        return;
    }
    /* A guard of its own: overflowing the handler's stack kills, never corrupts. */
    mprotect(m, page, PROT_NONE);
    stack_t ss = {.ss_sp = m + page, .ss_size = ALT_SIZE};
    if (sigaltstack(&ss, NULL)) {
        sdsm_warn("sigaltstack: %m: a stack overflow of this thread will not be reported");
        munmap(m, ALT_SIZE + page);
        return;
    }
    my_alt = m;
}

static void alt_stack_off(void)
{
    size_t page = (size_t)getpagesize();
    stack_t cur;
    if (!my_alt)
        return;
    if (!sigaltstack(NULL, &cur) && cur.ss_sp == (uint8_t *)my_alt + page) {
        stack_t off = {.ss_flags = SS_DISABLE};
        if (sigaltstack(&off, NULL))
            return; /* running on it: leave it */
    }
    munmap(my_alt, ALT_SIZE + page);
    my_alt = NULL;
}

void sdsm_crash_thread_enter(int tid)
{
    my_tid = tid;
    alt_stack_on();
    note_thread(tid);
}

int sdsm_crash_my_tls(uintptr_t *lo, uintptr_t *hi)
{
    int rc = -1;
    pthread_mutex_lock(&ranges_mtx);
    unsigned n = atomic_load_explicit(&nranges, memory_order_relaxed);
    for (unsigned i = 0; i < n && rc; i++) {
        const range_t *r = &ranges[i];
        if (atomic_load_explicit(&r->kind, memory_order_relaxed) == R_TLS && r->rank == sdsm_log_rank &&
            r->tid == my_tid && my_tid != TID_NONE) {
            *lo = r->lo;
            *hi = r->hi;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&ranges_mtx);
    return rc;
}

void sdsm_crash_note_tls(int rank, int tid, uintptr_t lo, uintptr_t hi)
{
    if (rank == sdsm_log_rank)
        return; /* this rank's own are recorded as its threads start */
    pthread_mutex_lock(&ranges_mtx);
    note(R_TLS, rank, tid, lo, hi);
    pthread_mutex_unlock(&ranges_mtx);
}

void sdsm_crash_thread_leave(void)
{
    pthread_mutex_lock(&ranges_mtx);
    unsigned n = atomic_load_explicit(&nranges, memory_order_relaxed);
    for (unsigned i = 0; i < n; i++)
        if (ranges[i].rank == sdsm_log_rank && ranges[i].tid == my_tid)
            atomic_store_explicit(&ranges[i].ended, 1, memory_order_relaxed);
    pthread_mutex_unlock(&ranges_mtx);
    alt_stack_off();
    my_tid = TID_NONE;
}

int sdsm_crash_install(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (!tls_static)
        dl_iterate_phdr(add_tls, &tls_static);
    sdsm_crash_thread_enter(TID_MAIN);
    /* A program that handles one of these itself keeps it. */
    for (int i = 0; i < NOTHER; i++) {
        if (sigaction(other_sigs[i], NULL, &old) || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        if (sigaction(other_sigs[i], &sa, &old_other[i])) {
            sdsm_error_log("sigaction(%s): %m", sig_name(other_sigs[i]));
            return SDSM_ESYS;
        }
        other_set[i] = 1;
    }
    return 0;
}

void sdsm_crash_uninstall(void)
{
    struct sigaction cur;
    for (int i = 0; i < NOTHER; i++) /* unless the program has put its own handler since */
        if (other_set[i] && !sigaction(other_sigs[i], NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_crash)
            sigaction(other_sigs[i], &old_other[i], NULL);
    memset(other_set, 0, sizeof other_set);
    if (my_tid == TID_MAIN)
        sdsm_crash_thread_leave();
}
