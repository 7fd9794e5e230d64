/*
 * ctrl.c - the rendezvous: a listening socket (loopback, or the addresses
 * other hosts reach: see ctrl_listen) and one small
 * state machine per accepted connection (job-key handshake, REGISTER, then
 * the rank's control link carrying ABORT and DONE).
 *
 * Nothing here blocks.  Partial input waits in the connection's buffer and
 * output the socket would not take waits in its queue, so a peer that
 * connects and says nothing costs one slot until its deadline, never a stall.
 * A hello that does not start with the connector's magic is refused at its
 * first wrong byte.  Connections that never prove the key (strangers) are
 * logged with a rate limit: one line per address per interval, with the
 * count of those refused in between, and the rest counted when the job ends.
 */
#define _GNU_SOURCE /* accept4 */
#include "launcher.h"
#include "net/ifaddr.h"
#include "net/tcpopt.h"
#include "net/stranger.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPT_RETRY_US 100000 /* after EMFILE and friends */
#define MSGS_PER_WAKEUP 64     /* so one chatty peer cannot starve the others */

static sdsm_strangers_t strangers;

#define MAX_LAUNCHER_ADDRS 16

/* Where the launcher listens: on loopback when every rank is on this host;
 * otherwise on this host's interface addresses (SDSM_IFACE narrows them),
 * every one of which the agents are told: each picks the one its host
 * reaches (ifaddr.h).  Ranks forked here use the first. */
static int launcher_addrs(const struct job *j, uint32_t *cands, int *n)
{
    *n = 0;
    if (job_all_local(j))
        return 0;
    const char *spec = getenv("SDSM_IFACE");
    if (spec && !*spec)
        spec = NULL;
    int k = sdsm_ifaddr_list(spec, cands, MAX_LAUNCHER_ADDRS);
    if (k <= 0 && spec) {
        launcher_say("SDSM_IFACE=%s matches no interface that is up on this host", spec);
        return -1;
    }
    if (k <= 0) /* only loopback: "hosts" that are this machine can still reach it */
        return 0;
    *n = k < MAX_LAUNCHER_ADDRS ? k : MAX_LAUNCHER_ADDRS;
    return 0;
}

static void format_addrs(struct job *j, const uint32_t *cands, int n)
{
    char ip[INET_ADDRSTRLEN];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        struct in_addr a = {.s_addr = cands[i]};
        inet_ntop(AF_INET, &a, ip, sizeof ip);
        used += (size_t)snprintf(j->rdv_agents + used, sizeof j->rdv_agents - used, "%s%s", i ? "," : "", ip);
    }
    snprintf(j->rdv_agents + used, sizeof j->rdv_agents - used, ":%u", (unsigned)j->port);
    struct in_addr a = {.s_addr = n ? cands[0] : htonl(INADDR_LOOPBACK)};
    inet_ntop(AF_INET, &a, ip, sizeof ip);
    snprintf(j->rdv_local, sizeof j->rdv_local, "%s:%u", ip, (unsigned)j->port);
}

int ctrl_listen(struct job *j)
{
    uint32_t cands[MAX_LAUNCHER_ADDRS];
    int n;
    if (launcher_addrs(j, cands, &n))
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (n)
        a.sin_addr.s_addr = n == 1 ? cands[0] : htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, SOMAXCONN) ||
        getsockname(fd, (struct sockaddr *)&a, &len)) {
        launcher_say("cannot open the rendezvous socket: %m");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    j->lfd = fd;
    j->port = ntohs(a.sin_port);
    format_addrs(j, cands, n);
    return 0;
}

void ctrl_close(struct job *j, struct conn *c)
{
    if (c->fd < 0)
        return;
    close(c->fd);
    c->fd = -1;
    free(c->out);
    c->out = NULL;
    c->outlen = c->outoff = 0;
    if (c->st == CONN_LINKED && j->ranks[c->rank].link == c) {
        j->ranks[c->rank].link = NULL;
        job_link_closed(j, &j->ranks[c->rank]);
    }
}

