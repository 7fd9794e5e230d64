/*
 * boot.c - job set-up under sdsmrun, a PMIx or a PMI-2 launcher (see boot.h).
 *
 * Connection order avoids deadlock without threads: rank i first connects
 * to ranks 0..i-1 (each of which is accepting once it has finished its own
 * connects), then accepts ranks i+1..n-1 (accept.c: every handshake at
 * once, so strangers on the port delay no one; they are logged with a rate
 * limit and dropped).  Everything is bounded by SDSM_TIMEOUT.
 */
#include "boot.h"
#include "accept.h"
#include "aslr.h"
#include "pmi2.h"
#include "pmix.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "net/auth.h"
#include "net/ifaddr.h"
#include "net/tcpopt.h"
#include "net/wire.h"
#include "sdsm.h"

static int ctrl_fd = -1;
/* Writers of the control link after set-up: abort, done, and state answers
 * from the service thread. */
static pthread_mutex_t ctrl_mtx = PTHREAD_MUTEX_INITIALIZER;
static uint8_t job_key[SDSM_KEY_BYTES];

const uint8_t *sdsm_boot_key(void) { return job_key; }

static int parse_addr(const char *s, struct sockaddr_in *a)
{
    char host[64];
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return SDSM_EINVAL;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    long port;
    if (sdsm_config_parse_long(colon + 1, 1, 65535, &port))
        return SDSM_EINVAL;
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : SDSM_EINVAL;
}

/*
 * On a lossy link, set-up must not wait for the kernel's retransmission of a
 * SYN or of its answer, which comes after 1 s (then 2 s more, and so on): an
 * attempt still unanswered after SYN_RETRY_MS is replaced by a fresh one,
 * the wait doubling up to 1 s.  The dropped attempt leaves nothing behind:
 * the peer has not accepted it (its answer never arrived), and a late answer
 * gets a reset.  A lost last ACK of the handshake is the handshake's own
 * business: the connector's first bytes go at once (net/auth.h).
 */
#define SYN_RETRY_MS 25

/* A connection attempt: the socket, or -1 (errno says why). */
static int connect_start(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)a, sizeof *a) && errno != EINPROGRESS) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Wait until fd is ready for events or until the deadline: 1 ready, 0 not,
 * -1 poll failed (errno). */
static int wait_ready(int fd, short events, int64_t until)
{
    for (;;) {
        int64_t left = until - sdsm_io_now_ms();
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)(left > 0 ? left : 0));
        if (n > 0)
            return 1;
        if (n == 0 && left <= 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* Connect within the deadline: a host that is down or cut off never
 * answers, and a blocking connect would wait minutes for the SYN retries.
 * The socket, or SDSM_ESYS with errno saying why (the caller logs it). */
static int connect_to(const struct sockaddr_in *a, int64_t deadline)
{
    int64_t syn_wait = SYN_RETRY_MS;
    int fd = connect_start(a);
    if (fd < 0)
        return SDSM_ESYS;
    for (;;) {
        int64_t now = sdsm_io_now_ms();
        if (now >= deadline) {
            errno = ETIMEDOUT;
            goto fail;
        }
        int64_t until = now + syn_wait < deadline ? now + syn_wait : deadline;
        int r = wait_ready(fd, POLLOUT, until);
        if (r < 0)
            goto fail;
        if (r == 0) { /* no answer to the SYN yet: a fresh attempt */
            int again = connect_start(a);
            if (again >= 0) {
                close(fd);
                fd = again;
            }
            syn_wait = syn_wait * 2 > 1000 ? 1000 : syn_wait * 2;
            continue;
        }
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
            errno = err ? err : errno;
            goto fail;
        }
        sdsm_tcp_tune(fd, sdsm_cfg.rto_min_ms);
        break;
    }
    /* The handshakes and the rest of set-up read and write blocking, with
     * their own deadlines. */
    fcntl(fd, F_SETFL, 0);
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return SDSM_ESYS;
}

