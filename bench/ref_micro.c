/*
 * ref_micro.c - the references of bench/micro, without sdsm.
 *
 *   ref_micro rtt REQ REP COUNT BATCHES  TCP loopback ping-pong between two
 *                                        processes: REQ-byte request, REP-byte
 *                                        reply, blocking sockets, TCP_NODELAY
 *   ref_micro mprotect COUNT BATCHES     mprotect of one page of a memfd
 *                                        shared mapping, toggling PROT_NONE /
 *                                        PROT_READ (time per call)
 *   ref_micro segv COUNT BATCHES         the least a remote read fault of a
 *                                        user-level page-based DSM costs: the
 *                                        rtt 8 -> 4096 ping-pong, started from
 *                                        a SIGSEGV handler on a PROT_NONE page
 *                                        of a memfd, the reply read into the
 *                                        page through a writable mapping of
 *                                        the same memfd, then one mprotect to
 *                                        PROT_READ before the handler returns
 *                                        (per fault; the PROT_NONE that arms
 *                                        the next one is timed and left out)
 *   ref_micro bw MBYTES BATCHES          TCP loopback streaming: one process
 *                                        writes MBYTES in 1 MiB writes, the
 *                                        other reads (MB/s)
 *   ref_micro rtt-serve PORT REQ REP     the server side of rtt across hosts:
 *                                        listens on every address at PORT (0:
 *                                        any), prints "listening PORT", serves
 *                                        one connection after another
 *   ref_micro rtt-to ADDR PORT REQ REP COUNT BATCHES
 *                                        the client side: ping-pong with a
 *                                        rtt-serve at ADDR:PORT (IPv4), printed
 *                                        as rtt does
 *   ref_micro xchg-serve PORT           a page exchange across hosts: both
 *   ref_micro xchg-to ADDR PORT W N BATCHES
 *                                        ends ask each other for pages at once
 *                                        on one connection (24-byte request,
 *                                        4120-byte reply, as rtt), each keeping
 *                                        W requests in flight (1..16) and
 *                                        answering the other's, N pages each
 *                                        way per batch:
 *                                        what W compute threads per host
 *                                        fetching from each other could get at
 *                                        best.  xchg-to prints ns per page it
 *                                        received; xchg-serve as rtt-serve
 *
 * Like sdsm_micro: one warm-up batch, then one "sample <figure> <value>" line
 * per batch (ns per operation, or MB/s).  rtt also prints, at the end,
 *   rusage 0 <voluntary> <involuntary>
 * the context switches of both processes (getrusage of itself and of the
 * server it waited for), for bench/micro's counting pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "loopback.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void nodelay(int fd)
{
    if (lb_nodelay(fd))
        die("setsockopt");
}

/* 0, or -1 if the peer closed. */
static int read_full(int fd, void *buf, size_t len)
{
    int r = lb_io_full(fd, 0, buf, len);
    if (r < 0)
        die("read");
    return r ? -1 : 0;
}

static void write_full(int fd, const void *buf, size_t len)
{
    if (lb_io_full(fd, 1, (void *)buf, len))
        die("write");
}

/* A connected loopback TCP pair: *parent_fd for us, the child runs serve(fd). */
static pid_t fork_pair(int *parent_fd, void (*serve)(int fd, long a, long b), long a, long b)
{
    struct sockaddr_in sa;
    int lfd = lb_listen(&sa);
    if (lfd < 0)
        die("listen");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(lfd);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa))
            die("connect");
        nodelay(fd);
        serve(fd, a, b);
        _exit(0);
    }
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    close(lfd);
    nodelay(fd);
    *parent_fd = fd;
    return pid;
}

static void finish_child(int fd, pid_t pid)
{
    close(fd);
    int st;
    waitpid(pid, &st, 0);
}

/* ---------------------------------------------------------------- rtt */

static void rtt_server(int fd, long req, long rep)
{
    char *in = calloc(1, (size_t)req), *out = calloc(1, (size_t)rep);
    if (!in || !out)
        die("calloc");
    while (read_full(fd, in, (size_t)req) == 0)
        write_full(fd, out, (size_t)rep);
    free(in);
    free(out);
}

