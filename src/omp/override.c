/*
 * override.c - the C library functions libsdsm-omp replaces, and why.
 *
 * An OpenMP program built by sdsmcc links libsdsm-omp ahead of the C
 * library, so these definitions take the C library's names for the whole
 * process: calls from the program, from other libraries and from libsdsm
 * itself all land here.  Each one serves the program's own calls its way
 * and passes every other call on to the C library unchanged, so the rest of
 * sdsm calls them as plain C library functions.  This file alone defines
 * C library names (tests/unit/layer_calls.sh checks it).
 *
 *   malloc, calloc, realloc, free, posix_memalign, aligned_alloc,
 *   memalign, valloc, pvalloc, malloc_usable_size
 *       from the program's code: blocks of the shared heap (heap.c), so
 *       that data one thread allocates is visible to threads of other
 *       ranks; from libraries and the runtime: the C library's private
 *       heap.  free and realloc tell the two apart by address.
 *   strdup, strndup, asprintf, vasprintf
 *       allocate inside the C library, whose own malloc would take the
 *       private heap: from the program, the string comes from the shared
 *       heap as malloc's blocks do.
 *   read, pread, write, pwrite, recv, send, fread, fwrite
 *       the kernel fails a system call on a page the process may not
 *       access (EFAULT) instead of faulting: the buffer's shared pages are
 *       touched from user space first.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "omp_int.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

/* --- the heap (heap.c) ---------------------------------------------------- */

#define PAGE 4096ul

/* The caller's own code, once the heap is up: served by the shared heap. */
#define FROM_PROGRAM() (sdsm_omp_heap_ready() && sdsm_omp_from_program(__builtin_return_address(0)))

void *malloc(size_t n) { return FROM_PROGRAM() ? sdsm_omp_heap_alloc(n, 0) : __libc_malloc(n); }

void *calloc(size_t n, size_t size)
{
    if (!FROM_PROGRAM())
        return __libc_calloc(n, size);
    size_t t;
    if (__builtin_mul_overflow(n, size, &t)) {
        errno = ENOMEM;
        return NULL;
    }
    return sdsm_omp_heap_alloc(t, 1);
}

void free(void *p)
{
    if (!p)
        return;
    if (sdsm_omp_heap_has(p))
        sdsm_omp_heap_free(p);
    else
        __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return FROM_PROGRAM() ? sdsm_omp_heap_alloc(n, 0) : __libc_malloc(n);
    if (!sdsm_omp_heap_has(p))
        return __libc_realloc(p, n);
    return sdsm_omp_heap_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *))
        return EINVAL;
    void *p = FROM_PROGRAM() ? sdsm_omp_heap_aligned(align, n) : __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (!align || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return FROM_PROGRAM() ? sdsm_omp_heap_aligned(align, n) : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
    if (!align || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return FROM_PROGRAM() ? sdsm_omp_heap_aligned(align, n) : __libc_memalign(align, n);
}

void *valloc(size_t n) { return FROM_PROGRAM() ? sdsm_omp_heap_aligned(PAGE, n) : __libc_memalign(PAGE, n); }

void *pvalloc(size_t n)
{
    n = (n + PAGE - 1) & ~(PAGE - 1);
    return FROM_PROGRAM() ? sdsm_omp_heap_aligned(PAGE, n ? n : PAGE) : __libc_memalign(PAGE, n ? n : PAGE);
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (sdsm_omp_heap_has(p))
        return sdsm_omp_heap_usable(p);
    static size_t (*libc_usable)(void *);
    if (!libc_usable)
        libc_usable = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return libc_usable ? libc_usable(p) : 0;
}

/* The C library's own strdup would take its block from the C library's
 * private heap: a string made by one rank's thread and read or freed by
 * another (the master, after a region) must come from the shared heap. */
char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = FROM_PROGRAM() ? sdsm_omp_heap_alloc(n, 0) : __libc_malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *p = FROM_PROGRAM() ? sdsm_omp_heap_alloc(n + 1, 0) : __libc_malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* asprintf and vasprintf from the program: the string comes from the shared
 * heap, like strdup's (the C library's own would take the private one). */
static int format_into(int shared, char **out, const char *fmt, va_list ap)
{
    if (!shared) {
        static int (*libc_vasprintf)(char **, const char *, va_list);
        if (!libc_vasprintf)
            libc_vasprintf = (int (*)(char **, const char *, va_list))dlsym(RTLD_NEXT, "vasprintf");
        return libc_vasprintf ? libc_vasprintf(out, fmt, ap) : -1;
    }
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    char *p = n < 0 ? NULL : sdsm_omp_heap_alloc((size_t)n + 1, 0);
    if (!p)
        return -1;
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    *out = p;
    return n;
}

int vasprintf(char **out, const char *fmt, va_list ap) { return format_into(FROM_PROGRAM(), out, fmt, ap); }

int asprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = format_into(FROM_PROGRAM(), out, fmt, ap);
    va_end(ap);
    return n;
}

/* --- system calls on shared memory ------------------------------------------ */

/* The buffer is the caller's to use, so no other thread writes those bytes
 * meanwhile: a read of each page for data going out, a write of the same
 * bytes for data coming in, lets the fault handler make them accessible. */
static void touch(const void *buf, size_t len, int for_write)
{
    if (!len || !sdsm_omp_is_shared(buf))
        return;
    uintptr_t p = (uintptr_t)buf, end = p + len;
    for (uintptr_t a = p; a < end; a = (a | 4095) + 1) {
        volatile uint8_t *c = (volatile uint8_t *)a;
        uint8_t v = *c;
        if (for_write)
            *c = v;
    }
    volatile uint8_t *last = (volatile uint8_t *)(end - 1);
    uint8_t v = *last;
    if (for_write)
        *last = v;
}

#define REAL(name)                                                                                           \
    static __typeof__(name) *real_##name;                                                                    \
    if (!real_##name)                                                                                        \
    real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

ssize_t read(int fd, void *buf, size_t n)
{
    REAL(read);
    touch(buf, n, 1);
    return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    REAL(pread);
    touch(buf, n, 1);
    return real_pread(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL(write);
    touch(buf, n, 0);
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL(pwrite);
    touch(buf, n, 0);
    return real_pwrite(fd, buf, n, off);
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    REAL(recv);
    touch(buf, n, 1);
    return real_recv(fd, buf, n, flags);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    REAL(send);
    touch(buf, n, 0);
    return real_send(fd, buf, n, flags);
}

size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fread);
    size_t t;
    if (!__builtin_mul_overflow(size, n, &t))
        touch(buf, t, 1);
    return real_fread(buf, size, n, f);
}

size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    REAL(fwrite);
    size_t t;
    if (!__builtin_mul_overflow(size, n, &t))
        touch(buf, t, 0);
    return real_fwrite(buf, size, n, f);
}