static const char *ip_str(uint32_t ip, char *buf)
{
    struct in_addr a = {.s_addr = ip};
    return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN) ? buf : "?";
}

static const char *host_name(void) { return sdsm_cfg.host ? sdsm_cfg.host : "this host"; }

/* SDSM_IFACE, when set, says where to listen. */
static int iface_addr(struct in_addr *out)
{
    char err[160];
    if (sdsm_ifaddr_check(sdsm_cfg.iface, err, sizeof err)) {
        sdsm_error_log("%s", err);
        return SDSM_EINVAL;
    }
    if (sdsm_ifaddr_default(sdsm_cfg.iface, &out->s_addr)) {
        sdsm_error_log("SDSM_IFACE=%s matches no interface that is up on %s", sdsm_cfg.iface, host_name());
        return SDSM_EINVAL;
    }
    return 0;
}

/* 1 + the lowest CPU this process may run on, for sdsm_ctrl_addr_t's cpu1
 * (0 if the kernel does not say). */
static uint16_t lowest_cpu1(void)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s))
        return 0;
    for (int c = 0; c < CPU_SETSIZE && c < 65534; c++)
        if (CPU_ISSET(c, &s))
            return (uint16_t)(c + 1);
    return 0;
}

/* The listening socket, or SDSM_ESYS (logged). */
static int listen_on(struct in_addr ip, sdsm_ctrl_addr_t *out)
{
    /* Non-blocking: the acceptor polls it together with the handshakes in flight. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = ip};
    socklen_t l = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 1024) ||
        getsockname(fd, (struct sockaddr *)&a, &l)) {
        sdsm_error_log("cannot listen for peers: %m");
        if (fd >= 0)
            close(fd);
        return SDSM_ESYS;
    }
    out->ipv4 = a.sin_addr.s_addr;
    out->port = a.sin_port;
    out->cpu1 = lowest_cpu1();
    return fd;
}

static int ctrl_send(uint16_t type, const void *p, uint32_t len, int64_t deadline)
{
    sdsm_hdr_t h = {.len = len, .type = type};
    int e = sdsm_io_write_full(ctrl_fd, &h, sizeof h, deadline);
    return e ? e : sdsm_io_write_full(ctrl_fd, p, len, deadline);
}

/* Reach the launcher and prove the job key. */
static int launcher_connect(sdsm_boot_t *b, const struct sockaddr_in *la, int64_t deadline)
{
    int fd = connect_to(la, deadline);
    if (fd < 0) {
        sdsm_error_log("cannot reach the launcher at %s from %s: %m", sdsm_cfg.rendezvous, host_name());
        return SDSM_EPEER;
    }
    ctrl_fd = fd;
    int e = sdsm_auth_connector(ctrl_fd, job_key, (uint32_t)b->rank, (int)(deadline - sdsm_io_now_ms()));
    if (e) {
        sdsm_error_log("launcher handshake failed: %m");
        return e == SDSM_EAUTH ? SDSM_EAUTH : SDSM_EPEER;
    }
    return 0;
}

/* Register with the launcher and receive everyone's address. */
static int rendezvous(sdsm_boot_t *b, const sdsm_ctrl_addr_t *me, sdsm_ctrl_addr_t *table, int64_t deadline)
{
    int e;
    sdsm_ctrl_register_t reg = {.rank = (uint32_t)b->rank, .pid = (uint32_t)getpid(), .addr = *me};
    sdsm_hdr_t h;
    uint32_t n;
    if ((e = ctrl_send(SDSM_CTRL_REGISTER, &reg, sizeof reg, deadline)) ||
        (e = sdsm_io_read_full(ctrl_fd, &h, sizeof h, deadline))) {
        if (e == SDSM_ETIMEDOUT) /* the launcher names the ranks that are missing */
            sdsm_error_log("timed out after %ld s waiting for every rank to call sdsm_init "
                           "(SDSM_TIMEOUT)",
                           sdsm_cfg.timeout);
        else
            sdsm_error_log("launcher link failed during registration: %m");
        return e == SDSM_ETIMEDOUT ? SDSM_ETIMEDOUT : SDSM_EPEER;
    }
    if (h.type != SDSM_CTRL_TABLE || h.len != 4 + (uint32_t)b->nprocs * sizeof *table) {
        sdsm_error_log("launcher sent a bad address table (type %u, %u bytes)", h.type, h.len);
        return SDSM_EPROTO;
    }
    if ((e = sdsm_io_read_full(ctrl_fd, &n, 4, deadline)) ||
        (e = sdsm_io_read_full(ctrl_fd, table, (size_t)b->nprocs * sizeof *table, deadline)))
        return SDSM_EPEER;
    if (n != (uint32_t)b->nprocs) {
        sdsm_error_log("launcher table has %u ranks, expected %d", n, b->nprocs);
        return SDSM_EPROTO;
    }
    return 0;
}

void sdsm_boot_missing(const int *fds, int from, int to, char *out, size_t len)
{
    size_t used = 0;
    int shown = 0, more = 0;
    out[0] = '\0';
    for (int r = from; r < to; r++) {
        if (fds[r] >= 0)
            continue;
        if (shown == 8 || used >= len - 16) {
            more++;
            continue;
        }
        used += (size_t)snprintf(out + used, len - used, "%s%d", shown ? ", " : "", r);
        shown++;
    }
    if (more)
        snprintf(out + used, len - used, " and %d more", more);
}

static int connect_peers(sdsm_boot_t *b, const sdsm_ctrl_addr_t *table, int64_t deadline)
{
    for (int j = 0; j < b->rank; j++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = table[j].port};
        a.sin_addr.s_addr = table[j].ipv4;
        int fd = connect_to(&a, deadline);
        if (fd < 0) {
            char ip[INET_ADDRSTRLEN];
            sdsm_error_log("cannot connect to rank %d at %s:%u: %m", j, ip_str(table[j].ipv4, ip),
                           (unsigned)ntohs(table[j].port));
            return SDSM_EPEER;
        }
        int e = sdsm_auth_connector(fd, job_key, (uint32_t)b->rank, (int)(deadline - sdsm_io_now_ms()));
        if (e) {
            sdsm_error_log("handshake with rank %d failed: %m", j);
            close(fd);
            return e == SDSM_EAUTH ? SDSM_EAUTH : SDSM_EPEER;
        }
        b->peer_fds[j] = fd;
    }
    return 0;
}