static void bench_rtt(long req, long rep, long count, long batches)
{
    int fd;
    pid_t pid = fork_pair(&fd, rtt_server, req, rep);
    char *out = calloc(1, (size_t)req), *in = calloc(1, (size_t)rep);
    if (!out || !in)
        die("calloc");
    for (long b = 0; b <= batches; b++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++) {
            write_full(fd, out, (size_t)req);
            if (read_full(fd, in, (size_t)rep))
                die("rtt: server closed");
        }
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample rtt_%ld_%ld %.1f\n", req, rep, (double)(t1 - t0) / (double)count);
    }
    finish_child(fd, pid);
    free(out);
    free(in);
    struct rusage self, child;
    if (getrusage(RUSAGE_SELF, &self) == 0 && getrusage(RUSAGE_CHILDREN, &child) == 0)
        printf("rusage 0 %ld %ld\n", self.ru_nvcsw + child.ru_nvcsw, self.ru_nivcsw + child.ru_nivcsw);
}

/* The server side across hosts: listens on every address at port (0: any),
 * prints "listening PORT", and runs serve(fd, a, b) for one connection
 * after another. */
static void serve_forever(long port, const char *what, void (*serve)(int fd, long a, long b), long a, long b)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t sl = sizeof sa;
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 4) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl))
        die(what);
    printf("listening %u\n", ntohs(sa.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            die(what);
        }
        nodelay(fd);
        serve(fd, a, b);
        close(fd);
    }
}

/* The client side: a TCP_NODELAY connection to addr:port (IPv4). */
static int connect_to(const char *addr, long port, const char *what)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        fprintf(stderr, "%s: not an IPv4 address: %s\n", what, addr);
        exit(2);
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa))
        die(what);
    nodelay(fd);
    return fd;
}

/* rtt across hosts: the same ping-pong, server and client started apart
 * (each in its host's network namespace), so the path is the emulated
 * network's. */
static void rtt_to(const char *addr, long port, long req, long rep, long count, long batches)
{
    int fd = connect_to(addr, port, "rtt-to");
    char *out = calloc(1, (size_t)req), *in = calloc(1, (size_t)rep);
    if (!out || !in)
        die("calloc");
    for (long b = 0; b <= batches; b++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++) {
            write_full(fd, out, (size_t)req);
            if (read_full(fd, in, (size_t)rep))
                die("rtt-to: server closed");
        }
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample rtt_%ld_%ld %.1f\n", req, rep, (double)(t1 - t0) / (double)count);
    }
    close(fd);
    free(out);
    free(in);
}

/* --------------------------------------------------------------- xchg */

#define XREQ 24
#define XREP 4120
/* Both ends may write replies at once: what is in flight must fit the
 * socket buffers (16 x 4120 B well under 128 KiB). */
#define XMAXW 16

/* One batch of the exchange: ask for n pages with w in flight, answer the
 * n requests of the other end.  One thread, blocking socket: it reads
 * whenever it has nothing to send, so neither end waits for the other. */
static void xchg_batch(int fd, long w, long n, char *buf)
{
    long sent = 0, got = 0, served = 0;
    while (got < n || served < n) {
        for (; sent < n && sent - got < w; sent++) {
            memset(buf, 'Q', XREQ);
            write_full(fd, buf, XREQ);
        }
        if (read_full(fd, buf, XREQ))
            die("xchg: peer closed");
        if (buf[0] == 'Q') {
            memset(buf, 'R', XREQ);
            write_full(fd, buf, XREP);
            served++;
        } else if (buf[0] == 'R') {
            if (read_full(fd, buf + XREQ, XREP - XREQ))
                die("xchg: peer closed");
            got++;
        } else {
            fprintf(stderr, "xchg: bad message\n");
            exit(1);
        }
    }
}

/* One xchg-to connection: its hello (w, n, batches with the warm-up), then
 * the batches. */
