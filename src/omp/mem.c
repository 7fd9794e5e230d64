/*
 * mem.c - where an OpenMP program's shared data lives (see omp_int.h).
 *
 * OpenMP shares a program's globals, its heap and the variables of main
 * (passed to parallel regions by address).  sdsmcc links the program with
 * -z relro -z now, so its writable data after the RELRO part is only the
 * program's own .data and .bss (no lazily bound GOT; -fPIC leaves no copy
 * of the C library's variables there).  Those pages become the shared
 * region's first pages, with rank 0's image; address randomization is off
 * under sdsmrun, so they are at the same address in every rank (sdsm_init
 * checks).  The C library's brk heap grows right after .bss: a hole is left
 * for it before the rest of the region.
 */
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "omp_int.h"
#include "sdsm.h"

int sdsm__omp_adopt(void *start, size_t len, size_t gap, int fences);
int sdsm__omp_data_home(int home);
int sdsm__omp_is_shared(const void *p);
void sdsm__omp_region(uintptr_t *lo, uintptr_t *hi);
void *sdsm__omp_stack_alloc(size_t len, size_t guard, const char *overflow);

#define BRK_HOLE (1ul << 30) /* room left for the C library's brk heap */
/* Below the master's stack, never touched: as much as Linux keeps below a
 * process's stack (stack_guard_gap), so a large frame cannot step over it. */
#define STACK_GUARD (1ul << 20)
#define PAGE        4096ul
/* The master thread's frames outside main (start-up, the final barrier). */
#define MASTER_THREAD_FRAMES (256ul << 10)

static struct {
    uintptr_t data, data_end; /* the program's shared data */
    uintptr_t text, text_end; /* the program's code (override.c: who calls) */
    int bind_now, relro;
    void *stack;
    size_t stack_len;
    void *thread_stack; /* the master thread's own stack, its TLS at the top */
    size_t thread_stack_len;
    uintptr_t region_lo, region_hi; /* the shared region, once sdsm_init made it */
} prog;

static int scan_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    uintptr_t base = info->dlpi_addr, rw_end = 0, relro_end = 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && hi > rw_end)
            rw_end = hi;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (!prog.text || lo < prog.text)
                prog.text = lo;
            if (hi > prog.text_end)
                prog.text_end = hi;
        }
        if (ph->p_type == PT_GNU_RELRO) {
            relro_end = hi;
            prog.relro = 1;
        }
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)lo;
    }
    for (; dyn && dyn->d_tag != DT_NULL; dyn++)
        if ((dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_BIND_NOW)) ||
            (dyn->d_tag == DT_FLAGS_1 && (dyn->d_un.d_val & DF_1_NOW)) || dyn->d_tag == DT_BIND_NOW)
            prog.bind_now = 1;
    prog.data = (relro_end + PAGE - 1) & ~(PAGE - 1);
    prog.data_end = (rw_end + PAGE - 1) & ~(PAGE - 1);
    return 1; /* the program comes first */
}

static void die(const char *what)
{
    const char *r = getenv("SDSM_RANK");
    fprintf(stderr, "sdsm: rank %s: OpenMP program: %s\n", r ? r : "0", what);
    exit(1);
}

/*
 * The program's fences as the flag support should see them (fences.c).
 * Flushes made calls publish at once only while all of the program's data
 * has one home, rank 0 or the rank SDSM_OMP_HOME names (heap.c: the
 * default for a program with a flush).  Spread over several homes
 * (SDSM_OMP_HOME=first-touch, cyclic or block, which rank 0 warns about),
 * a reader can see a flag from one home before its copy of data homed at
 * another is gone, and flushes that publish at once made that likelier:
 * NPB LU.S at 2 ranks under first touch failed its verification 2 runs in
 * 8 with them, none in 8 with the quiet publisher alone.  So there they
 * count as fence instructions: the quiet publisher runs and the calls are
 * fences.
 */