/* Both launch paths end here: the table holds every rank's listening
 * address and job_key is known; link every pair of ranks. */
static int link_peers(sdsm_boot_t *b, const sdsm_ctrl_addr_t *table, int64_t deadline)
{
    int rc;
    b->local_nprocs = 0; /* ranks sharing this host listen on its one address */
    b->cpu_sharers = 0;
    uint16_t mine = table[b->rank].cpu1;
    for (int r = 0; r < b->nprocs; r++) {
        b->host_of[r] = r;
        for (int q = 0; q < r && b->host_of[r] == r; q++)
            if (table[q].ipv4 == table[r].ipv4)
                b->host_of[r] = q;
        b->same_host[r] = table[r].ipv4 == table[b->rank].ipv4;
        b->local_nprocs += b->same_host[r];
        /* A launcher that binds each rank to CPUs of its own (Slurm's
         * --cpu-bind, numactl, taskset per rank) gives them different
         * lowest CPUs; ranks started on one set (sdsmrun, taskset -c 0
         * sdsmrun) have the same.  Not told (PMI-2 carries no cpu1): shared. */
        b->cpu_sharers += b->same_host[r] && (!mine || !table[r].cpu1 || table[r].cpu1 == mine);
    }
    if ((rc = connect_peers(b, table, deadline)))
        return rc;
    if ((rc = sdsm_boot_accept(b->listen_fd, job_key, b->rank, b->nprocs, b->peer_fds, deadline)))
        return rc;
    for (int r = 0; r < b->nprocs; r++)
        if (r != b->rank)
            fcntl(b->peer_fds[r], F_SETFL, O_NONBLOCK);
    fcntl(b->listen_fd, F_SETFL, O_NONBLOCK);
    return 0;
}