static void refuse(struct job *j, struct conn *c, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void refuse(struct job *j, struct conn *c, const char *what, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    launcher_say("refused %s from %s (%s)", what, c->peer, why);
    ctrl_close(j, c);
}

/* c never proved the key: close it and log with the rate limit. */
static void refuse_stranger(struct job *j, struct conn *c, const char *why)
{
    uint32_t quiet;
    if (sdsm_stranger_note(&strangers, c->ip, why, launcher_now() / 1000, &quiet)) {
        if (quiet)
            launcher_say("refused connection from %s (%s), and %u more from the same address "
                         "since the last report",
                         c->peer, why, quiet);
        else
            launcher_say("refused connection from %s (%s)", c->peer, why);
    }
    ctrl_close(j, c);
}

/* The strangers refused since their address's last line, with their counts. */
static void report_strangers(void)
{
    sdsm_stranger_src_t s;
    while (sdsm_stranger_take(&strangers, &s)) {
        char ip[INET_ADDRSTRLEN] = "other addresses";
        struct in_addr a = {.s_addr = s.ip};
        if (s.ip)
            inet_ntop(AF_INET, &a, ip, sizeof ip);
        launcher_say("refused %u more connection(s) from %s (latest: %s)", s.quiet, ip, s.why);
    }
}

/* A socket error (errno set) on c. */
static void broken(struct job *j, struct conn *c)
{
    if (c->st == CONN_LINKED)
        launcher_verbose(j, "rank %u: control link failed: %m", c->rank);
    else if (c->st == CONN_AUTH)
        refuse_stranger(j, c, "connection failed before authenticating"); /* closes it */
    else
        launcher_say("connection from %s failed during set-up: %m", c->peer);
    ctrl_close(j, c);
}

/* Queue bytes for c; whatever the socket takes right now goes at once. */
static int conn_send(struct job *j, struct conn *c, const void *buf, size_t len)
{
    size_t put = 0;
    while (c->outoff == c->outlen && put < len) {
        ssize_t n = send(c->fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (n >= 0)
            put += (size_t)n;
        else if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        else if (errno != EINTR) {
            broken(j, c);
            return -1;
        }
    }
    if (put == len)
        return 0;
    size_t pending = c->outlen - c->outoff;
    uint8_t *nb = malloc(pending + len - put);
    if (!nb) {
        launcher_say("out of memory queueing %zu bytes for %s", len - put, c->peer);
        ctrl_close(j, c);
        return -1;
    }
    if (pending)
        memcpy(nb, c->out + c->outoff, pending);
    memcpy(nb + pending, (const char *)buf + put, len - put);
    free(c->out);
    c->out = nb;
    c->outoff = 0;
    c->outlen = pending + len - put;
    return 0;
}

static void conn_flush(struct job *j, struct conn *c)
{
    while (c->outoff < c->outlen) {
        ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
        if (n >= 0)
            c->outoff += (size_t)n;
        else if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        else if (errno != EINTR) {
            broken(j, c);
            return;
        }
    }
    free(c->out);
    c->out = NULL;
    c->outlen = c->outoff = 0;
}

static struct conn *conn_new(struct job *j, int fd, const struct sockaddr_in *a)
{
    if (j->nconns == j->capconns) {
        size_t cap = j->capconns ? 2 * j->capconns : 64;
        struct conn **nc = realloc(j->conns, cap * sizeof *nc);
        if (!nc)
            return NULL;
        j->conns = nc;
        j->capconns = cap;
    }
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(c->peer, sizeof c->peer, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    c->ip = a->sin_addr.s_addr;
    c->fd = fd;
    c->st = CONN_AUTH;
    c->deadline = launcher_now() + HANDSHAKE_US;
    j->conns[j->nconns++] = c;
    return c;
}

/* Open the handshake: the acceptor speaks first with its nonce. */
static void greet(struct job *j, int fd, const struct sockaddr_in *a)
{
    sdsm_tcp_tune(fd, j->rto_min_ms);
    struct conn *c = conn_new(j, fd, a);
    if (!c) {
        launcher_say("out of memory accepting a connection");
        close(fd);
        return;
    }
    uint8_t hello[SDSM_AUTH_HELLO_A_LEN];
    sdsm_auth_nonce(c->nonce_a);
    sdsm_auth_hello_a(hello, c->nonce_a);
    conn_send(j, c, hello, sizeof hello);
    launcher_verbose(j, "connection from %s", c->peer);
}

void ctrl_accept(struct job *j)
{
    static bool warned;
    for (int i = 0; i < MSGS_PER_WAKEUP; i++) {
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        int fd = accept4(j->lfd, (struct sockaddr *)&a, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            greet(j, fd, &a);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        /* Out of fds or memory: the backlog keeps the connection; try later. */
        if (!warned)
            launcher_say("cannot accept a connection: %m; will retry");
        warned = true;
        j->accept_paused = true;
        j->accept_retry = launcher_now() + ACCEPT_RETRY_US;
        return;
    }
}

static void send_table(struct job *j)
{
    size_t len = 4 + (size_t)j->n * sizeof(sdsm_ctrl_addr_t);
    uint8_t *buf = malloc(CTRL_HDR + len);
    if (!buf) {
        job_fail(j, 1, "out of memory building the address table");
        return;
    }
    sdsm_hdr_t h = {.len = (uint32_t)len, .type = SDSM_CTRL_TABLE};
    uint32_t n = (uint32_t)j->n;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + CTRL_HDR, &n, 4);
    for (int r = 0; r < j->n; r++)
        memcpy(buf + CTRL_HDR + 4 + (size_t)r * sizeof(sdsm_ctrl_addr_t), &j->ranks[r].addr,
               sizeof(sdsm_ctrl_addr_t));
    j->table_sent = true;
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].link)
            conn_send(j, j->ranks[r].link, buf, CTRL_HDR + len);
    free(buf);
    launcher_verbose(j, "all %d ranks registered; address table sent at %.1f ms", j->n,
                     launcher_ms(j, launcher_now()));
}

static void check_hello(struct job *j, struct conn *c)
{
    uint8_t nonce_c[16], ok[SDSM_AUTH_OK_LEN];
    uint32_t rank;
    c->have = 0;
    if (sdsm_auth_check_hello_c(j->key, c->nonce_a, c->in, &rank, nonce_c)) {
        refuse_stranger(j, c, "authentication failed");
        return;
    }
    sdsm_auth_ok(ok, j->key, c->nonce_a, nonce_c, rank);
    c->rank = rank;
    c->st = CONN_AUTHED;
    c->deadline = launcher_now() + HANDSHAKE_US;
    conn_send(j, c, ok, sizeof ok);
}

static void do_register(struct job *j, struct conn *c, const uint8_t *p)
{
    sdsm_ctrl_register_t reg;
    memcpy(&reg, p, sizeof reg);
    if (reg.rank != c->rank) {
        refuse(j, c, "registration", "authenticated as rank %u but registering as rank %u", c->rank,
               reg.rank);
        return;
    }
    if (reg.rank >= (uint32_t)j->n) {
        refuse(j, c, "registration", "rank %u is out of range: the job has %d ranks", reg.rank, j->n);
        return;
    }
    struct rank *rk = &j->ranks[reg.rank];
    if (rk->registered) {
        refuse(j, c, "registration", "rank %u is already registered", reg.rank);
        return;
    }
    rk->registered = true;
    rk->reg_pid = (pid_t)reg.pid;
    rk->link = c;
    rk->addr = reg.addr;
    rk->t_reg = launcher_now();
    c->st = CONN_LINKED;
    c->deadline = 0;
    j->nregistered++;
    launcher_verbose(j, "rank %u (pid %u) registered at %.1f ms", reg.rank, reg.pid,
                     launcher_ms(j, rk->t_reg));
    job_rank_registered(j, rk);
    if (!j->stopping && j->nregistered == j->n)
        send_table(j);
}

/* Reason text comes from the rank: keep it on one line and printable. */
static void printable(char *out, const uint8_t *in, size_t len)
{
    while (len > 0 && (in[len - 1] == '\n' || in[len - 1] == '\r' || in[len - 1] == ' '))
        len--;
    for (size_t i = 0; i < len; i++) {
        uint8_t b = in[i];
        out[i] = (b == '\n' || b == '\r' || b == '\t') ? ' ' : (b < 0x20 || b == 0x7f) ? '?' : (char)b;
    }
    out[len] = '\0';
}

/*
 * A registered rank that gives up after waiting its whole set-up time for
 * the address table was waiting for the others: the ranks that never
 * registered are the failure (asleep, stuck or slow before sdsm_init), not
 * the one that timed out.  (Its time limit started a little before it
 * registered here, hence the margin; an abort sooner is its own.)
 */
static bool blame_unregistered(struct job *j, uint32_t gave_up, const char *reason)
{
    struct rank *rk = &j->ranks[gave_up];
    int64_t margin = j->setup_us / 10 > 500000 ? j->setup_us / 10 : 500000;
    if (j->table_sent || !rk->registered || j->nregistered >= j->n ||
        launcher_now() - rk->t_reg < j->setup_us - margin)
        return false;
    char who[256] = "";
    size_t used = 0;
    int shown = 0, missing = 0;
    for (int r = 0; r < j->n; r++) {
        if (j->ranks[r].registered)
            continue;
        missing++;
        if (shown < 8 && used < sizeof who - 40)
            used += (size_t)snprintf(who + used, sizeof who - used, "%s%d (pid %d)", shown++ ? ", " : "", r,
                                     (int)j->ranks[r].pid);
    }
    if (missing > shown)
        snprintf(who + used, sizeof who - used, " and %d more", missing - shown);
    job_fail(j, 1,
             "rank%s %s did not call sdsm_init in time: rank %u gave up waiting for %s "
             "after %.1f s (%s)",
             missing > 1 ? "s" : "", who, gave_up, missing > 1 ? "them" : "it",
             (double)(launcher_now() - rk->t_reg) / 1e6, reason);
    return true;
}

static void do_abort(struct job *j, struct conn *c, const uint8_t *p, uint32_t len)
{
    int32_t code;
    char reason[SDSM_CTRL_MAX_REASON + 1];
    if (c->rank >= (uint32_t)j->n) {
        refuse(j, c, "connection", "abort from rank %u, which is not in the job", c->rank);
        return;
    }
    memcpy(&code, p, 4);
    printable(reason, p + 4, len - 4);
    j->ranks[c->rank].aborted = true;
    /* Only sdsm_init's own time-out blames the others ("sdsm_init: ... (timed
     * out)"; a program's sdsm_abort reads "sdsm_abort(N): ..."): an abort the
     * program chose, from another thread while this one waited in sdsm_init,
     * is the aborting rank's. */
    if (strncmp(reason, "sdsm_init: ", 11) == 0 && strstr(reason, "(timed out)") &&
        blame_unregistered(j, c->rank, reason))
        return;
    /* Exit statuses are 8 bits; an abort must never read as success. */
    int status = code & 0xff;
    job_fail(j, status ? status : 1, "rank %u aborted (code %d): %s", c->rank, (int)code, reason);
}

static void bad_frame(struct job *j, struct conn *c, const sdsm_hdr_t *h);

/*
 * The rank lost its link to another and is about to exit because of it.
 * A link that broke is judged when the ranks' exits come in (the one that
 * died is the failure); a peer that went silent (stopped, cut off) may never
 * exit, so it is named now and the job stopped, which also kills it.
 */
static void do_lost(struct job *j, struct conn *c, const uint8_t *p, uint32_t len)
{
    uint32_t r, ms = 0;
    memcpy(&r, p, 4);
    if (len == 8)
        memcpy(&ms, p + 4, 4);
    if (r >= (uint32_t)j->n || r == c->rank || (len == 8 && ms == 0)) {
        bad_frame(j, c, &(sdsm_hdr_t){.type = SDSM_CTRL_LOST, .len = len});
        return;
    }
    if (!j->ranks[c->rank].lost)
        j->ranks[c->rank].lost = (int)r + 1;
    launcher_verbose(j, "rank %u lost its link to rank %u", c->rank, r);
    if (ms && !j->stopping) {
        char pb[96];
        struct rank *silent = &j->ranks[r];
        job_fail(j, 1,
                 "rank %u (pid %s) stopped responding: rank %u heard nothing from it for "
                 "%.1f s (SDSM_PEER_TIMEOUT); stopped by a signal, hung, or cut off from the network",
                 r, job_pid_str(j, silent, pb, sizeof pb), c->rank, ms / 1000.0);
    }
}

/* Type and length must fit the connection's state before a payload byte is read. */
static int header_ok(const struct job *j, const struct conn *c, const sdsm_hdr_t *h)
{
    /* flags, epoch and seq carry nothing on control links and are ignored. */
    switch (h->type) {
    case SDSM_CTRL_REGISTER: return c->st == CONN_AUTHED && h->len == sizeof(sdsm_ctrl_register_t);
    case SDSM_CTRL_ABORT: return h->len >= 4 && h->len <= 4 + SDSM_CTRL_MAX_REASON;
    case SDSM_CTRL_DONE: return c->st == CONN_LINKED && j->table_sent && h->len == 0;
    case SDSM_CTRL_LOST: return c->st == CONN_LINKED && j->table_sent && (h->len == 4 || h->len == 8);
    case SDSM_CTRL_STATE: return c->st == CONN_LINKED && j->table_sent && h->len <= SDSM_CTRL_MAX_REASON;
    default: return 0;
    }
}

static void bad_frame(struct job *j, struct conn *c, const sdsm_hdr_t *h)
{
    if (c->st != CONN_LINKED) {
        refuse(j, c, "connection", "unexpected control message: type %u, length %u", h->type, h->len);
        return;
    }
    struct rank *rk = &j->ranks[c->rank];
    job_fail(j, 1, "rank %u (pid %d) sent a bad control message (type %u, length %u); closing its link",
             c->rank, (int)rk->pid, h->type, h->len);
    ctrl_close(j, c);
}

/* One complete unit is in c->in: a handshake hello, a header or a whole frame. */
static void step(struct job *j, struct conn *c)
{
    if (c->st == CONN_AUTH) {
        check_hello(j, c);
        return;
    }
    sdsm_hdr_t h;
    memcpy(&h, c->in, sizeof h);
    if (c->have == CTRL_HDR && !header_ok(j, c, &h)) {
        bad_frame(j, c, &h);
        return;
    }
    if (c->have < CTRL_HDR + h.len)
        return;
    c->have = 0;
    if (h.type == SDSM_CTRL_REGISTER) {
        do_register(j, c, c->in + CTRL_HDR);
    } else if (h.type == SDSM_CTRL_ABORT) {
        do_abort(j, c, c->in + CTRL_HDR, h.len);
    } else if (h.type == SDSM_CTRL_LOST) {
        do_lost(j, c, c->in + CTRL_HDR, h.len);
    } else if (h.type == SDSM_CTRL_STATE) {
        char text[SDSM_CTRL_MAX_REASON + 1];
        printable(text, c->in + CTRL_HDR, h.len);
        launcher_say("rank %u: %s", c->rank, text);
        j->nanswered++;
    } else {
        j->ranks[c->rank].done = true;
        launcher_verbose(j, "rank %u finalized at %.1f ms", c->rank, launcher_ms(j, launcher_now()));
    }
}

/* Bytes the message being read needs in all; headers are validated already. */
static size_t want(const struct conn *c)
{
    if (c->st == CONN_AUTH)
        return SDSM_AUTH_HELLO_C_LEN;
    if (c->have < CTRL_HDR)
        return CTRL_HDR;
    sdsm_hdr_t h;
    memcpy(&h, c->in, sizeof h);
    return CTRL_HDR + h.len;
}

static void closed_by_peer(struct job *j, struct conn *c)
{
    if (c->st == CONN_AUTH)
        refuse_stranger(j, c, "closed before authenticating");
    else if (c->st == CONN_AUTHED)
        launcher_say("connection from %s (rank %u) closed before registering", c->peer, c->rank);
    else
        launcher_verbose(j, "rank %u closed its control link", c->rank);
    ctrl_close(j, c);
}

static void conn_read(struct job *j, struct conn *c)
{
    int budget = MSGS_PER_WAKEUP;
    while (c->fd >= 0 && budget > 0) {
        size_t need = want(c);
        ssize_t n = recv(c->fd, c->in + c->have, need - c->have, 0);
        if (n == 0) {
            closed_by_peer(j, c);
        } else if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            if (errno != EINTR)
                broken(j, c);
        } else {
            c->have += (size_t)n;
            if (c->st == CONN_AUTH && !sdsm_auth_hello_c_plausible(c->in, c->have))
                refuse_stranger(j, c, "not an sdsm handshake");
            else if (c->have == need) {
                budget--;
                step(j, c);
            }
        }
    }
}

