/*
 * fences.c - does the program synchronize through plain flags, and the
 * flush that sdsmcc makes a call.
 *
 * `#pragma omp flush` compiles to a memory fence and no call, so a thread
 * spinning on a plain flag with flush (`while (!flag) { #pragma omp flush }`)
 * never enters the runtime, and its rank's valid copy of the flag's page
 * would never change.  The flag support (SDSM_HOME_TWINS, and the quiet
 * publisher SDSM_QUIET_US) makes such programs end, but costs those that
 * never spin: home pages are twinned, zero-copy reads are off.  A program
 * can only rely on a plain flag through an explicit flush: every other
 * flush OpenMP implies (barriers, locks, atomics, task waits) is a runtime
 * call, which already makes the writes before it visible.  So the support
 * is wanted exactly when the program's code holds a fence: its own code and
 * that of every loaded library sdsmcc compiled (the marker section), looked
 * at once, at start-up.  Fences in the C library and in sdsm do not count:
 * they do not touch the program's data without a call.
 *
 * gcc on x86-64 (sdsmcc's -wrapper, tools/sdsmcc/sdsmcc-wrap) turns each
 * fence of the compiled code into a call of sdsm_omp_fence and marks the
 * object (section .sdsm_fence): such a flush can publish the rank's pending
 * writes at once, as an unlock does (SDSM_FLUSH_PUBLISH=1), instead of
 * waiting for the rank to go quiet.  sdsm_omp_fence keeps every register
 * and the flags as the fence did (the compiler saw no call there; sdsmcc
 * compiles with -mno-red-zone, so the call's return address overwrites
 * nothing), and where no publish is wanted (one rank, one copy of the
 * memory, a protocol without one) it is the fence and a return.
 *
 * The search for fences left as instructions is for what gcc and clang
 * emit for a sequentially consistent fence on x86-64 (mfence; lock or $0
 * to the top of the stack).  A byte pattern inside another instruction can
 * only turn the support on, which is safe.  Acquire and release fences
 * (`flush acquire`) are no instruction on x86-64 and are not seen: such a
 * program sets SDSM_QUIET_US and SDSM_HOME_TWINS itself.  On other
 * architectures the support is on.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "omp_int.h"

#if defined(__x86_64__)
static const struct {
    unsigned char bytes[6];
    unsigned len;
} fence_codes[] = {
    {{0x0f, 0xae, 0xf0}, 3},                   /* mfence */
    {{0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00}, 6}, /* lock orq $0, (%rsp) */
    {{0xf0, 0x83, 0x0c, 0x24, 0x00}, 5},       /* lock orl $0, (%rsp) */
};

static int has_fence(const unsigned char *p, size_t len)
{
    for (size_t at = 0; at < len; at++) {
        if (p[at] != 0x0f && p[at] != 0xf0)
            continue;
        for (unsigned i = 0; i < sizeof fence_codes / sizeof fence_codes[0]; i++)
            if (len - at >= fence_codes[i].len && !memcmp(p + at, fence_codes[i].bytes, fence_codes[i].len))
                return 1;
    }
    return 0;
}
#endif

/* Nonzero if the ELF file at path has a section named `name`. */
static int file_has_section(const char *path, const char *name)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
    if (fd < 0)
        return 0;
    ElfW(Ehdr) eh;
    ElfW(Shdr) *sh = NULL;
    char *names = NULL;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shnum == 0 || eh.e_shnum > 4096 ||
        eh.e_shstrndx >= eh.e_shnum)
        goto out;
    size_t shlen = (size_t)eh.e_shnum * sizeof *sh;
    if (!(sh = malloc(shlen)) || pread(fd, sh, shlen, (off_t)eh.e_shoff) != (ssize_t)shlen)
        goto out;
    const ElfW(Shdr) *str = &sh[eh.e_shstrndx];
    if (str->sh_size == 0 || str->sh_size > (1u << 20) || !(names = malloc(str->sh_size + 1)) ||
        pread(fd, names, str->sh_size, (off_t)str->sh_offset) != (ssize_t)str->sh_size)
        goto out;
    names[str->sh_size] = 0;
    for (unsigned i = 0; i < eh.e_shnum && !found; i++)
        found = sh[i].sh_name < str->sh_size && !strcmp(names + sh[i].sh_name, name);