static int alloc_peers(sdsm_boot_t *b, sdsm_ctrl_addr_t **table)
{
    *table = calloc((size_t)b->nprocs, sizeof **table);
    b->peer_fds = malloc((size_t)b->nprocs * sizeof(int));
    b->same_host = calloc((size_t)b->nprocs, 1);
    b->host_of = calloc((size_t)b->nprocs, sizeof *b->host_of);
    if (!*table || !b->peer_fds || !b->same_host || !b->host_of) {
        free(*table);
        free(b->same_host);
        free(b->host_of);
        b->same_host = NULL;
        b->host_of = NULL;
        *table = NULL;
        return SDSM_ENOMEM;
    }
    for (int r = 0; r < b->nprocs; r++)
        b->peer_fds[r] = -1;
    return 0;
}

/* Where a directly launched rank listens.  One host: loopback.  Several:
 * SDSM_IFACE, else the default route's address (neither PMIx nor PMI-2
 * says which of this host's networks the others are on).  one_host < 0:
 * the launcher did not say; a host with no network but loopback can only
 * be running the whole job itself. */
static int direct_addr(int one_host, struct in_addr *ip)
{
    ip->s_addr = htonl(INADDR_LOOPBACK);
    if (sdsm_cfg.iface)
        return iface_addr(ip);
    if (one_host == 1 || !sdsm_ifaddr_default(NULL, &ip->s_addr))
        return 0;
    ip->s_addr = htonl(INADDR_LOOPBACK);
    if (one_host < 0)
        return 0;
    sdsm_error_log("ranks on several hosts, but no interface other than loopback is up here");
    return SDSM_EPEER;
}

typedef int (*exchange_fn)(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                           uint8_t key[SDSM_KEY_BYTES]);

/* Direct launch (mpirun, srun, mpiexec.hydra): the launcher's key-value
 * store (PMIx or PMI-2) gives addresses and key; rank and size are known. */
static int start_direct(sdsm_boot_t *b, int one_host, exchange_fn exchange)
{
    sdsm_log_rank = b->rank;
    if (sdsm_aslr_state() == SDSM_ASLR_REEXECUTED)
        sdsm_info("address randomization off: the program started once more before main to turn it "
                  "off (SDSM_ASLR=1 keeps it on)");
    else if (sdsm_aslr_state() == SDSM_ASLR_REFUSED)
        sdsm_info("address randomization stays on: this system refused to turn it off (personality)");
    struct in_addr ip;
    int rc = direct_addr(one_host, &ip);
    if (rc)
        return rc;
    int64_t deadline = sdsm_io_now_ms() + sdsm_cfg.timeout * 1000;
    sdsm_ctrl_addr_t me, *table;
    if ((rc = alloc_peers(b, &table)))
        return rc;
    if ((rc = listen_on(ip, &me)) < 0)
        goto out;
    b->listen_fd = rc;
    if ((rc = exchange(&me, sdsm_cfg.timeout, table, job_key)))
        goto out;
    rc = link_peers(b, table, deadline);
out:
    free(table);
    return rc;
}

/* Let a refusal name the rank the launcher gave in variable `name`. */
static void log_rank_from(const char *name)
{
    const char *s = getenv(name);
    long r;
    if (s && !sdsm_config_parse_long(s, 0, 1L << 30, &r))
        sdsm_log_rank = (int)r;
}

/* A launcher that starts N > 1 processes without PMIx or PMI-2's socket:
 * running on as a job of one would make N unrelated jobs that each print
 * their own results, so refuse instead.  A PMI reached some other way than
 * PMI_FD sets PMI_PORT (hydra's -pmi-port, which sets neither PMI_SIZE nor
 * PMI_RANK, only PMI_ID) or PMI_SIZE alone; srun with no MPI plugin
 * (--mpi=none, Slurm's default MpiDefault) sets only its own
 * SLURM_STEP_NUM_TASKS. */