void ctrl_io(struct job *j, struct conn *c, short revents)
{
    if (c->fd >= 0 && (revents & POLLOUT))
        conn_flush(j, c);
    if (c->fd >= 0 && (revents & ~POLLOUT))
        conn_read(j, c);
}

void ctrl_timers(struct job *j, int64_t now)
{
    if (j->accept_paused && now >= j->accept_retry)
        j->accept_paused = false;
    for (size_t i = 0; i < j->nconns; i++) {
        struct conn *c = j->conns[i];
        if (c->fd < 0 || !c->deadline || now < c->deadline)
            continue;
        if (c->st == CONN_AUTH)
            refuse_stranger(j, c, "no authentication within 5 s"); /* HANDSHAKE_US */
        else
            refuse(j, c, "connection", "rank %u did not register within %lld s", c->rank,
                   HANDSHAKE_US / 1000000);
    }
}

int64_t ctrl_next_deadline(const struct job *j)
{
    int64_t next = j->accept_paused ? j->accept_retry : INT64_MAX;
    for (size_t i = 0; i < j->nconns; i++) {
        const struct conn *c = j->conns[i];
        if (c->fd >= 0 && c->deadline && c->deadline < next)
            next = c->deadline;
    }
    return next;
}

int ctrl_ask_all(struct job *j)
{
    sdsm_hdr_t h = {.type = SDSM_CTRL_QUERY};
    int n = 0;
    if (!j->table_sent) /* ranks still in sdsm_init read their link themselves */
        return 0;
    for (size_t i = 0; i < j->nconns; i++) {
        struct conn *c = j->conns[i];
        if (c->fd >= 0 && c->st == CONN_LINKED && !j->ranks[c->rank].done &&
            conn_send(j, c, &h, sizeof h) == 0)
            n++;
    }
    return n;
}

void ctrl_close_all(struct job *j)
{
    if (j->lfd >= 0)
        close(j->lfd);
    j->lfd = -1;
    for (size_t i = 0; i < j->nconns; i++)
        ctrl_close(j, j->conns[i]);
    report_strangers();
}

/* Free closed connections; only between poll rounds, when nothing points at them. */
void ctrl_sweep(struct job *j)
{
    size_t keep = 0;
    for (size_t i = 0; i < j->nconns; i++) {
        if (j->conns[i]->fd >= 0)
            j->conns[keep++] = j->conns[i];
        else
            free(j->conns[i]);
    }
    j->nconns = keep;
}
