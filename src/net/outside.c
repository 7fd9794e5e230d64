/*
 * outside.c - the sockets of the service thread that are not peers': the
 * launcher's link (its QUERY frames; its EOF means the launcher is gone and
 * stops the job) and the listening socket, whose connections after set-up
 * are strangers, refused and logged with a rate limit (stranger.h).
 */
#include "net_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "core/fatal.h"
#include "core/log.h"
#include "core/wait.h"
#include "net/auth.h"
#include "net/stranger.h"

/* Set-up (boot) and the service thread both refuse strangers: one record. */
static sdsm_strangers_t strangers;
static pthread_mutex_t strangers_mtx = PTHREAD_MUTEX_INITIALIZER;

void sdsm_net_stranger(const struct sockaddr_in *from, const char *why)
{
    char ip[INET_ADDRSTRLEN] = "?";
    uint32_t quiet;
    inet_ntop(AF_INET, &from->sin_addr, ip, sizeof ip);
    pthread_mutex_lock(&strangers_mtx);
    int say = sdsm_stranger_note(&strangers, from->sin_addr.s_addr, why, sdsm_io_now_ms(), &quiet);
    pthread_mutex_unlock(&strangers_mtx);
    if (say && quiet)
        sdsm_warn("refused connection from %s:%d (%s), and %u more from %s since the last report", ip,
                  ntohs(from->sin_port), why, quiet, ip);
    else if (say)
        sdsm_warn("refused connection from %s:%d (%s)", ip, ntohs(from->sin_port), why);
}

void sdsm_net_strangers_flush(void)
{
    sdsm_stranger_src_t s;
    for (;;) {
        pthread_mutex_lock(&strangers_mtx);
        int more = sdsm_stranger_take(&strangers, &s);
        pthread_mutex_unlock(&strangers_mtx);
        if (!more)
            break;
        char ip[INET_ADDRSTRLEN] = "other addresses";
        struct in_addr a = {.s_addr = s.ip};
        if (s.ip)
            inet_ntop(AF_INET, &a, ip, sizeof ip);
        sdsm_warn("refused %u more connection(s) from %s (latest: %s)", s.quiet, ip, s.why);
    }
}

void sdsm_net_refuse_stranger(void)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = accept4(sdsm_net_state.listen_fd, (struct sockaddr *)&a, &l, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    close(fd);
    sdsm_net_stranger(&a, "all ranks of the job are already connected");
}

void (*sdsm_net_on_ctrl_query)(void);

/* Frames from the launcher: QUERY gets an answer, anything else is skipped. */
static void ctrl_frames(const uint8_t *p, size_t n)
{
    static uint8_t hdr[sizeof(sdsm_hdr_t)];
    static size_t have;
    static uint32_t skip;
    while (n) {
        if (skip) {
            size_t k = n < skip ? n : skip;
            skip -= (uint32_t)k, p += k, n -= k;
            continue;
        }
        size_t k = sizeof hdr - have < n ? sizeof hdr - have : n;
        memcpy(hdr + have, p, k);
        have += k, p += k, n -= k;
        if (have < sizeof hdr)
            return;
        sdsm_hdr_t h;
        memcpy(&h, hdr, sizeof h);
        have = 0;
        skip = h.len;
        if (h.type == SDSM_CTRL_QUERY && h.len == 0 && sdsm_net_on_ctrl_query)
            sdsm_net_on_ctrl_query();
    }
}

void sdsm_net_ctrl_event(void)
{
    uint8_t buf[256];
    ssize_t n = read(sdsm_net_state.ctrl_fd, buf, sizeof buf);
    if (n > 0)
        ctrl_frames(buf, (size_t)n);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        epoll_ctl(sdsm_net_state.ep, EPOLL_CTL_DEL, sdsm_net_state.ctrl_fd, NULL);
        if (!atomic_load(&sdsm_net_state.stopping))
            sdsm_fatal("lost the connection to sdsmrun: the launcher stopped the job or died");
    }
}