static int program_fences(void)
{
    int f = sdsm_omp_program_fences();
    if ((f & SDSM_OMP_FENCE_CALLS) && sdsm_omp_home_spread())
        f = (f & ~SDSM_OMP_FENCE_CALLS) | SDSM_OMP_FENCE_CODE;
    return f;
}

/* The program's data joins the shared region at sdsm_init. */
static void adopt_data(void)
{
    dl_iterate_phdr(scan_program, NULL);
    if (!prog.bind_now || !prog.relro)
        die("the program was not linked by sdsmcc (it needs -z now and -z relro: nothing may "
            "write into its data behind the runtime's back); link it with sdsmcc");
    if (prog.data_end <= prog.data)
        return; /* no writable data of its own */
    uintptr_t brk_now = (uintptr_t)sbrk(0);
    if (brk_now > prog.data_end + BRK_HOLE)
        die("the C library's brk heap already reaches past the room kept for it");
    if (sdsm__omp_adopt((void *)prog.data, prog.data_end - prog.data, BRK_HOLE, program_fences()))
        die("internal error: the program's data is not page-aligned");
}

/* SDSM_OMP_STACK: a size (K, M or G; bytes if none), 0 if unset. */
static size_t stack_size_from_env(void)
{
    const char *s = getenv("SDSM_OMP_STACK");
    if (!s || !*s)
        return 0;
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    unsigned shift = 0;
    switch (*e) {
    case 'G':
    case 'g':
        shift = 30;
        e++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        e++;
        break;
    case 'K':
    case 'k':
        shift = 10;
        e++;
        break;
    }
    if (*e || *s == '-' || v > (1ull << 40) >> shift || (v << shift) < (64ull << 10))
        die("SDSM_OMP_STACK: expected a size from 64K to 1024G, such as 512K or 64M");
    return ((size_t)(v << shift) + PAGE - 1) & ~(PAGE - 1);
}

/* "8M", "1536K", "68K": what the overflow message says. */
static void size_text(size_t n, char *buf, size_t len)
{
    if (n % (1ul << 20) == 0)
        snprintf(buf, len, "%zuM", n >> 20);
    else
        snprintf(buf, len, "%zuK", (n + 1023) >> 10);
}

/* The static TLS of every module loaded at start (the program's, the C
 * library's, ...): what the C library puts at the top of a thread's stack. */
static int add_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    size_t *sum = arg;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            *sum += info->dlpi_phdr[i].p_memsz + info->dlpi_phdr[i].p_align;
    return 0;
}

/* Room for the master thread's TLS, its thread descriptor and the few
 * frames it runs before and after main (which runs on the master stack). */
static size_t thread_stack_size(void)
{
    size_t tls = 0;
    dl_iterate_phdr(add_tls, &tls);
    return ((tls + PAGE - 1) & ~(PAGE - 1)) + MASTER_THREAD_FRAMES;
}

/*
 * The master runs main on a stack in shared memory; the fault handler of a
 * thread whose stack is shared memory needs a stack of its own.  Below it,
 * a guard: an overflow stops the job with a message rather than reach the
 * memory underneath.
 *
 * Above it, in the same block, the master thread's own stack, on which the
 * C library puts its TLS: so the master's threadprivate variables are
 * shared memory (homed at rank 0, never write-protected there, like main's
 * stack), at addresses no other rank uses.  gcc's copyin reads the
 * master's copy by address in every thread, and copyprivate hands out the
 * addresses of the single thread's (the master's) variables.  Only the
 * runtime's few frames run on that stack; it has no guard of its own.
 */
