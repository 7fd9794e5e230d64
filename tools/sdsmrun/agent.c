/*
 * agent.c - `sdsmrun --agent HOST ...`: started by the launcher through the
 * remote shell on another host, it forks that host's ranks with the
 * environment the launcher gives its own (rank, size, rendezvous, key),
 * and reports on its stdout (frames, agent.h): their pids, output, stops and
 * exits.
 *
 * The job key arrives as the first line of stdin (never on a command line);
 * stdin then stays open and carries the launcher's heartbeats.  When it
 * closes (the launcher or its connection is gone), when it is silent for
 * the peer timeout (the launcher is stopped or the connection died without
 * a word), when stdout breaks or stays full for the peer timeout, or on
 * SIGTERM/SIGINT/SIGHUP, the agent stops its ranks: SIGTERM, SIGKILL 2 s
 * later, and exits once they are reaped.  Its ranks also die with it
 * (PR_SET_PDEATHSIG), so none is orphaned.  It sends a heartbeat frame
 * (agent.h) when it sent nothing else for a heartbeat interval.
 *
 * The command line is written by the launcher, not by users:
 *   --agent HOST --rendezvous IP[,IP...]:PORT --nprocs N --heartbeat-ms MS
 *   --peer-timeout-ms MS [--wdir DIR] (--rank R[:APP])... (--env NAME=VALUE)...
 *   [--bind-to core] [--report-bindings 1] [--app-words W0,W1,...]
 *   -- program args... [program args...]
 * where --app-words says how many words each program (MPMD) takes after
 * "--" (without it, all are one program) and APP numbers them from 0.
 */
#define _GNU_SOURCE
#include "launcher.h"
#include "agent.h"
#include "net/ifaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEY_WAIT_MS 10000

struct arank {
    int rank;
    int app, cpu; /* its program; the CPU --bind-to core pins it to (-1: none) */
    pid_t pid;
    int out[2]; /* our read ends of its stdout, stderr; -1 once closed */
    bool reaped;
};

/* The agent's whole state: one agent per process. */
static struct {
    const char *host, *rendezvous, *nprocs, *wdir;
    char key[2 * SDSM_KEY_BYTES + 1]; /* the job key: set in each rank's child only */
    char **words;                     /* after "--": the programs' words, one after the other */
    int nwords;
    const char *app_words; /* --app-words */
    char ***apps;          /* each program's argv, NULL-terminated */
    int napps;
    bool bind_core, report_bindings;
    struct arank *ranks; /* this host's, in the order of --rank */
    int nranks, nreaped;
    int sfd;
    pid_t pgid;
    struct proc_restore restore; /* what a rank's child restores before exec */
    bool stopping, killed, out_dead;
    int64_t stop_at;
    int64_t hb_us, timeout_us; /* 0: no heartbeats / no timeout */
    int64_t heard_at, sent_at; /* last byte from the launcher, last frame to it */
} agent_state = {.sfd = -1};

static void agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void agent_say(const char *fmt, ...)
{
    char prefix[300];
    int saved = errno; /* %m must see the caller's errno */
    snprintf(prefix, sizeof prefix, "sdsmrun (agent on %s): ", agent_state.host ? agent_state.host : "?");
    errno = saved;
    va_list ap;
    va_start(ap, fmt);
    launcher_vsay(prefix, fmt, ap);
    va_end(ap);
}

