/*
 * io.c - system calls on shared memory.
 *
 * The kernel does not raise a fault when a system call reads or writes a
 * page the process may not access: it fails with EFAULT.  A program that
 * reads a file into a shared array (fread of a large block reads straight
 * into it) or writes one out would see short reads and writes.  These calls
 * first touch the shared pages of their buffer from user space (a read for
 * data going out, a write of the same bytes for data coming in), so the
 * fault handler makes them accessible; the buffer is the caller's to use,
 * so no other thread writes those bytes meanwhile.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "omp_int.h"

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

#define REAL(name) \
    static __typeof__(name) *real_##name; \
    if (!real_##name) \
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