out:
    free(names);
    free(sh);
    close(fd);
    return found;
}

/* The file of a loaded object: the program's own has no name. */
static const char *object_path(const struct dl_phdr_info *info)
{
    return info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *fences = arg, first = info->dlpi_name == NULL || !*info->dlpi_name;
    /* The program itself (first, no name) was linked by sdsmcc; a library
     * counts only if sdsmcc compiled it. */
    if (!first && !file_has_section(info->dlpi_name, ".sdsm_omp"))
        return 0;
    if (!(*fences & SDSM_OMP_FENCE_CALLS) && file_has_section(object_path(info), ".sdsm_fence"))
        *fences |= SDSM_OMP_FENCE_CALLS;
#if defined(__x86_64__)
    for (int i = 0; i < info->dlpi_phnum && !(*fences & SDSM_OMP_FENCE_CODE); i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && (ph->p_flags & PF_R) &&
            has_fence((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz))
            *fences |= SDSM_OMP_FENCE_CODE;
    }
#else
    *fences |= SDSM_OMP_FENCE_CODE;
#endif
    return 0;
}

int sdsm_omp_program_fences(void)
{
    static _Atomic int known = -1; /* the loaded objects at start-up */
    int fences = atomic_load_explicit(&known, memory_order_relaxed);
    if (fences < 0) {
        fences = 0;
        dl_iterate_phdr(scan_object, &fences);
        atomic_store_explicit(&known, fences, memory_order_relaxed);
    }
    return fences;
}

/*
 * sdsm_omp_fence: what sdsmcc puts where the compiled code had a fence.
 * It jumps to sdsm_omp_fence_to: sdsm_omp_fence_fast, the fence alone; or
 * (set once sdsm_init has run, put back before sdsm_finalize)
 * sdsm_omp_fence_save: every register, the flags and the vector state
 * (xsave, else fxsave) saved on a 64-byte aligned area of the stack,
 * fence_slow called, all restored.
 */
#if defined(__x86_64__)
extern char sdsm_omp_fence_fast[] __attribute__((visibility("hidden")));
extern char sdsm_omp_fence_save[] __attribute__((visibility("hidden")));
__attribute__((visibility("hidden"))) void *sdsm_omp_fence_to = sdsm_omp_fence_fast;
#endif
/* Set by each flush this thread made through sdsm_omp_fence: an atomic
 * read-modify-write after one publishes the rank's writes first
 * (atomic.c, shared_op), as the flag of `data; flush; atomic update` must
 * not reach another rank before the data. */
__attribute__((visibility("hidden"), tls_model("initial-exec"))) __thread unsigned char sdsm_omp_flushed;
__attribute__((visibility("hidden"))) unsigned sdsm_omp_fence_area = 512 + 64; /* bytes to reserve */
__attribute__((visibility("hidden"))) int sdsm_omp_fence_xsave;

int sdsm__omp_flush(void);

__attribute__((visibility("hidden"), used)) void sdsm_omp_fence_slow(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (sdsm__omp_flush())
        _exit(1); /* (sdsm has said why) */
}

#if defined(__x86_64__)
/* The xsave area's size for the features the system enabled, or 0 where
 * the system does not save that state (then fxsave's 512 bytes). */
static unsigned xsave_size(void)
{
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!(c & (1u << 27))) /* OSXSAVE */
        return 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
    return b >= 576 ? b : 0;
}

