/*
 * fake_rank.c - a stand-in for an sdsm program, for testing sdsmrun without
 * the runtime: it speaks the control-link protocol (handshake, REGISTER,
 * TABLE, then DONE or ABORT) and then misbehaves as its arguments say.
 *
 *   fake_rank [tag=ANY] ACTION [ARGS...]
 *
 * Post-init actions:  ok | exit K | segv | abort C MSG | hang | nofinalize |
 *                     stop | badframe | printenv | run0 PROG [ARGS...] |
 *                     rankdo R ACTION [ARGS...]
 * Pre-init actions:   early R K (rank R exits K before connecting) |
 *                     wrongreg R (rank R registers under rank R+1)
 * For rankdo and the pre-init actions, the other ranks send DONE and wait
 * forever (rankdo), or just do `ok` (pre-init actions).
 *
 * tag=ANY is ignored; tests put a unique word there to find leftovers.
 * FAKE_IGNORE_TERM=1 ignores SIGTERM (to test the SIGKILL escalation);
 * FAKE_RANK0_PRE=CMD makes rank 0 run `sh -c CMD` before it connects.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/auth.h"
#include "net/wire.h"

#define IO_MS 60000 /* a rank still waiting after this is long dead in any test */

static int my_rank, nprocs, ctrl = -1;

static __attribute__((noreturn, format(printf, 2, 3))) void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fake_rank %d: ", my_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static int env_int(const char *name)
{
    const char *s = getenv(name);
    char *end;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || *end || v < 0)
        die(99, "%s is missing or malformed", name);
    return (int)v;
}

static void send_frame(uint16_t type, const void *p, uint32_t len)
{
    sdsm_hdr_t h = {.len = len, .type = type};
    int64_t dl = sdsm_io_now_ms() + IO_MS;
    int e = sdsm_io_write_full(ctrl, &h, sizeof h, dl);
    if (!e && len)
        e = sdsm_io_write_full(ctrl, p, len, dl);
    if (e)
        die(1, "sending control message %u: %s", type, strerror(errno));
}

static int listen_any(sdsm_ctrl_addr_t *me)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 16) ||
        getsockname(fd, (struct sockaddr *)&a, &l))
        die(1, "listen: %m");
    me->ipv4 = a.sin_addr.s_addr;
    me->port = a.sin_port;
    me->cpu1 = 0;
    return fd;
}

static int connect_rendezvous(void)
{
    const char *rv = getenv("SDSM_RENDEZVOUS");
    const char *colon = rv ? strrchr(rv, ':') : NULL;
    char host[64];
    if (!colon || (size_t)(colon - rv) >= sizeof host)
        die(99, "SDSM_RENDEZVOUS is missing or malformed");
    memcpy(host, rv, (size_t)(colon - rv));
    host[colon - rv] = '\0';
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        die(99, "SDSM_RENDEZVOUS=%s: bad address", rv);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a))
        die(1, "connect to %s: %m", rv);
    int one = 1; /* header and payload go in two writes: no Nagle wait between them */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void read_table(const sdsm_ctrl_addr_t *me)
{
    int64_t dl = sdsm_io_now_ms() + IO_MS;
    sdsm_hdr_t h;
    uint32_t n;
    int e = sdsm_io_read_full(ctrl, &h, sizeof h, dl);
    if (e)
        die(1, "reading the table: %s", strerror(errno));
    if (h.type != SDSM_CTRL_TABLE || h.len != 4 + (uint32_t)nprocs * sizeof(sdsm_ctrl_addr_t))
        die(1, "bad table header: type %u len %u", h.type, h.len);
    sdsm_ctrl_addr_t *t = malloc((size_t)nprocs * sizeof *t);
    if (!t || sdsm_io_read_full(ctrl, &n, 4, dl) ||
        sdsm_io_read_full(ctrl, t, (size_t)nprocs * sizeof *t, dl))
        die(1, "reading the table body failed");
    if (n != (uint32_t)nprocs)
        die(1, "table has %u entries, expected %d", n, nprocs);
    if (memcmp(&t[my_rank], me, sizeof *me) != 0)
        die(1, "my own table entry is wrong");
    for (int r = 0; r < nprocs; r++)
        if (t[r].port == 0 || t[r].ipv4 != htonl(INADDR_LOOPBACK))
            die(1, "table entry %d is empty", r);
    free(t);
}