static void send_frame(uint8_t type, uint32_t rank, const void *p, uint32_t len)
{
    struct agent_frame f = {.type = type, .rank = htonl(rank), .len = htonl(len)};
    struct iovec iov[2] = {{&f, sizeof f}, {(void *)p, len}};
    size_t left = sizeof f + len;
    int k = 0;
    /* A launcher that reads nothing for the peer timeout is as gone as one
     * whose pipe broke: never block on it for longer. */
    int64_t until = launcher_now() + (agent_state.timeout_us ? agent_state.timeout_us : INT64_MAX / 2);
    agent_state.sent_at = launcher_now();
    while (left > 0 && !agent_state.out_dead) {
        ssize_t n = writev(STDOUT_FILENO, iov + k, 2 - k);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            int64_t wait = until - launcher_now();
            struct pollfd po = {.fd = STDOUT_FILENO, .events = POLLOUT};
            if (wait > 0 &&
                (poll(&po, 1, wait > 1000000 ? 1000 : (int)(wait / 1000) + 1) >= 0 || errno == EINTR))
                continue;
            agent_say("the launcher took nothing from this agent for %.1f s (SDSM_PEER_TIMEOUT): "
                      "stopping this host's ranks",
                      (double)agent_state.timeout_us / 1e6);
        }
        if (n <= 0) {
            agent_state.out_dead = true; /* the launcher is gone */
            return;
        }
        left -= (size_t)n;
        while (k < 2 && (size_t)n >= iov[k].iov_len) {
            n -= (ssize_t)iov[k].iov_len;
            k++;
        }
        if (k < 2) {
            iov[k].iov_base = (char *)iov[k].iov_base + n;
            iov[k].iov_len -= (size_t)n;
        }
    }
}

static void send_u32(uint8_t type, uint32_t rank, uint32_t v)
{
    v = htonl(v);
    send_frame(type, rank, &v, 4);
}

static __attribute__((noreturn)) void fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static __attribute__((noreturn)) void fail(int status, const char *fmt, ...)
{
    char buf[4 + AGENT_MAX_TEXT];
    uint32_t st = htonl((uint32_t)status);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + 4, AGENT_MAX_TEXT, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if (n >= (int)AGENT_MAX_TEXT)
        n = AGENT_MAX_TEXT - 1;
    memcpy(buf, &st, 4);
    send_frame(AGENT_FAIL, 0, buf, (uint32_t)(4 + n));
    exit(status);
}

/* "R" or "R:APP". */
static int parse_rank(const char *v)
{
    char *end;
    long r = strtol(v, &end, 10), app = 0;
    if (end == v || r < 0 || r >= LAUNCHER_MAX_RANKS)
        return -1;
    if (*end == ':') {
        const char *a = end + 1;
        app = strtol(a, &end, 10);
        if (end == a || app < 0 || app >= LAUNCHER_MAX_RANKS)
            return -1;
    }
    if (*end)
        return -1;
    agent_state.ranks[agent_state.nranks++] =
        (struct arank){.rank = (int)r, .app = (int)app, .cpu = -1, .out = {-1, -1}};
    return 0;
}

/* The words after "--" into the programs --app-words counts. */
static int split_apps(void)
{
    const char *p = agent_state.app_words ? agent_state.app_words : "";
    int used = 0;
    agent_state.apps = calloc((size_t)agent_state.nwords + 1, sizeof *agent_state.apps);
    if (!agent_state.apps)
        return -1;
    do {
        char *end;
        long w = *p ? strtol(p, &end, 10) : agent_state.nwords;
        if (*p && (end == p || (*end && *end != ',')))
            return -1;
        if (w < 1 || w > agent_state.nwords - used)
            return -1;
        char **argv = calloc((size_t)w + 1, sizeof *argv);
        if (!argv)
            return -1;
        memcpy(argv, agent_state.words + used, (size_t)w * sizeof *argv);
        agent_state.apps[agent_state.napps++] = argv;
        used += (int)w;
        p = *p ? end + (*end == ',') : p;
    } while (*p);
    for (int i = 0; i < agent_state.nranks; i++)
        if (agent_state.ranks[i].app >= agent_state.napps)
            return -1;
    return used == agent_state.nwords ? 0 : -1;
}

