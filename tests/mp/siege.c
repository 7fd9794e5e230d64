/*
 * siege.c - a job whose start-up is attacked by strangers on its ports.
 *
 *   mp_siege IDLE SLOW [K]      (SIEGE_READY=FILE in the environment)
 *
 * With IDLE + SLOW > 0, rank 0 forks an attacker before sdsm_init.  The
 * attacker waits until rank 0 listens, then opens to rank 0's port and to the
 * launcher's (SDSM_RENDEZVOUS) IDLE connections that never say a word and
 * SLOW ones that send a byte every 100 ms: half of them junk from the first
 * byte, half the connector's magic followed by zeros, which looks like a
 * handshake until its 64th byte.  It holds them until rank 0 exits, and
 * writes "ok" to FILE once they are all connected.  Ranks 1..N-1 wait for
 * that before their own sdsm_init, so the strangers are queued on rank 0's
 * port ahead of every peer of the job.
 *
 * Then every rank adds to a lock-protected counter K times (default 20),
 * a barrier, and everyone checks the total.  siege_test.sh compares the time
 * of this job with an unattacked one and reads the refusal lines.
 */
#define _GNU_SOURCE /* before mp.h: prctl, MSG_NOSIGNAL */
#define MP_NAME     "siege"
#include "mp.h"
#include "mp_listener.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define MAX_CONNS 256
#define WAIT_MS   10000 /* for rank 0's port, and for the attack to be in place */

static const char slow_magic[64] = "SDSMC1\0"; /* magic, then zeros */

typedef struct conn {
    int fd;
    int slow; /* 0 idle, 1 junk, 2 handshake-like */
    int sent;
} conn_t;

static conn_t conns[MAX_CONNS];
static int nconns;

static void attacker_fail(const char *ready, const char *why)
{
    FILE *f = fopen(ready, "w");
    if (f) {
        fprintf(f, "fail %s\n", why);
        fclose(f);
    }
    _exit(1);
}

static void open_conns(const char *ready, uint32_t ip, unsigned port, int idle, int slow)
{
    for (int i = 0; i < idle + slow && nconns < MAX_CONNS; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = {.s_addr = ip}};
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa))
            attacker_fail(ready, "cannot connect to a port of the job");
        conns[nconns++] = (conn_t){.fd = fd, .slow = i < idle ? 0 : 1 + (i - idle) % 2};
    }
}

/* One byte on every slow connection still open. */
static void dribble(void)
{
    for (int i = 0; i < nconns; i++) {
        conn_t *c = &conns[i];
        if (c->fd < 0 || !c->slow || c->sent >= 64)
            continue;
        char b = c->slow == 1 ? 'x' : slow_magic[c->sent];
        if (send(c->fd, &b, 1, MSG_NOSIGNAL) != 1) {
            close(c->fd);
            c->fd = -1;
            continue;
        }
        c->sent++;
    }
}

static void publish_ready(const char *ready)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", ready);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "ok %d\n", nconns) < 0 || fclose(f) || rename(tmp, ready))
        attacker_fail(ready, "cannot write the ready file");
}

static void attacker(pid_t rank0, const char *ready, int idle, int slow)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != rank0)
        _exit(0);
    /* Nothing of ours may keep the job's output open; failures go to the ready file. */
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    const char *rv = getenv("SDSM_RENDEZVOUS");
    char host[64];
    unsigned lport = 0;
    struct in_addr lip;
    if (!rv || sscanf(rv, "%63[^:]:%u", host, &lport) != 2 || inet_pton(AF_INET, host, &lip) != 1)
        attacker_fail(ready, "no usable SDSM_RENDEZVOUS");
    mp_endpoint_t e = {0, 0};
    for (int t = 0; t < WAIT_MS && !e.port; t++) {
        e = mp_listener(rank0);
        if (!e.port)
            mp_sleep_ms(1);
    }
    if (!e.port)
        attacker_fail(ready, "rank 0 never listened");
    open_conns(ready, e.ip, e.port, idle, slow);
    open_conns(ready, lip.s_addr, lport, idle, slow);
    dribble(); /* the first bytes before anyone looks */
    publish_ready(ready);
    for (;;) { /* until rank 0 exits (PDEATHSIG) */
        mp_sleep_ms(100);
        dribble();
    }
}

/* Ranks 1..N-1: start only once the strangers are queued at rank 0. */
static void wait_ready(const char *ready)
{
    for (int t = 0; t < WAIT_MS; t += 2) {
        FILE *f = fopen(ready, "r");
        if (f) {
            char line[256] = "";
            char *got = fgets(line, sizeof line, f);
            fclose(f);
            if (got && !strncmp(line, "ok", 2))
                return;
            fprintf(stderr, "siege: the attack could not be set up: %s", line);
            exit(1);
        }
        mp_sleep_ms(2);
    }
    fprintf(stderr, "siege: the attack was not in place after %d ms\n", WAIT_MS);
    exit(1);
}

int main(int argc, char **argv)
{
    int idle = argc > 1 ? atoi(argv[1]) : 0, slow = argc > 2 ? atoi(argv[2]) : 0;
    long K = argc > 3 ? atol(argv[3]) : 20;
    const char *ready = getenv("SIEGE_READY");
    const char *rank = getenv("SDSM_RANK");
    if (idle + slow > 0) {
        if (!ready || !rank) {
            fprintf(stderr, "siege: run under sdsmrun with SIEGE_READY=FILE\n");
            return 2;
        }
        if (atoi(rank) == 0) {
            pid_t me = getpid(), pid = fork();
            if (pid == 0)
                attacker(me, ready, idle, slow);
            if (pid < 0) {
                perror("siege: fork");
                return 1;
            }
        } else {
            wait_ready(ready);
        }
    }
    mp_init(&argc, &argv);
    int n = sdsm_nprocs();
    volatile long *ctr = sdsm_alloc(sizeof(long), 0);
    MP_NONNULL(ctr);
    MP_OK(sdsm_barrier());
    for (long k = 0; k < K; k++) {
        MP_OK(sdsm_lock(3));
        *ctr += 1;
        MP_OK(sdsm_unlock(3));
    }
    MP_OK(sdsm_barrier());
    MP_CHECK("counter", 0, (long)n * K, *ctr);
    MP_OK(sdsm_barrier());
    return mp_finish("siege");
}
