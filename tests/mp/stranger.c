/*
 * stranger.c - something that is not part of the job connects to the job's
 * sockets and sends garbage; the job must refuse it and carry on.
 *
 *   mp_stranger [K]     (default K = 50)
 *
 * Every rank finds its own listening TCP socket (mp_listener.h) and
 * publishes the first one's address in shared memory.  While ranks 1..N-1
 * run a lock counter, rank 0 plays the stranger: it connects to the
 * launcher's rendezvous (SDSM_RENDEZVOUS) and to every published rank
 * port, writes 64 bytes of junk and reads until the other side closes,
 * which must happen within 4 s.  It also connects to each of them, sends a
 * truncated handshake and hangs up, then probes the launcher once more.
 * Then rank 0 joins the counter, a barrier, and everyone checks the total.
 * The wrapper checks that "refused" was logged and that the job printed
 * "OK stranger".
 */
#define MP_NAME "stranger"
#include "mp.h"
#include "mp_listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

typedef mp_endpoint_t endpoint_t;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Connect, send junk, wait for the other side to close.  Returns a description. */
static void probe(const char *who, uint32_t ip, unsigned port)
{
    char addr[INET_ADDRSTRLEN];
    struct in_addr ia = {.s_addr = ip};
    inet_ntop(AF_INET, &ia, addr, sizeof addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    MP_ASSERT(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = ia};
    long long tc = now_ms();
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        MP_ASSERT(e == ECONNREFUSED, "connect to %s %s:%u: %s", who, addr, port, strerror(e));
        fprintf(stderr, "stranger: %s %s:%u no longer accepts connections\n", who, addr, port);
        return;
    }
    unsigned char junk[64];
    for (int i = 0; i < 64; i++)
        junk[i] = (unsigned char)(mp_mix((uint64_t)i + port) & 0xff);
    ssize_t w = send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    (void)w; /* the peer may already have closed: that is fine */
    long long t0 = now_ms(), got = 0;
    for (;;) {
        long long left = t0 + 4000 - now_ms();
        if (left <= 0) {
            close(fd);
            sdsm_abort(1, "%s: rank 0: %s %s:%u did not close a junk connection within 4 s", MP_NAME, who,
                       addr, port);
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        char buf[256];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r > 0) {
            got += r;
            MP_ASSERT(got < 4096, "%s sent %lld bytes to a stranger", who, got);
            continue;
        }
        if (r == 0 || errno == ECONNRESET)
            break;
        MP_ASSERT(errno == EINTR || errno == EAGAIN, "recv from %s: %s", who, strerror(errno));
    }
    close(fd);
    fprintf(stderr,
            "stranger: %s %s:%u accepted in %lld ms, closed the junk connection after "
            "%lld ms (%lld bytes)\n",
            who, addr, port, t0 - tc, now_ms() - t0, got);
}

/* Connect, send a few bytes of junk and hang up at once, mid-handshake. */
static void hangup(const char *who, uint32_t ip, unsigned port)
{
    long long tc = now_ms();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    MP_ASSERT(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {.s_addr = ip}};
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        static const char part[] = "SDSMC1\0\0junk"; /* a hello cut short */
        ssize_t w = send(fd, part, sizeof part, MSG_NOSIGNAL);
        (void)w;
    }
    close(fd);
    fprintf(stderr, "stranger: %s port %u: hung up mid-handshake after %lld ms\n", who, port, now_ms() - tc);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    long K = argc > 1 ? atol(argv[1]) : 50;
    int n = sdsm_nprocs(), me = sdsm_rank();
    volatile endpoint_t *eps = sdsm_alloc((size_t)n * sizeof(endpoint_t), 0);
    volatile long *ctr = sdsm_alloc(sizeof(long), n - 1);
    MP_NONNULL(eps);
    MP_NONNULL(ctr);
    endpoint_t mine = mp_listener(0);
    eps[me].ip = mine.ip;
    eps[me].port = mine.port;
    MP_OK(sdsm_barrier());

    if (me == 0) {
        const char *rv = getenv("SDSM_RENDEZVOUS");
        MP_ASSERT(rv != NULL, "SDSM_RENDEZVOUS is not set (run under sdsmrun)");
        char ipbuf[64];
        unsigned port = 0;
        MP_ASSERT(sscanf(rv, "%63[^:]:%u", ipbuf, &port) == 2, "bad SDSM_RENDEZVOUS '%s'", rv);
        struct in_addr ia;
        MP_ASSERT(inet_pton(AF_INET, ipbuf, &ia) == 1, "bad SDSM_RENDEZVOUS '%s'", rv);
        probe("launcher", ia.s_addr, port);
        int nranks = 0;
        for (int r = 0; r < n; r++) {
            if (!eps[r].port)
                continue;
            char who[32];
            snprintf(who, sizeof who, "rank %d", r);
            probe(who, eps[r].ip, eps[r].port);
            nranks++;
        }
        hangup("launcher", ia.s_addr, port);
        for (int r = 0; r < n; r++)
            if (eps[r].port)
                hangup("rank", eps[r].ip, eps[r].port);
        probe("launcher", ia.s_addr, port); /* again: the refusals must not break it */
        fprintf(stderr, "stranger: probed the launcher twice and %d rank listener(s)\n", nranks);
    }
    for (long k = 0; k < K; k++) {
        MP_OK(sdsm_lock(11));
        *ctr += 1;
        MP_OK(sdsm_unlock(11));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("counter after the strangers", 0, (long)n * K, *ctr);
    MP_OK(sdsm_barrier());
    return mp_finish("stranger");
}