static int parse(int argc, char **argv)
{
    agent_state.ranks = calloc((size_t)argc, sizeof *agent_state.ranks);
    if (!agent_state.ranks)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--") == 0) {
            agent_state.words = argv + i + 1;
            agent_state.nwords = argc - i - 1;
            return agent_state.nwords && agent_state.host && agent_state.rendezvous && agent_state.nprocs &&
                           agent_state.nranks && split_apps() == 0
                       ? 0
                       : -1;
        }
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        if (strcmp(o, "--agent") == 0) {
            agent_state.host = v;
        } else if (strcmp(o, "--rendezvous") == 0) {
            agent_state.rendezvous = v;
        } else if (strcmp(o, "--nprocs") == 0) {
            agent_state.nprocs = v;
        } else if (strcmp(o, "--heartbeat-ms") == 0 || strcmp(o, "--peer-timeout-ms") == 0) {
            char *end;
            long ms = strtol(v, &end, 10);
            if (*end || end == v || ms < 0 || ms > 86400000L)
                return -1;
            *(o[2] == 'h' ? &agent_state.hb_us : &agent_state.timeout_us) = ms * 1000LL;
        } else if (strcmp(o, "--wdir") == 0) {
            agent_state.wdir = v;
        } else if (strcmp(o, "--rank") == 0) {
            if (parse_rank(v))
                return -1;
        } else if (strcmp(o, "--app-words") == 0) {
            agent_state.app_words = v;
        } else if (strcmp(o, "--bind-to") == 0) {
            agent_state.bind_core = strcmp(v, "core") == 0;
        } else if (strcmp(o, "--report-bindings") == 0) {
            agent_state.report_bindings = true;
        } else if (strcmp(o, "--env") == 0) {
            char *eq = strchr(v, '=');
            if (!eq || eq == v)
                return -1;
            *eq = '\0';
            int e = setenv(v, eq + 1, 1);
            *eq = '=';
            if (e)
                return -1;
        } else {
            return -1;
        }
    }
    return -1;
}

/* The first line of stdin: 64 hex digits and a newline. */
static int read_key(char hex[2 * SDSM_KEY_BYTES + 1])
{
    size_t have = 0, need = 2 * SDSM_KEY_BYTES + 1;
    char buf[2 * SDSM_KEY_BYTES + 1];
    int64_t until = launcher_now() + KEY_WAIT_MS * 1000LL;
    while (have < need) {
        int64_t left = until - launcher_now();
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left / 1000) + 1) == 0)
            return -1;
        ssize_t n = read(STDIN_FILENO, buf + have, need - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    uint8_t key[SDSM_KEY_BYTES];
    if (buf[need - 1] != '\n')
        return -1;
    buf[need - 1] = '\0';
    if (sdsm_auth_key_parse(buf, key))
        return -1;
    memcpy(hex, buf, need);
    return 0;
}

/* in_r: rank 0's end of its stdin pipe; -1 for the others (/dev/null). */
static __attribute__((noreturn)) void rank_child(struct arank *ar, int in_r, int out_w, int err_w)
{
    char num[16];
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        _exit(127);
    setpgid(0, agent_state.pgid);
    int in = in_r >= 0 ? in_r : open("/dev/null", O_RDONLY);
    if (in >= 0)
        dup2(in, STDIN_FILENO);
    dup2(out_w, STDOUT_FILENO);
    dup2(err_w, STDERR_FILENO);
    snprintf(num, sizeof num, "%d", ar->rank);
    setenv("SDSM_RANK", num, 1);
    setenv("SDSM_JOB_KEY", agent_state.key, 1);
    proc_child_restore(&agent_state.restore);
    proc_child_aslr();
    bind_child(ar->cpu);
    char **prog = agent_state.apps[ar->app];
    execvp(prog[0], prog);
    agent_say("cannot run '%s': %m", prog[0]);
    _exit(127);
}