static void init(uint32_t reg_rank)
{
    uint8_t key[SDSM_KEY_BYTES];
    sdsm_ctrl_register_t reg = {.rank = reg_rank, .pid = (uint32_t)getpid()};
    if (sdsm_auth_key_parse(getenv("SDSM_JOB_KEY"), key))
        die(99, "SDSM_JOB_KEY is missing or malformed");
    listen_any(&reg.addr);
    ctrl = connect_rendezvous();
    int e = sdsm_auth_connector(ctrl, key, (uint32_t)my_rank, 5000);
    if (e)
        die(1, "handshake with the launcher: %s", strerror(errno));
    send_frame(SDSM_CTRL_REGISTER, &reg, sizeof reg);
    read_table(&reg.addr);
}

static __attribute__((noreturn)) void hang(void)
{
    for (;;)
        pause();
}

static __attribute__((noreturn)) void finish_ok(void)
{
    send_frame(SDSM_CTRL_DONE, NULL, 0);
    printf("rank %d of %d ok\n", my_rank, nprocs);
    exit(0);
}

/* Run a helper (the stranger) while this rank is part of a live job. */
static __attribute__((noreturn)) void run0(char **argv)
{
    if (my_rank != 0)
        finish_ok();
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        die(127, "cannot run %s: %m", argv[0]);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        die(1, "running %s failed: %m", argv[0]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die(1, "%s failed (wait status %#x)", argv[0], st);
    finish_ok();
}

static __attribute__((noreturn)) void abort_job(int code, const char *msg)
{
    uint8_t buf[4 + 256];
    int32_t c = code;
    size_t len = strlen(msg) > 256 ? 256 : strlen(msg);
    memcpy(buf, &c, 4);
    memcpy(buf + 4, msg, len);
    send_frame(SDSM_CTRL_ABORT, buf, (uint32_t)(4 + len));
    exit(code);
}

static __attribute__((noreturn)) void act(int argc, char **argv)
{
    const char *a = argc > 0 ? argv[0] : "";
    if (!strcmp(a, "ok"))
        finish_ok();
    if (!strcmp(a, "exit") && argc > 1)
        exit(atoi(argv[1]));
    if (!strcmp(a, "segv")) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* no core files in the build tree */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    if (!strcmp(a, "abort") && argc > 2)
        abort_job(atoi(argv[1]), argv[2]);
    if (!strcmp(a, "hang"))
        hang();
    if (!strcmp(a, "nofinalize"))
        exit(0);
    if (!strcmp(a, "stop")) {
        raise(SIGSTOP);
        hang();
    }
    if (!strcmp(a, "badframe")) {
        send_frame(77, NULL, 0);
        hang();
    }
    if (!strcmp(a, "printenv")) {
        const char *st = getenv("SDSM_STATS"), *pr = getenv("SDSM_PROTOCOL");
        printf("rank %d of %d: SDSM_STATS=%s SDSM_PROTOCOL=%s\n", my_rank, nprocs, st ? st : "-",
               pr ? pr : "-");
        fflush(stdout);
        finish_ok();
    }
    if (!strcmp(a, "run0") && argc > 1)
        run0(argv + 1);
    if (!strcmp(a, "rankdo") && argc > 2) {
        if (atoi(argv[1]) == my_rank)
            act(argc - 2, argv + 2);
        send_frame(SDSM_CTRL_DONE, NULL, 0);
        hang();
    }
    die(99, "unknown or incomplete action '%s'", a);
}

static void pre_init(int argc, char **argv, uint32_t *reg_rank)
{
    const char *pre = getenv("FAKE_RANK0_PRE");
    if (getenv("FAKE_IGNORE_TERM"))
        signal(SIGTERM, SIG_IGN);
    if (pre && my_rank == 0) {
        int st = system(pre);
        if (st != 0)
            die(1, "FAKE_RANK0_PRE failed (status %#x)", st);
    }
    if (argc > 2 && !strcmp(argv[0], "early") && atoi(argv[1]) == my_rank)
        exit(atoi(argv[2]));
    if (argc > 1 && !strcmp(argv[0], "wrongreg") && atoi(argv[1]) == my_rank)
        *reg_rank = (uint32_t)my_rank + 1;
}

int main(int argc, char **argv)
{
    argc--, argv++;
    if (argc > 0 && !strncmp(argv[0], "tag=", 4))
        argc--, argv++;
    my_rank = env_int("SDSM_RANK");
    nprocs = env_int("SDSM_NPROCS");
    if (my_rank >= nprocs)
        die(99, "SDSM_RANK=%d is not below SDSM_NPROCS=%d", my_rank, nprocs);
    uint32_t reg_rank = (uint32_t)my_rank;
    pre_init(argc, argv, &reg_rank);
    init(reg_rank);
    if (argc > 0 && (!strcmp(argv[0], "early") || !strcmp(argv[0], "wrongreg")))
        finish_ok();
    act(argc, argv);
}
