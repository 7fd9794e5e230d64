/*
 * agents.c - the launcher's side of the agents (agent.c is the agent
 * itself): for every other host that has ranks the launcher starts
 * `RSH HOST SDSMRUN --agent ...`; the agent forks that host's ranks and
 * talks back on its stdout in frames (agent.h).  The job key goes down the
 * remote shell's stdin, never on a command line; that stdin stays open, so
 * the agent sees the launcher go away and takes its ranks down.
 *
 * An agent's frames are validated like any input from the network: a rank
 * must be one of that host's, lengths must fit the type.  Heartbeats go
 * both ways on that link (agent.h), so a stopped agent or a host whose
 * connection died silently is named within SDSM_PEER_TIMEOUT.
 */
#define _GNU_SOURCE
#include "launcher.h"
#include "agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define READ_BUDGET (256 * 1024) /* per agent per poll round */

/* ---------------------------------------------------- starting agents */

/* Words of a command line for the remote shell, which joins them for a
 * shell on the other side: each goes in single quotes. */
struct words {
    char **w;
    size_t n, cap;
    bool oom;
};

static void add_word(struct words *ws, char *w)
{
    if (!w) {
        ws->oom = true;
        return;
    }
    if (ws->n + 2 > ws->cap) {
        size_t cap = ws->cap ? 2 * ws->cap : 32;
        char **nw = realloc(ws->w, cap * sizeof *nw);
        if (!nw) {
            free(w);
            ws->oom = true;
            return;
        }
        ws->w = nw;
        ws->cap = cap;
    }
    ws->w[ws->n++] = w;
    ws->w[ws->n] = NULL;
}