static void start_ranks(void)
{
    bool shared = false;
    for (int i = 0; i < agent_state.nranks; i++) {
        struct arank *ar = &agent_state.ranks[i];
        int out_w, err_w, in[2] = {-1, -1};
        if (agent_state.bind_core)
            ar->cpu = bind_cpu(i, &shared);
        if (proc_out_pipe(&ar->out[0], &out_w) || proc_out_pipe(&ar->out[1], &err_w) ||
            (ar->rank == 0 && pipe2(in, O_CLOEXEC)))
            fail(1, "cannot start rank %d: pipe: %m", ar->rank);
        pid_t pid = fork();
        if (pid == 0)
            rank_child(ar, in[0], out_w, err_w);
        close(out_w);
        close(err_w);
        if (in[0] >= 0) {
            close(in[0]);
            fcntl(in[1], F_SETFL, O_NONBLOCK);
            agentin_init(in[1]);
        }
        if (pid < 0)
            fail(1, "cannot start rank %d: fork: %m", ar->rank);
        proc_join_group(pid, &agent_state.pgid);
        ar->pid = pid;
        send_u32(AGENT_PID, (uint32_t)ar->rank, (uint32_t)pid);
        if (agent_state.report_bindings)
            bind_report(agent_state.host, pid, ar->rank, ar->cpu);
    }
    if (shared)
        agent_say("--bind-to core: %d ranks on this host, more than its CPUs: some share one",
                  agent_state.nranks);
}

/* Pass on what one of a rank's streams holds; false at its end. */
static bool pass_output(struct arank *ar, int k, size_t budget)
{
    static char buf[AGENT_MAX_DATA];
    size_t got = 0;
    while (ar->out[k] >= 0 && got < budget) {
        ssize_t n = read(ar->out[k], buf, sizeof buf);
        if (n > 0) {
            send_frame(k ? AGENT_STDERR : AGENT_STDOUT, (uint32_t)ar->rank, buf, (uint32_t)n);
            got += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return true;
        } else {
            close(ar->out[k]);
            ar->out[k] = -1;
            return false;
        }
    }
    return ar->out[k] >= 0;
}

static void signal_ranks(int sig)
{
    if (agent_state.pgid > 0)
        kill(-agent_state.pgid, sig);
    for (int i = 0; i < agent_state.nranks; i++)
        if (!agent_state.ranks[i].reaped && agent_state.ranks[i].pid > 0)
            kill(agent_state.ranks[i].pid, sig);
}

static void stop(void)
{
    if (agent_state.stopping)
        return;
    agent_state.stopping = true;
    agent_state.stop_at = launcher_now();
    signal_ranks(SIGTERM);
    signal_ranks(SIGCONT);
}

static void reap(void)
{
    for (;;) {
        int st;
        pid_t pid = proc_wait_any(&st);
        if (pid <= 0)
            return;
        for (int i = 0; i < agent_state.nranks; i++) {
            struct arank *ar = &agent_state.ranks[i];
            if (ar->pid != pid || ar->reaped)
                continue;
            if (WIFSTOPPED(st)) {
                send_u32(AGENT_STOPPED, (uint32_t)ar->rank, (uint32_t)WSTOPSIG(st));
                break;
            }
            /* All it wrote goes before its exit; a descendant holding the
             * pipes open cannot keep us here (a bounded drain). */
            for (int k = 0; k < 2; k++) {
                pass_output(ar, k, 64u << 20);
                if (ar->out[k] >= 0)
                    close(ar->out[k]);
                ar->out[k] = -1;
            }
            ar->reaped = true;
            if (ar->rank == 0)
                agentin_close();
            agent_state.nreaped++;
            if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && !agent_state.stopping) {
                char why[AGENT_MAX_TEXT];
                oom_explain(true, why, sizeof why);
                send_frame(AGENT_OOM, (uint32_t)ar->rank, why, (uint32_t)strlen(why));
            }
            send_u32(AGENT_EXIT, (uint32_t)ar->rank, (uint32_t)st);
            break;
        }
    }
}

