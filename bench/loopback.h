/*
 * loopback.h - the TCP loopback plumbing that bench/ref_micro.c and
 * bench/sdsm_micro.c (--paired) share: a listener on a port the kernel
 * picks, TCP_NODELAY, and whole-buffer reads and writes.  Errors are
 * returned (errno set); each program reports them its own way.
 */
#ifndef SDSM_BENCH_LOOPBACK_H
#define SDSM_BENCH_LOOPBACK_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

/* A listening socket on 127.0.0.1; *sa gets its address (the port the
 * kernel chose).  -1 on error. */
static inline int lb_listen(struct sockaddr_in *sa)
{
    *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof *sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)sa, sizeof *sa) || listen(fd, 1) ||
        getsockname(fd, (struct sockaddr *)sa, &sl)) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int lb_nodelay(int fd)
{
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Reads (wr 0) or writes (wr 1) all len bytes: 0, 1 if the peer closed
 * before a read was complete, -1 on an error. */
static inline int lb_io_full(int fd, int wr, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n == 0 && !wr) {
            return 1;
        } else if (n < 0 && errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

#endif