static char *quoted(const char *s)
{
    size_t len = 3;
    for (const char *p = s; *p; p++)
        len += *p == '\'' ? 4 : 1;
    char *q = malloc(len), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

static void add_quoted(struct words *ws, const char *s) { add_word(ws, quoted(s)); }

static void add_printf(struct words *ws, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_printf(struct words *ws, const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) {
        ws->oom = true;
        return;
    }
    add_quoted(ws, s);
    free(s);
}

static void free_words(struct words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    free(ws->w);
}

/* Variables every remote rank gets: -x ones and this environment's SDSM_*
 * (sdsmrun sets the job's own ones itself). */
static bool forwarded(const char *e)
{
    static const char *const own[] = {
        "SDSM_RANK=", "SDSM_NPROCS=", "SDSM_RENDEZVOUS=", "SDSM_JOB_KEY=", "SDSM_HOST=", "SDSM_RSH=", NULL};
    if (strncmp(e, "SDSM_", 5) != 0 || !strchr(e, '='))
        return false;
    for (int i = 0; own[i]; i++)
        if (strncmp(e, own[i], strlen(own[i])) == 0)
            return false;
    return true;
}

static char *sdsmrun_path(const struct job *j)
{
    char self[PATH_MAX];
    if (j->prefix) {
        char *p;
        return asprintf(&p, "%s/sdsmrun", j->prefix) < 0 ? NULL : p;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return strdup("sdsmrun");
    self[n] = '\0';
    return strdup(self);
}

/* Binding, and the programs' word counts (the words follow "--", one
 * program after the other). */
static void add_job_options(const struct job *j, struct words *ws)
{
    if (j->bind_core) {
        add_quoted(ws, "--bind-to");
        add_quoted(ws, "core");
    }
    if (j->report_bindings) {
        add_quoted(ws, "--report-bindings");
        add_quoted(ws, "1");
    }
    size_t cap = 12 * (size_t)j->napps + 1, o = 0;
    char *counts = malloc(cap);
    if (!counts) {
        ws->oom = true;
        return;
    }
    counts[0] = '\0';
    for (int k = 0; k < j->napps; k++) {
        int words = 0;
        while (j->apps[k].argv[words])
            words++;
        o += (size_t)snprintf(counts + o, cap - o, "%s%d", k ? "," : "", words);
    }
    add_quoted(ws, "--app-words");
    add_quoted(ws, counts);
    free(counts);
}

static int build_argv(const struct job *j, const struct agent *a, struct words *ws)
{
    extern char **environ;
    char cwd[PATH_MAX];
    char *rsh = strdup(j->rsh), *save;
    if (!rsh)
        return -1;
    for (char *w = strtok_r(rsh, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        add_word(ws, strdup(w));
    free(rsh);
    add_word(ws, strdup(j->hosts[a->host].name));
    char *self = sdsmrun_path(j);
    if (self)
        add_quoted(ws, self);
    else
        ws->oom = true;
    free(self);
    add_quoted(ws, "--agent");
    add_quoted(ws, j->hosts[a->host].name);
    add_quoted(ws, "--rendezvous");
    add_quoted(ws, j->rdv_agents);
    add_quoted(ws, "--nprocs");
    add_printf(ws, "%d", j->n);
    add_quoted(ws, "--heartbeat-ms");
    add_printf(ws, "%lld", (long long)(j->hb_us / 1000));
    add_quoted(ws, "--peer-timeout-ms");
    add_printf(ws, "%lld", (long long)(j->peer_timeout_us / 1000));
    if (getcwd(cwd, sizeof cwd)) {
        add_quoted(ws, "--wdir");
        add_quoted(ws, cwd);
    }
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].agent == (int)(a - j->agents)) {
            add_quoted(ws, "--rank");
            add_printf(ws, "%d:%d", r, j->ranks[r].app);
        }
    add_job_options(j, ws);
    for (int i = 0; i < j->nxenv; i++) {
        add_quoted(ws, "--env");
        add_quoted(ws, j->xenv[i]);
    }
    for (char **e = environ; *e; e++)
        if (forwarded(*e)) {
            add_quoted(ws, "--env");
            add_quoted(ws, *e);
        }
    add_quoted(ws, "--");
    for (int k = 0; k < j->napps; k++)
        for (char **p = j->apps[k].argv; *p; p++)
            add_quoted(ws, *p);
    return ws->oom ? -1 : 0;
}

static __attribute__((noreturn)) void agent_child(const struct job *j, const struct agent *a, char **argv,
                                                  int in_r, int out_w)
{
    proc_child_begin(j->self, j->pgid);
    dup2(in_r, STDIN_FILENO);
    dup2(out_w, STDOUT_FILENO);
    proc_child_restore(&j->child_restore);
    execvp(argv[0], argv);
    launcher_say("host %s: cannot run the remote shell '%s': %m", j->hosts[a->host].name, argv[0]);
    _exit(127);
}

static int start_agent(struct job *j, struct agent *a)
{
    struct words ws = {0};
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    const char *host = j->hosts[a->host].name;
    if (build_argv(j, a, &ws)) {
        free_words(&ws);
        job_fail(j, 1, "host %s: out of memory building the agent's command line", host);
        return -1;
    }
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
        job_fail(j, 1, "host %s: cannot start its agent: pipe: %m", host);
        goto fail;
    }
    pid_t pid = fork();
    if (pid == 0)
        agent_child(j, a, ws.w, in[0], out[1]);
    if (pid < 0) {
        job_fail(j, 1, "host %s: cannot start its agent: fork: %m", host);
        goto fail;
    }
    proc_join_group(pid, &j->pgid);
    close(in[0]);
    close(out[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(in[1], F_SETFL, O_NONBLOCK); /* a stopped agent must not stop our heartbeats */
    a->pid = pid;
    a->in_w = in[1];
    a->out_r = out[0];
    a->ready_by = launcher_now() + j->setup_us;
    a->beat_at = launcher_now() + j->hb_us;
    /* 65 bytes into an empty pipe: never blocks. */
    char line[sizeof j->keyhex + 1];
    int n = snprintf(line, sizeof line, "%s\n", j->keyhex);
    if (write(a->in_w, line, (size_t)n) != n)
        launcher_verbose(j, "host %s: cannot pass the job key to its agent: %m", host);
    launcher_verbose(j, "host %s: agent started through '%s' (pid %d) at %.1f ms", host, j->rsh, (int)pid,
                     launcher_ms(j, launcher_now()));
    free_words(&ws);
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    free_words(&ws);
    return -1;
}

int agents_start(struct job *j)
{
    for (int i = 0; i < j->nagents; i++)
        if (start_agent(j, &j->agents[i])) {
            /* Those not started count as gone. */
            for (int k = i; k < j->nagents; k++)
                j->agents[k].reaped = true;
            return -1;
        }
    return 0;
}

/* Mark every rank an agent has not reported as gone: it can report no more. */
static int abandon_ranks(struct job *j, struct agent *a)
{
    int left = 0;
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (rk->agent != (int)(a - j->agents) || rk->reaped)
            continue;
        left++;
        iofwd_feed_end(j, r);
        rk->reaped = rk->judged = true;
        rk->linger = 0;
        j->nreaped++;
        j->njudged++;
    }
    return left;
}

static void agent_failed(struct job *j, struct agent *a, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void agent_failed(struct job *j, struct agent *a, int status, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    a->failed = true;
    job_fail(j, status, "host %s: %s", j->hosts[a->host].name, why);
}

static void bad_frame(struct job *j, struct agent *a, const struct agent_frame *f)
{
    agent_failed(j, a, 1, "its agent sent a bad message (type %u, rank %u, length %u)", (unsigned)f->type,
                 ntohl(f->rank), ntohl(f->len));
    if (a->out_r >= 0)
        close(a->out_r);
    a->out_r = -1;
}

static bool frame_ok(const struct job *j, const struct agent *a, const struct agent_frame *f)
{
    uint32_t r = ntohl(f->rank), len = ntohl(f->len);
    bool mine = r < (uint32_t)j->n && j->ranks[r].agent == (int)(a - j->agents) && !j->ranks[r].reaped;
    switch (f->type) {
    case AGENT_HELLO: return !a->ready && len == 0;
    case AGENT_FAIL: return len >= 4 && len <= AGENT_MAX_TEXT + 4;
    case AGENT_BEAT: return a->ready && r == 0 && len == 0;
    case AGENT_PID:
    case AGENT_STOPPED:
    case AGENT_EXIT: return a->ready && mine && len == 4;
    case AGENT_STDOUT:
    case AGENT_STDERR: return a->ready && mine && len > 0 && len <= AGENT_MAX_DATA;
    case AGENT_OOM: return a->ready && mine && len > 0 && len < AGENT_MAX_TEXT;
    default: return false;
    }
}

/* Agent text is from another host: one printable line. */
static void printable(char *out, const uint8_t *in, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (in[i] < 0x20 || in[i] == 0x7f) ? '?' : (char)in[i];
    out[len] = '\0';
}

static void frame(struct job *j, struct agent *a, const struct agent_frame *f, const uint8_t *p)
{
    uint32_t r = ntohl(f->rank), len = ntohl(f->len), v = 0;
    struct rank *rk = r < (uint32_t)j->n ? &j->ranks[r] : NULL;
    const char *host = j->hosts[a->host].name;
    if (len == 4) {
        memcpy(&v, p, 4);
        v = ntohl(v);
    }
    switch (f->type) {
    case AGENT_BEAT: /* its arrival was the news */ break;
    case AGENT_HELLO:
        a->ready = true;
        launcher_verbose(j, "host %s: agent ready at %.1f ms", host, launcher_ms(j, launcher_now()));
        break;
    case AGENT_FAIL: {
        char text[AGENT_MAX_TEXT + 1];
        memcpy(&v, p, 4);
        printable(text, p + 4, len - 4);
        int status = (int)(ntohl(v) & 0xff);
        agent_failed(j, a, status ? status : 1, "%s", text);
        break;
    }
    case AGENT_PID:
        rk->pid = (pid_t)v;
        rk->t_spawn = launcher_now();
        launcher_verbose(j, "rank %u: pid %u on host %s started at %.1f ms", r, v, host,
                         launcher_ms(j, rk->t_spawn));
        break;
    case AGENT_STDOUT:
    case AGENT_STDERR:
        iofwd_feed(j, (int)r, f->type == AGENT_STDOUT ? STDOUT_FILENO : STDERR_FILENO, p, len);
        break;
    case AGENT_STOPPED: job_rank_stopped(j, rk, (int)v); break;
    case AGENT_OOM:
        free(rk->oom);
        if ((rk->oom = malloc(len + 1)))
            printable(rk->oom, p, len);
        break;
    case AGENT_EXIT:
        iofwd_feed_end(j, (int)r);
        job_rank_exited(j, rk, (int)v);
        job_judge_reaped(j);
        break;
    }
}

/* Complete frames in a's buffer; keeps a partial one. */
static void frames(struct job *j, struct agent *a)
{
    size_t off = 0;
    while (a->out_r >= 0 && a->len - off >= sizeof(struct agent_frame)) {
        struct agent_frame f;
        memcpy(&f, a->buf + off, sizeof f);
        if (!frame_ok(j, a, &f)) {
            bad_frame(j, a, &f);
            a->len = 0;
            return;
        }
        size_t len = ntohl(f.len);
        if (a->len - off < sizeof f + len)
            break;
        frame(j, a, &f, a->buf + off + sizeof f);
        off += sizeof f + len;
    }
    memmove(a->buf, a->buf + off, a->len - off);
    a->len -= off;
}

/* Remember the start of what the remote shell printed before the agent, as
 * one printable line. */
static void keep_banner(struct agent *a, const uint8_t *p, size_t len)
{
    size_t room = sizeof a->banner - 1;
    for (size_t i = 0; i < len; i++, a->banner_len++) {
        uint8_t b = p[i];
        if (a->banner_len < room) /* all are counted, for the limit */
            a->banner[a->banner_len] = (b == '\n' || b == '\r' || b == '\t') ? ' '
                                       : (b < 0x20 || b >= 0x7f)             ? '?'
                                                                             : (char)b;
    }
    a->banner[a->banner_len < room ? a->banner_len : room] = '\0';
}

/* "'Welcome to h1 ...'": what the remote shell printed, for a message. */
static const char *banner_text(const struct agent *a, char *buf, size_t len)
{
    size_t n = strlen(a->banner);
    while (n > 0 && a->banner[n - 1] == ' ')
        n--;
    snprintf(buf, len, "'%.*s%s'", (int)n, a->banner, a->banner_len >= sizeof a->banner - 1 ? "..." : "");
    return buf;
}

/* No magic will come: the tail kept in case it started there is banner too. */
static void banner_tail(struct agent *a)
{
    if (a->synced || !a->len)
        return;
    keep_banner(a, a->buf, a->len);
    a->len = 0;
}

static void unexpected_output(struct job *j, struct agent *a, const char *after)
{
    char text[sizeof a->banner + 8];
    banner_tail(a);
    a->failed = true;
    job_fail(j, 1, "unexpected output from the remote shell on host %s: %s%s", j->hosts[a->host].name,
             banner_text(a, text, sizeof text), after);
}

/*
 * Skip what comes before AGENT_MAGIC (agent.h).  False while it has not come;
 * a tail that may be the magic's start stays in the buffer.
 */
static bool find_magic(struct job *j, struct agent *a)
{
    uint8_t *m = memmem(a->buf, a->len, AGENT_MAGIC, AGENT_MAGIC_LEN);
    size_t skip = m ? (size_t)(m - a->buf) : a->len >= AGENT_MAGIC_LEN ? a->len - (AGENT_MAGIC_LEN - 1) : 0;
    keep_banner(a, a->buf, skip);
    if (m)
        skip += AGENT_MAGIC_LEN;
    memmove(a->buf, a->buf + skip, a->len - skip);
    a->len -= skip;
    if (m) {
        a->synced = true;
        if (a->banner_len) {
            char text[sizeof a->banner + 8];
            launcher_verbose(j, "host %s: the remote shell printed %s before the agent started",
                             j->hosts[a->host].name, banner_text(a, text, sizeof text));
        }
    } else if (a->banner_len > AGENT_MAX_BANNER) {
        unexpected_output(j, a, " (no agent after it)");
        close(a->out_r);
        a->out_r = -1;
    }
    return m != NULL;
}

static void agent_read(struct job *j, struct agent *a, size_t budget)
{
    size_t got = 0;
    while (a->out_r >= 0 && got < budget) {
        if (a->cap - a->len < 65536) {
            size_t cap = a->cap ? 2 * a->cap : sizeof(struct agent_frame) + AGENT_MAX_DATA + 65536;
            uint8_t *nb = realloc(a->buf, cap);
            if (!nb) {
                agent_failed(j, a, 1, "out of memory reading its agent");
                close(a->out_r);
                a->out_r = -1;
                return;
            }
            a->buf = nb;
            a->cap = cap;
        }
        ssize_t n = read(a->out_r, a->buf + a->len, a->cap - a->len);
        if (n > 0) {
            a->heard_at = launcher_now();
            a->len += (size_t)n;
            got += (size_t)n;
            if (a->synced || find_magic(j, a))
                frames(j, a);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return;
        } else {
            close(a->out_r);
            a->out_r = -1;
        }
    }
}

static void describe(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

bool agents_reaped(struct job *j, pid_t pid, int st)
{
    struct agent *a = NULL;
    for (int i = 0; i < j->nagents; i++)
        if (j->agents[i].pid == pid && !j->agents[i].reaped)
            a = &j->agents[i];
    if (!a)
        return false;
    agent_read(j, a, SIZE_MAX); /* its last reports are still in the pipe */
    banner_tail(a);
    a->reaped = true;
    a->wstatus = st;
    if (a->out_r >= 0)
        close(a->out_r);
    if (a->in_w >= 0)
        close(a->in_w);
    a->out_r = a->in_w = -1;
    free(a->buf);
    a->buf = NULL;
    a->len = a->cap = 0;
    char how[128];
    describe(st, how, sizeof how);
    int left = abandon_ranks(j, a);
    if (j->stopping || a->failed) {
        launcher_verbose(j, "host %s: agent (pid %d) %s", j->hosts[a->host].name, (int)pid, how);
    } else if (!a->ready && a->banner_len && !a->synced) {
        char after[200];
        snprintf(after, sizeof after, "; it %s before the agent started", how);
        unexpected_output(j, a, after);
    } else if (!a->ready) {
        agent_failed(j, a, 1, "the remote shell '%s' failed before the agent started: it %s", j->rsh, how);
    } else if (left || !WIFEXITED(st) || WEXITSTATUS(st)) {
        agent_failed(j, a, 1, "its agent (pid %d) %s with %d rank(s) still running", (int)pid, how, left);
    }
    return true;
}

size_t agents_npoll(const struct job *j) { return (size_t)j->nagents; }

size_t agents_pollset(struct job *j, struct pollfd *pfd)
{
    for (int i = 0; i < j->nagents; i++)
        pfd[i] = (struct pollfd){.fd = j->agents[i].out_r, .events = POLLIN};
    return (size_t)j->nagents;
}

void agents_events(struct job *j, const struct pollfd *pfd)
{
    for (int i = 0; i < j->nagents; i++)
        if (pfd[i].revents && j->agents[i].out_r >= 0)
            agent_read(j, &j->agents[i], READ_BUDGET);
}

/* A heartbeat byte down a's stdin; a full pipe (a stopped agent) skips it. */
static void agent_beat(struct job *j, struct agent *a, int64_t now)
{
    if (a->in_w < 0 || !j->hb_us || now < a->beat_at)
        return;
    a->beat_at = now + j->hb_us;
    ssize_t w = write(a->in_w, "\n", 1);
    (void)w;
}

/* One byte down each agent's stdin (agent.h); a full pipe (a stopped
 * agent) loses it, as a signal to a stopped process would wait. */
void agents_forward_signal(struct job *j, int sig)
{
    char b = sig == SIGUSR1 ? AGENT_IN_USR1 : AGENT_IN_USR2;
    for (int i = 0; i < j->nagents; i++) {
        struct agent *a = &j->agents[i];
        if (a->in_w >= 0 && write(a->in_w, &b, 1) != 1)
            launcher_say("host %s: cannot pass signal %d on to its agent: %m", j->hosts[a->host].name, sig);
    }
}

/* "rank 4, 5": the ranks an agent runs, for messages (a long list is cut short). */
static void agent_ranks(const struct job *j, const struct agent *a, char *buf, size_t len)
{
    size_t off = 0;
    int n = 0;
    buf[0] = '\0';
    for (int r = 0; r < j->n && off + 16 < len; r++)
        if (j->ranks[r].agent == (int)(a - j->agents))
            off += (size_t)snprintf(buf + off, len - off, "%s%d", n++ ? ", " : "rank ", r);
    if (off + 16 >= len)
        snprintf(buf + off, len - off, ", ...");
}

/* An agent that said hello and then nothing for the peer timeout. */
static bool agent_silent(const struct job *j, const struct agent *a, int64_t now)
{
    return a->ready && !a->reaped && !a->failed && j->peer_timeout_us &&
           now - a->heard_at >= j->peer_timeout_us;
}

void agents_timers(struct job *j, int64_t now)
{
    for (int i = 0; i < j->nagents && !j->stopping; i++) {
        struct agent *a = &j->agents[i];
        agent_beat(j, a, now);
        if (!a->ready && !a->reaped && now >= a->ready_by && a->banner_len && !a->synced)
            unexpected_output(j, a, "; no agent answered after it within SDSM_TIMEOUT");
        else if (!a->ready && !a->reaped && now >= a->ready_by)
            agent_failed(j, a, 1, "no word from its agent through '%s' within %lld s (SDSM_TIMEOUT)", j->rsh,
                         (long long)(j->setup_us / 1000000));
        else if (agent_silent(j, a, now) && a->out_r >= 0)
            agent_read(j, a, READ_BUDGET); /* we may be the late one: look before blaming */
        if (!j->stopping && agent_silent(j, a, now)) {
            char ranks[128];
            agent_ranks(j, a, ranks, sizeof ranks);
            agent_failed(j, a, 1,
                         "no word from its agent (remote shell pid %d; %s) for %.1f s "
                         "(SDSM_PEER_TIMEOUT): the agent is stopped or hung, or the host or its "
                         "connection is cut off",
                         (int)a->pid, ranks, (double)(now - a->heard_at) / 1e6);
        }
    }
}

int64_t agents_next_deadline(const struct job *j)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < j->nagents && !j->stopping; i++) {
        const struct agent *a = &j->agents[i];
        if (!a->ready && !a->reaped && a->ready_by < next)
            next = a->ready_by;
        if (a->in_w >= 0 && j->hb_us && a->beat_at < next)
            next = a->beat_at;
        if (a->ready && !a->reaped && !a->failed && j->peer_timeout_us &&
            a->heard_at + j->peer_timeout_us < next)
            next = a->heard_at + j->peer_timeout_us;
    }
    return next;
}

bool agents_gone(const struct job *j)
{
    for (int i = 0; i < j->nagents; i++)
        if (!j->agents[i].reaped)
            return false;
    return true;
}

void agents_free(struct job *j)
{
    for (int a = 0; a < j->nagents; a++)
        free(j->agents[a].buf);
    free(j->agents);
    j->agents = NULL;
    j->nagents = 0;
}