/* SIGUSR1/SIGUSR2, to us or from the launcher: to each rank (not its group). */
static void forward_signal(int sig)
{
    for (int i = 0; i < agent_state.nranks; i++)
        if (!agent_state.ranks[i].reaped && agent_state.ranks[i].pid > 0)
            kill(agent_state.ranks[i].pid, sig);
}

static void on_signals(void)
{
    struct signalfd_siginfo si[16];
    ssize_t n;
    while ((n = read(agent_state.sfd, si, sizeof si)) > 0)
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++) {
            int sig = (int)si[i].ssi_signo;
            if (sig == SIGUSR1 || sig == SIGUSR2)
                forward_signal(sig);
            else if (sig != SIGCHLD)
                stop();
        }
    reap();
}

static void setup_signals(void)
{
    signal(SIGPIPE, SIG_IGN);
    agent_state.restore.restore_sigpipe = true;
    if ((agent_state.sfd = proc_signalfd(&agent_state.restore.mask)) < 0)
        fail(1, "cannot set up signal handling: %m");
}

/* Our heartbeat to the launcher, and its to us: checked after stdin was
 * read, so an agent that was itself stopped a while does not blame it. */
static void heartbeat(int64_t now)
{
    if (agent_state.stopping)
        return;
    if (agentin_paused()) /* we hold the launcher back, not it us */
        agent_state.heard_at = now;
    if (agent_state.timeout_us && now - agent_state.heard_at >= agent_state.timeout_us) {
        agent_say("no word from the launcher for %.1f s (SDSM_PEER_TIMEOUT): it is stopped or "
                  "its connection is cut off; stopping this host's ranks",
                  (double)(now - agent_state.heard_at) / 1e6);
        stop();
        return;
    }
    if (agent_state.hb_us && now - agent_state.sent_at >= agent_state.hb_us)
        send_frame(AGENT_BEAT, 0, NULL, 0);
}

/* How long poll may sleep: until the next heartbeat or timeout, or a
 * stopping round's 100 ms. */
static int poll_ms(int64_t now)
{
    if (agent_state.stopping)
        return 100;
    int64_t next = INT64_MAX;
    if (agent_state.hb_us)
        next = agent_state.sent_at + agent_state.hb_us;
    if (agent_state.timeout_us && agent_state.heard_at + agent_state.timeout_us < next)
        next = agent_state.heard_at + agent_state.timeout_us;
    if (next == INT64_MAX)
        return -1;
    return next <= now ? 0 : (int)((next - now) / 1000) + 1;
}

/* What the launcher wrote on our stdin (agentin.c); false once it is gone. */
static bool read_launcher(void)
{
    uint8_t buf[4096];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0) {
        agent_state.heard_at = launcher_now();
        agentin_bytes(buf, (size_t)n, forward_signal);
    }
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        stop(); /* the launcher is gone */
        return false;
    }
    return true;
}

static void loop(void)
{
    struct pollfd *pfd = calloc(3 + 2 * (size_t)agent_state.nranks, sizeof *pfd);
    int *who = calloc(2 * (size_t)agent_state.nranks, sizeof *who);
    bool in_open = true;
    if (!pfd || !who)
        fail(1, "out of memory");
    while (agent_state.nreaped < agent_state.nranks) {
        int64_t now = launcher_now();
        if (agent_state.out_dead)
            stop();
        if (agent_state.stopping && !agent_state.killed && now >= agent_state.stop_at + KILL_AFTER_US) {
            signal_ranks(SIGKILL);
            agent_state.killed = true;
        }
        if (agent_state.stopping && now >= agent_state.stop_at + GIVE_UP_AFTER_US)
            break;
        size_t np = 0;
        pfd[np++] = (struct pollfd){.fd = agent_state.sfd, .events = POLLIN};
        pfd[np++] = (struct pollfd){.fd = in_open && !agentin_paused() ? STDIN_FILENO : -1, .events = POLLIN};
        pfd[np++] = (struct pollfd){.fd = agentin_fd(), .events = POLLOUT};
        for (int i = 0; i < agent_state.nranks; i++)
            for (int k = 0; k < 2; k++)
                if (agent_state.ranks[i].out[k] >= 0) {
                    who[np - 3] = 2 * i + k;
                    pfd[np++] = (struct pollfd){.fd = agent_state.ranks[i].out[k], .events = POLLIN};
                }
        if (poll(pfd, (nfds_t)np, poll_ms(now)) < 0 && errno != EINTR)
            fail(1, "poll: %m");
        for (size_t p = 3; p < np; p++)
            if (pfd[p].revents)
                pass_output(&agent_state.ranks[who[p - 3] / 2], who[p - 3] % 2, 4 * AGENT_MAX_DATA);
        if (pfd[2].revents)
            agentin_flush();
        if (pfd[1].revents)
            in_open = read_launcher();
        if (pfd[0].revents)
            on_signals();
        heartbeat(launcher_now());
    }
    free(pfd);
    free(who);
}