static void xchg_server(int fd, long unused_a, long unused_b)
{
    (void)unused_a, (void)unused_b;
    char *buf = calloc(1, XREP);
    if (!buf)
        die("calloc");
    int32_t hello[3];
    if (read_full(fd, hello, sizeof hello) == 0 && hello[0] > 0 && hello[0] <= XMAXW && hello[1] > 0 &&
        hello[2] > 0 && hello[2] <= 100001)
        for (int32_t b = 0; b < hello[2]; b++)
            xchg_batch(fd, hello[0], hello[1], buf);
    free(buf);
}

static void xchg_to(const char *addr, long port, long w, long n, long batches)
{
    if (w < 1 || n < 1 || batches < 1 || w > XMAXW || n > 1000000000 || batches > 100000) {
        fprintf(stderr, "xchg-to: W 1..%d, N 1..1e9, BATCHES 1..100000\n", XMAXW);
        exit(2);
    }
    int fd = connect_to(addr, port, "xchg-to");
    int32_t hello[3] = {(int32_t)w, (int32_t)n, (int32_t)batches + 1};
    write_full(fd, hello, sizeof hello);
    char *buf = calloc(1, XREP);
    if (!buf)
        die("calloc");
    for (long b = 0; b <= batches; b++) {
        uint64_t t0 = now_ns();
        xchg_batch(fd, w, n, buf);
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample xchg_%ld %.1f\n", w, (double)(t1 - t0) / (double)n);
    }
    close(fd);
    free(buf);
}

/* ----------------------------------------------------------- mprotect */

static void bench_mprotect(long count, long batches)
{
    long ps = sysconf(_SC_PAGESIZE);
    int mfd = memfd_create("ref-micro", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, ps * 64))
        die("memfd");
    volatile char *p = mmap(NULL, (size_t)ps * 64, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (p == MAP_FAILED)
        die("mmap");
    p[ps * 32] = 1; /* a present page in the middle of the mapping */
    void *pg = (void *)(p + ps * 32);
    for (long b = 0; b <= batches; b++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++) {
            if (mprotect(pg, (size_t)ps, PROT_NONE) || mprotect(pg, (size_t)ps, PROT_READ))
                die("mprotect");
        }
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample mprotect %.1f\n", (double)(t1 - t0) / (double)(2 * count));
    }
    munmap((void *)p, (size_t)ps * 64);
    close(mfd);
}

/* --------------------------------------------------------------- segv */

static struct {
    int fd;
    long ps;
    char *view, *alias; /* PROT_NONE-armed page, its writable twin */
    volatile long faults;
} SG;

static void segv_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)ctx;
    if ((char *)si->si_addr < SG.view || (char *)si->si_addr >= SG.view + SG.ps)
        _exit(3); /* not ours: a real crash */
    uint64_t q = 0;
    write_full(SG.fd, &q, sizeof q);
    if (read_full(SG.fd, SG.alias, (size_t)SG.ps))
        _exit(4);
    if (mprotect(SG.view, (size_t)SG.ps, PROT_READ))
        _exit(5);
    SG.faults++;
}

static void bench_segv(long count, long batches)
{
    SG.ps = sysconf(_SC_PAGESIZE);
    int mfd = memfd_create("ref-micro-segv", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, SG.ps))
        die("memfd");
    SG.view = mmap(NULL, (size_t)SG.ps, PROT_NONE, MAP_SHARED, mfd, 0);
    SG.alias = mmap(NULL, (size_t)SG.ps, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (SG.view == MAP_FAILED || SG.alias == MAP_FAILED)
        die("mmap");
    SG.alias[0] = 1; /* the page exists: the fault is the protection's only */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL))
        die("sigaction");
    pid_t pid = fork_pair(&SG.fd, rtt_server, 8, SG.ps);
    for (long b = 0; b <= batches; b++) {
        uint64_t armed = 0, t0 = now_ns();
        for (long i = 0; i < count; i++) {
            uint64_t a0 = now_ns();
            if (mprotect(SG.view, (size_t)SG.ps, PROT_NONE))
                die("mprotect");
            armed += now_ns() - a0;
            (void)*(volatile char *)SG.view; /* faults: one round trip */
        }
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample segv %.1f\n", (double)(t1 - t0 - armed) / (double)count);
    }
    if (SG.faults != count * (batches + 1)) {
        fprintf(stderr, "ref_micro segv: %ld faults handled, %ld expected\n", (long)SG.faults,
                count * (batches + 1));
        exit(1);
    }
    finish_child(SG.fd, pid);
    signal(SIGSEGV, SIG_DFL);
    munmap(SG.view, (size_t)SG.ps);
    munmap(SG.alias, (size_t)SG.ps);
    close(mfd);
}

