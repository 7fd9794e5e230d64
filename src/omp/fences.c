/*
 * fences.c - does the program synchronize through plain flags?
 *
 * `#pragma omp flush` compiles to a memory fence and no call, so a thread
 * spinning on a plain flag with flush (`while (!flag) { #pragma omp flush }`)
 * never enters the runtime, and its rank's valid copy of the flag's page
 * would never change.  The flag support (SDSM_QUIET_US, SDSM_HOME_TWINS)
 * makes such programs end, but costs those that never spin: home pages are
 * twinned, zero-copy reads are off.  A program can only rely on a plain
 * flag through an explicit flush: every other flush OpenMP implies
 * (barriers, locks, atomics, task waits) is a runtime call, which already
 * makes the writes before it visible.  So the support is wanted exactly
 * when the program's code holds a fence: its own code and that of every
 * loaded library sdsmcc compiled (the marker section), looked at once, at
 * start-up.  Fences in the C library and in sdsm do not count: they do not
 * touch the program's data without a call.
 *
 * The search is for the instructions gcc and clang emit for a sequentially
 * consistent fence on x86-64 (mfence; lock or $0 to the top of the stack).
 * A byte pattern inside another instruction can only turn the support on,
 * which is safe.  Acquire and release fences (`flush acquire`) are no
 * instruction on x86-64 and are not seen: such a program sets SDSM_QUIET_US
 * and SDSM_HOME_TWINS itself.  On other architectures the support is on.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
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

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    int *fences = arg, first = info->dlpi_name == NULL || !*info->dlpi_name;
    /* The program itself (first, no name) was linked by sdsmcc; a library
     * counts only if sdsmcc compiled it. */
    if (!first && !file_has_section(info->dlpi_name, ".sdsm_omp"))
        return 0;
#if defined(__x86_64__)
    for (int i = 0; i < info->dlpi_phnum && !*fences; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && (ph->p_flags & PF_R))
            *fences = has_fence((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz);
    }
#else
    *fences = 1;
#endif
    return *fences;
}

int sdsm_omp_program_fences(void)
{
    int fences = 0;
    dl_iterate_phdr(scan_object, &fences);
    return fences;
}