static void make_master_stack(void)
{
    size_t len = stack_size_from_env();
    if (!len) {
        struct rlimit rl;
        len = 8ul << 20;
        if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > len)
            len = rl.rlim_cur;
        if (len > (256ul << 20))
            len = 256ul << 20;
    }
    size_t tlen = thread_stack_size();
    char size[32], overflow[256];
    size_text(len, size, sizeof size);
    snprintf(overflow, sizeof overflow,
             "the OpenMP master thread overflowed its stack: main runs "
             "on a %s stack in shared memory; raise SDSM_OMP_STACK (default: the stack limit, "
             "ulimit -s, from 8M to 256M)",
             size);
    /* collective: every rank reaches main's variables */
    prog.stack = sdsm__omp_stack_alloc(len + tlen, STACK_GUARD, overflow);
    if (!prog.stack)
        die("cannot allocate the master thread's stack in shared memory (SDSM_OMP_STACK; "
            "SDSM_HEAP_SIZE bounds the whole region)");
    prog.stack_len = len;
    prog.thread_stack = (char *)prog.stack + len;
    prog.thread_stack_len = tlen;
}

/*
 * ibec binds the writes of a critical section to its lock by write-protecting
 * pages at every section's start and end; the master's stack cannot take a
 * fault inside the C library (which writes it with its own locks held), and
 * without protection ibec cannot see the master's writes there.  OpenMP
 * programs run under hlrc (the default) or update.
 */
static void check_protocol(void)
{
    const char *p = getenv("SDSM_PROTOCOL");
    if (p && !strcmp(p, "ibec"))
        die("SDSM_PROTOCOL=ibec: OpenMP programs run under hlrc (the default) or update; ibec "
            "tracks writes by write-protecting pages at every critical section, which the master "
            "thread's stack (shared, written by the C library with its locks held) cannot allow");
}

void sdsm_omp_boot(int *argc, char ***argv)
{
    check_protocol();
    adopt_data();
    int rc = sdsm_init(argc, argv);
    if (rc) {
        fprintf(stderr, "sdsm: OpenMP program: sdsm_init failed: %s\n", sdsm_strerror(rc));
        exit(1);
    }
    if (sdsm_check_addresses())
        die("the ranks do not have the program at the same addresses: address randomization is "
            "on (unset SDSM_ASLR, or start the program under setarch -R)");
    sdsm__omp_region(&prog.region_lo, &prog.region_hi);
    make_master_stack();
    sdsm_omp_heap_init();
    /* The globals as the heap (SDSM_OMP_HOME; rank 0 by default in a
     * program with a flush: heap.c says why). */
    int home = sdsm_omp_heap_policy();
    if (prog.data_end > prog.data && (rc = sdsm__omp_data_home(home))) {
        fprintf(stderr, "sdsm: OpenMP program: cannot place its globals: %s\n", sdsm_strerror(rc));
        exit(1);
    }
    sdsm_omp_fence_start();
}

void *sdsm_omp_master_stack_bounds(size_t *len)
{
    *len = prog.stack_len;
    return prog.stack;
}

void *sdsm_omp_master_thread_stack(size_t *len)
{
    *len = prog.thread_stack_len;
    return prog.thread_stack;
}

void *sdsm_omp_master_stack(size_t *len)
{
    static __thread char *alt;
    if (!alt) {
        size_t n = 256u << 10;
        stack_t ss = {.ss_size = n};
        if (!(alt = malloc(n)))
            die("out of memory for the fault handler's stack");
        ss.ss_sp = alt;
        if (sigaltstack(&ss, NULL))
            die("sigaltstack failed");
    }
    *len = prog.stack_len;
    return prog.stack;
}

int sdsm_omp_is_shared(const void *p)
{
    /* Most buffers of the system calls, and a worker's private data, are
     * outside the region: no call. */
    uintptr_t a = (uintptr_t)p;
    return a >= prog.region_lo && a < prog.region_hi && sdsm__omp_is_shared(p);
}

int sdsm_omp_in_region(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= prog.region_lo && a < prog.region_hi;
}

int sdsm_omp_from_program(const void *caller)
{
    uintptr_t c = (uintptr_t)caller;
    return c >= prog.text && c < prog.text_end;
}