static int launcher_without_pmi(void)
{
    const char *s = getenv("PMI_SIZE");
    long n;
    if (getenv("PMI_PORT")) {
        log_rank_from("PMI_ID");
        sdsm_error_log("started by a PMI launcher that is reached over a port (PMI_PORT is set, "
                       "e.g. mpiexec.hydra -pmi-port), which sdsm does not speak: it speaks PMI-2 "
                       "over the socket PMI_FD (srun --mpi=pmi2, mpiexec.hydra), PMIx, or sdsmrun");
        return SDSM_ENOTSUP;
    }
    if (s && !sdsm_config_parse_long(s, 1, 1L << 30, &n) && n >= 2) {
        log_rank_from("PMI_RANK");
        sdsm_error_log("started by a PMI launcher (PMI_SIZE=%ld) without its socket PMI_FD: sdsm "
                       "speaks PMI-2 over PMI_FD (srun --mpi=pmi2, mpiexec.hydra), PMIx, or sdsmrun",
                       n);
        return SDSM_ENOTSUP;
    }
    s = getenv("SLURM_STEP_NUM_TASKS");
    if (s && !sdsm_config_parse_long(s, 1, 1L << 30, &n) && n >= 2) {
        log_rank_from("SLURM_PROCID");
        sdsm_error_log("started by srun as one of %ld tasks without PMIx or PMI-2 "
                       "(SLURM_STEP_NUM_TASKS=%ld, no PMIX_RANK or PMI_FD): use srun --mpi=pmix or "
                       "--mpi=pmi2 (see srun --mpi=list) or sdsmrun",
                       n, n);
        return SDSM_ENOTSUP;
    }
    return 0;
}

/* Not started by sdsmrun: a PMIx or PMI-2 launcher, or a job of one. */
static int start_without_sdsmrun(sdsm_boot_t *b)
{
    int one_host, rc;
    if (sdsm_pmix_present()) {
        if ((rc = sdsm_pmix_start(&b->rank, &b->nprocs, &one_host)))
            return rc;
        return start_direct(b, one_host, sdsm_pmix_exchange);
    }
    if (sdsm_pmi2_present()) {
        if ((rc = sdsm_pmi2_start(&b->rank, &b->nprocs, &one_host, sdsm_cfg.timeout)))
            return rc;
        return start_direct(b, one_host, sdsm_pmi2_exchange);
    }
    if ((rc = launcher_without_pmi()))
        return rc;
    b->rank = 0;
    b->nprocs = b->local_nprocs = b->cpu_sharers = 1;
    return 0;
}

int sdsm_boot_start(sdsm_boot_t *b)
{
    memset(b, 0, sizeof *b);
    b->listen_fd = b->ctrl_fd = -1;
    if (sdsm_cfg.rank < 0)
        return start_without_sdsmrun(b);
    b->rank = (int)sdsm_cfg.rank;
    b->nprocs = (int)sdsm_cfg.nprocs;
    if (sdsm_auth_key_parse(sdsm_cfg.job_key, job_key)) {
        sdsm_error_log("SDSM_JOB_KEY is missing or malformed (run the program with sdsmrun)");
        return SDSM_EINVAL;
    }
    int64_t deadline = sdsm_io_now_ms() + sdsm_cfg.timeout * 1000;
    struct sockaddr_in la;
    if (parse_addr(sdsm_cfg.rendezvous, &la)) {
        sdsm_error_log("SDSM_RENDEZVOUS=%s: expected ip:port",
                       sdsm_cfg.rendezvous ? sdsm_cfg.rendezvous : "");
        return SDSM_EINVAL;
    }
    sdsm_ctrl_addr_t me, *table;
    int rc = alloc_peers(b, &table);
    if (rc)
        return rc;
    /* Listen where the link to the launcher leaves from: the kernel's
     * route choice, so the peers (which reach the launcher too) reach us
     * there; loopback when the job is on one host. */
    struct in_addr ip;
    if (sdsm_cfg.iface ? (rc = iface_addr(&ip)) != 0 : 0)
        goto out;
    if ((rc = launcher_connect(b, &la, deadline)))
        goto out;
    if (!sdsm_cfg.iface) {
        struct sockaddr_in mine;
        socklen_t l = sizeof mine;
        if (getsockname(ctrl_fd, (struct sockaddr *)&mine, &l)) {
            sdsm_error_log("getsockname: %m");
            rc = SDSM_ESYS;
            goto out;
        }
        ip = mine.sin_addr;
    }
    if ((rc = listen_on(ip, &me)) < 0)
        goto out;
    b->listen_fd = rc;
    if ((rc = rendezvous(b, &me, table, deadline)))
        goto out;
    if ((rc = link_peers(b, table, deadline)))
        goto out;
    fcntl(ctrl_fd, F_SETFL, O_NONBLOCK); /* polled by any thread making progress */
    b->ctrl_fd = ctrl_fd;
out:
    free(table);
    return rc;
}