/* ----------------------------------------------------------------- bw */

#define CHUNK (1 << 20)

static void bw_server(int fd, long mbytes, long unused)
{
    char *buf = malloc(CHUNK), go;
    if (!buf)
        die("malloc");
    memset(buf, 7, CHUNK);
    while (read_full(fd, &go, 1) == 0)
        for (long i = 0; i < mbytes; i++)
            write_full(fd, buf, CHUNK);
    free(buf);
}

static void bench_bw(long mbytes, long batches)
{
    int fd;
    pid_t pid = fork_pair(&fd, bw_server, mbytes, 0);
    char *buf = malloc(CHUNK);
    if (!buf)
        die("malloc");
    for (long b = 0; b <= batches; b++) {
        uint64_t t0 = now_ns();
        write_full(fd, "g", 1);
        size_t left = (size_t)mbytes * CHUNK;
        while (left) {
            ssize_t n = read(fd, buf, left < CHUNK ? left : CHUNK);
            if (n <= 0 && !(n < 0 && errno == EINTR))
                die("bw: read");
            if (n > 0)
                left -= (size_t)n;
        }
        uint64_t t1 = now_ns();
        if (b > 0)
            printf("sample tcpbw %.2f\n", (double)mbytes * CHUNK / 1e6 / ((double)(t1 - t0) * 1e-9));
    }
    finish_child(fd, pid);
    free(buf);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    long a[4] = {0};
    for (int i = 2; i < argc && i < 6; i++)
        a[i - 2] = strtol(argv[i], NULL, 0);
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "rtt") == 0 && argc == 6)
        bench_rtt(a[0], a[1], a[2], a[3]);
    else if (strcmp(what, "mprotect") == 0 && argc == 4)
        bench_mprotect(a[0], a[1]);
    else if (strcmp(what, "segv") == 0 && argc == 4)
        bench_segv(a[0], a[1]);
    else if (strcmp(what, "bw") == 0 && argc == 4)
        bench_bw(a[0], a[1]);
    else if (strcmp(what, "rtt-serve") == 0 && argc == 5)
        serve_forever(a[0], "rtt-serve", rtt_server, a[1], a[2]);
    else if (strcmp(what, "xchg-serve") == 0 && argc == 3)
        serve_forever(a[0], "xchg-serve", xchg_server, 0, 0);
    else if (strcmp(what, "xchg-to") == 0 && argc == 7)
        xchg_to(argv[2], strtol(argv[3], NULL, 0), strtol(argv[4], NULL, 0), strtol(argv[5], NULL, 0),
                strtol(argv[6], NULL, 0));
    else if (strcmp(what, "rtt-to") == 0 && argc == 8)
        rtt_to(argv[2], strtol(argv[3], NULL, 0), strtol(argv[4], NULL, 0), strtol(argv[5], NULL, 0),
               strtol(argv[6], NULL, 0), strtol(argv[7], NULL, 0));
    else {
        fprintf(stderr, "usage: ref_micro rtt REQ REP COUNT BATCHES | mprotect COUNT BATCHES | "
                        "segv COUNT BATCHES | "
                        "bw MBYTES BATCHES | rtt-serve PORT REQ REP | "
                        "rtt-to ADDR PORT REQ REP COUNT BATCHES | xchg-serve PORT | "
                        "xchg-to ADDR PORT W N BATCHES\n");
        return 2;
    }
    return 0;
}