/* The launcher listens on each of its addresses: give the ranks the one
 * this host reaches. */
static void pick_rendezvous(char *out, size_t len)
{
    uint32_t cands[16];
    uint16_t port;
    int n = sdsm_ifaddr_parse_list(agent_state.rendezvous, cands, 16, &port);
    if (n <= 0)
        fail(1, "bad launcher address list '%s'", agent_state.rendezvous);
    int k = sdsm_ifaddr_pick(cands, n < 16 ? n : 16);
    if (k < 0)
        fail(1, "no route from here to the launcher at any of %s", agent_state.rendezvous);
    char ip[INET_ADDRSTRLEN];
    struct in_addr a = {.s_addr = cands[k]};
    inet_ntop(AF_INET, &a, ip, sizeof ip);
    snprintf(out, len, "%s:%u", ip, (unsigned)port);
}

/* Each program one of this host's ranks runs must be there. */
static void check_programs(void)
{
    for (int i = 0; i < agent_state.nranks; i++) {
        const char *prog = agent_state.apps[agent_state.ranks[i].app][0];
        int e = proc_check_program(prog);
        if (e) {
            errno = e;
            fail(127, "cannot run '%s': %m", prog);
        }
    }
}

int agent_main(int argc, char **argv)
{
    char rdv[32];
    char hex[2 * SDSM_KEY_BYTES + 1];
    /* First of all, so the launcher can tell us from a login banner. */
    ssize_t w = write(STDOUT_FILENO, AGENT_MAGIC, AGENT_MAGIC_LEN);
    (void)w;
    if (parse(argc, argv)) {
        agent_say("bad agent command line (this mode is for sdsmrun itself)");
        return 2;
    }
    setup_signals();
    oom_watch_start();
    if (read_key(hex))
        fail(1, "no job key on the agent's standard input");
    memcpy(agent_state.key, hex, sizeof agent_state.key);
    agent_state.heard_at = launcher_now();
    /* Writes wait at most the peer timeout (send_frame), never for ever. */
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
    if (agent_state.wdir && chdir(agent_state.wdir))
        fail(1, "cannot change to the directory '%s': %m", agent_state.wdir);
    check_programs();
    pick_rendezvous(rdv, sizeof rdv);
    if (setenv("SDSM_NPROCS", agent_state.nprocs, 1) || setenv("SDSM_RENDEZVOUS", rdv, 1) ||
        unsetenv("SDSM_JOB_KEY") || setenv("SDSM_HOST", agent_state.host, 1))
        fail(1, "cannot set the ranks' environment: %m");
    send_frame(AGENT_HELLO, 0, NULL, 0);
    start_ranks();
    loop();
    /* A rank that ended by itself may have left children (in its group or
     * a session of their own, ours as subreaper): none outlives the job. */
    proc_sweep_group(agent_state.pgid, agent_state.killed);
    return 0;
}