void sdsm_boot_abort(int code, const char *reason)
{
    sdsm_pmix_abort(code, reason); /* each returns at once unless directly launched so */
    sdsm_pmi2_abort(code, reason);
    if (ctrl_fd < 0)
        return;
    size_t len = strlen(reason);
    if (len > SDSM_CTRL_MAX_REASON)
        len = SDSM_CTRL_MAX_REASON;
    uint8_t buf[4 + SDSM_CTRL_MAX_REASON];
    int32_t c = code;
    memcpy(buf, &c, 4);
    memcpy(buf + 4, reason, len);
    /* Bounded: this thread may be the one that was writing a state answer. */
    int locked = 0;
    for (int i = 0; i < 200 && !(locked = !pthread_mutex_trylock(&ctrl_mtx)); i++)
        usleep(1000);
    ctrl_send(SDSM_CTRL_ABORT, buf, (uint32_t)(4 + len), sdsm_io_now_ms() + 1000);
    if (locked)
        pthread_mutex_unlock(&ctrl_mtx);
}

void sdsm_boot_state(const char *text, size_t len)
{
    if (ctrl_fd < 0)
        return;
    if (len > SDSM_CTRL_MAX_REASON)
        len = SDSM_CTRL_MAX_REASON;
    pthread_mutex_lock(&ctrl_mtx);
    ctrl_send(SDSM_CTRL_STATE, text, (uint32_t)len, sdsm_io_now_ms() + 1000);
    pthread_mutex_unlock(&ctrl_mtx);
}

void sdsm_boot_lost(int rank, uint32_t silent_ms)
{
    if (ctrl_fd < 0)
        return;
    uint32_t r[2] = {(uint32_t)rank, silent_ms};
    pthread_mutex_lock(&ctrl_mtx);
    ctrl_send(SDSM_CTRL_LOST, r, silent_ms ? 8 : 4, sdsm_io_now_ms() + 200);
    pthread_mutex_unlock(&ctrl_mtx);
}

void sdsm_boot_done(void)
{
    if (ctrl_fd < 0)
        return;
    pthread_mutex_lock(&ctrl_mtx);
    ctrl_send(SDSM_CTRL_DONE, NULL, 0, sdsm_io_now_ms() + 1000);
    pthread_mutex_unlock(&ctrl_mtx);
}

void sdsm_boot_close(sdsm_boot_t *b)
{
    /* The peer links belong to the transport, which closed them. */
    if (b->listen_fd >= 0)
        close(b->listen_fd);
    if (ctrl_fd >= 0)
        close(ctrl_fd);
    free(b->peer_fds);
    b->peer_fds = NULL;
    free(b->same_host);
    free(b->host_of);
    b->same_host = NULL;
    b->host_of = NULL;
    b->listen_fd = b->ctrl_fd = ctrl_fd = -1;
    sdsm_pmix_fini();
    sdsm_pmi2_fini();
}