__asm__(".text\n"
        ".globl sdsm_omp_fence\n"
        ".type sdsm_omp_fence, @function\n"
        "sdsm_omp_fence:\n"
        ".cfi_startproc\n"
        "    endbr64\n"
        "    jmp *sdsm_omp_fence_to(%rip)\n" /* (a jump, not a compare: the flags stay) */
        ".globl sdsm_omp_fence_fast\n"
        ".hidden sdsm_omp_fence_fast\n"
        "sdsm_omp_fence_fast:\n"
        "    endbr64\n"
        "    pushq %rax\n" /* (sdsmcc's -mno-red-zone: nothing lives below %rsp) */
        ".cfi_adjust_cfa_offset 8\n"
        "    movq sdsm_omp_flushed@gottpoff(%rip), %rax\n"
        "    movb $1, %fs:(%rax)\n" /* (moves: the flags stay) */
        "    popq %rax\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    mfence\n"
        "    ret\n"
        ".globl sdsm_omp_fence_save\n"
        ".hidden sdsm_omp_fence_save\n"
        "sdsm_omp_fence_save:\n"
        "    endbr64\n"
        "    pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "    movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "    pushfq\n"
        "    pushq %rax\n"
        "    pushq %rcx\n"
        "    pushq %rdx\n"
        "    pushq %rsi\n"
        "    pushq %rdi\n"
        "    pushq %r8\n"
        "    pushq %r9\n"
        "    pushq %r10\n"
        "    pushq %r11\n"
        "    movl sdsm_omp_fence_area(%rip), %eax\n"
        "    subq %rax, %rsp\n"
        "    andq $-64, %rsp\n"
        "    xorl %eax, %eax\n" /* the xsave header: xrstor wants its reserved bytes 0 */
        "    movq %rax, 512(%rsp)\n"
        "    movq %rax, 520(%rsp)\n"
        "    movq %rax, 528(%rsp)\n"
        "    movq %rax, 536(%rsp)\n"
        "    movq %rax, 544(%rsp)\n"
        "    movq %rax, 552(%rsp)\n"
        "    movq %rax, 560(%rsp)\n"
        "    movq %rax, 568(%rsp)\n"
        "    cmpl $0, sdsm_omp_fence_xsave(%rip)\n"
        "    je 2f\n"
        "    movl $-1, %eax\n"
        "    movl $-1, %edx\n"
        "    xsave64 (%rsp)\n"
        "    jmp 3f\n"
        "2:  fxsave64 (%rsp)\n"
        "3:  call sdsm_omp_fence_slow\n"
        "    cmpl $0, sdsm_omp_fence_xsave(%rip)\n"
        "    je 4f\n"
        "    movl $-1, %eax\n"
        "    movl $-1, %edx\n"
        "    xrstor64 (%rsp)\n"
        "    jmp 5f\n"
        "4:  fxrstor64 (%rsp)\n"
        "5:  leaq -80(%rbp), %rsp\n"
        "    popq %r11\n"
        "    popq %r10\n"
        "    popq %r9\n"
        "    popq %r8\n"
        "    popq %rdi\n"
        "    popq %rsi\n"
        "    popq %rdx\n"
        "    popq %rcx\n"
        "    popq %rax\n"
        "    popfq\n"
        "    popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        ".cfi_endproc\n"
        ".size sdsm_omp_fence, .-sdsm_omp_fence\n");
#else
static int fence_mode;
void sdsm_omp_fence(void)
{
    sdsm_omp_flushed = 1;
    if (fence_mode)
        sdsm_omp_fence_slow();
    else
        atomic_thread_fence(memory_order_seq_cst);
}
#endif

int sdsm__omp_flush_mode(void);

void sdsm_omp_fence_start(void)
{
#if defined(__x86_64__)
    unsigned x = xsave_size();
    sdsm_omp_fence_xsave = x != 0;
    sdsm_omp_fence_area = (x ? x : 512 + 64) + 64;
    if (sdsm__omp_flush_mode())
        sdsm_omp_fence_to = sdsm_omp_fence_save;
#else
    fence_mode = sdsm__omp_flush_mode();
#endif
}

void sdsm_omp_fence_stop(void)
{
#if defined(__x86_64__)
    sdsm_omp_fence_to = sdsm_omp_fence_fast;
#else
    fence_mode = 0;
#endif
}
