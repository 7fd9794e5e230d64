/*
 * iofwd.c - the ranks' standard input, output and error.
 *
 * Input: the launcher reads its own stdin and forwards it through a pipe to
 * rank 0 only; the other ranks read /dev/null.  (The ranks run in a process
 * group of their own, so none of them could read a terminal itself: SIGTTIN.)
 * Reading stops at EOF, when rank 0 closes its end or exits, or when the job
 * ends; a launcher in the background takes a terminal's EIO as EOF.
 *
 * Output: each rank's stdout and stderr are pipes that the launcher reads
 * and copies to its own stdout and stderr in whole lines, so lines of
 * different ranks never mix; with --tag-output each line starts with
 * "[rank] ".  A line longer than LINE_MAX_BYTES is passed on in pieces (the
 * only case where another rank's line may come in between).  Without
 * --tag-output bytes are passed on exactly, never one added: binary output
 * and a rank's unfinished last line arrive as written.  With it, when a
 * stream left off mid-line (its unfinished last line, or a piece) and
 * another stream or the launcher itself has a line for the same place, a
 * newline goes first, so every tag starts a line.
 *
 * A failed write to our stdout or stderr (a full disk, a closed descriptor)
 * is reported once and makes the launcher's exit status non-zero, as any
 * program's; the rest for that destination is discarded while the ranks'
 * pipes are still drained.  A reader that went away (EPIPE: `| head`) is
 * not an error: its output is discarded quietly.
 * With --output-filename DIR the ranks write straight to DIR/rank.N/stdout
 * and DIR/rank.N/stderr instead, and nothing passes through the launcher;
 * the output of a rank on another host, which its agent passes back, is
 * written to the same files here, so one directory holds the whole job's.
 *
 * When rank 0 runs on another host, its input goes to its agent in frames
 * on the agent's stdin (agent.h), its end as a frame too: the agent's stdin
 * carries heartbeats and stays open for the whole job.
 *
 * Ordering: the event loop serves these pipes before it reaps children, and
 * each readable pipe is read until it is empty or a fair share is taken, so
 * everything a rank wrote before it died is out before the verdict on it.
 * The launcher is the only writer of its stdout and stderr (its own messages
 * are whole lines too), so copying line by line is enough to keep lines whole.
 */
#define _GNU_SOURCE /* pipe2 */
#include "launcher.h"
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_BYTES (1u << 20) /* a longer line is passed on in pieces */
#define READ_CHUNK     65536
#define FAIR_SHARE     (4 * READ_CHUNK) /* per stream per poll round */
#define DRAIN_MAX      (64u << 20)      /* at the end, per stream: bounds a writer that never stops */

struct stream {
    int fd;        /* read end; -1 once closed */
    int rank, dst; /* dst: STDOUT_FILENO or STDERR_FILENO */
    int file;      /* --output-filename, for a rank on another host: its file here; -1 */
    char *buf;
    size_t len, cap;
};

struct iofwd {
    bool to_files;
    bool restore_ttin; /* we ignore SIGTTIN; the ranks get the default back */
    /* input */
    bool in_open;     /* still reading our stdin */
    int in_w;         /* write end of rank 0's stdin pipe; -1 once closed */
    int in_agent;     /* rank 0's agent when it runs on another host; -1 */
    bool in_eof_sent; /* that agent was told the input ended (or may hear no more) */
    char in_buf[READ_CHUNK];
    size_t in_len, in_off;
    /* output */
    struct stream *s;      /* 2 per rank: stdout, stderr */
    bool tagged;           /* --tag-output: the only case where newlines are added */
    bool dst_dead[3];      /* our stdout/stderr went away: discard */
    bool dst_closed[3];    /* closed when we started (now /dev/null): writing is an error */
    bool write_failed;     /* a write error was reported: the exit status must say so */
    struct stream *mid[3]; /* the stream that left our stdout/stderr mid-line */
    char *out;             /* tagged lines are assembled here */
    size_t outcap;
    /* a rank's ends between iofwd_prepare and the fork */
    int child_fd[3];
    /* poll entries handed out by iofwd_pollset, in order */
    int *polled; /* stream index, or -1 for stdin, -2 for rank 0's pipe */
    size_t npolled;
};

static struct iofwd io_state;

static void launcher_line_starts(int dst);

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Make sure 0, 1 and 2 are open, so no socket or pipe of ours can land there;
 * an output that was closed is remembered: writing to it is still an error. */
static bool std_fds_open(struct iofwd *io)
{
    bool in_open = fcntl(STDIN_FILENO, F_GETFD) >= 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        io->dst_closed[fd] = fd > 0;
        int null = open("/dev/null", O_RDWR);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
    return in_open;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return 0;
    launcher_say("--output-filename: cannot create the directory '%s': %m", path);
    return -1;
}

int iofwd_init(struct job *j)
{
    struct iofwd *io = &io_state;
    j->io = io;
    io->in_open = std_fds_open(io);
    io->tagged = j->tag_output;
    launcher_set_line_guard(launcher_line_starts);
    /* In the background, reading a terminal then fails with EIO (end of input)
     * instead of stopping the launcher. */
    struct sigaction old;
    if (sigaction(SIGTTIN, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        signal(SIGTTIN, SIG_IGN);
        io->restore_ttin = true;
    }
    io->in_w = -1;
    io->in_agent = -1;
    io->child_fd[0] = io->child_fd[1] = io->child_fd[2] = -1;
    io->to_files = j->output_dir != NULL;
    if (io->to_files && make_dir(j->output_dir))
        return -1;
    io->s = calloc(2 * (size_t)j->n, sizeof *io->s);
    io->polled = malloc((2 * (size_t)j->n + 2) * sizeof *io->polled);
    if (!io->s || !io->polled) {
        launcher_say("out of memory for the output of %d ranks", j->n);
        return -1;
    }
    for (int i = 0; i < 2 * j->n; i++)
        io->s[i] = (struct stream){.fd = -1, .rank = i / 2, .dst = 1 + i % 2, .file = -1};
    return 0;
}

/* DIR/rank.N/NAME, opened for the rank to write. */
static int open_output(const struct job *j, int r, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%d", j->output_dir, r);
    if (make_dir(path))
        return -1;
    snprintf(path, sizeof path, "%s/rank.%d/%s", j->output_dir, r, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        launcher_say("--output-filename: cannot create '%s': %m", path);
    return fd;
}

static int in_pipe(struct iofwd *io)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    io->in_w = p[1];
    io->child_fd[0] = p[0];
    return 0;
}

int iofwd_prepare(struct job *j, int r)
{
    struct iofwd *io = j->io;
    int *cf = io->child_fd;
    if (r == 0 && io->in_open && in_pipe(io))
        goto fail;
    if (io->to_files) {
        if ((cf[1] = open_output(j, r, "stdout")) < 0 || (cf[2] = open_output(j, r, "stderr")) < 0)
            goto fail_quiet;
    } else if (proc_out_pipe(&io->s[2 * r].fd, &cf[1]) || proc_out_pipe(&io->s[2 * r + 1].fd, &cf[2])) {
        goto fail;
    }
    return 0;
fail:
    job_fail(j, 1, "cannot start rank %d: pipe: %m", r);
    iofwd_parent(j, r);
    return -1;
fail_quiet:
    job_fail(j, 1, "cannot start rank %d: its output files cannot be created", r);
    iofwd_parent(j, r);
    return -1;
}

int iofwd_remote(struct job *j, int r)
{
    struct iofwd *io = j->io;
    if (r == 0)
        io->in_agent = j->ranks[0].agent;
    if (!io->to_files)
        return 0;
    if ((io->s[2 * r].file = open_output(j, r, "stdout")) < 0 ||
        (io->s[2 * r + 1].file = open_output(j, r, "stderr")) < 0) {
        job_fail(j, 1, "cannot start rank %d: its output files cannot be created", r);
        return -1;
    }
    return 0;
}

void iofwd_child(const struct job *j, int r)
{
    const struct iofwd *io = j->io;
    int in = io->child_fd[0];
    if (in < 0) /* ranks other than 0, or no stdin to forward */
        in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* dup2 clears close-on-exec on the copy; every other end closes at exec. */
    if (in >= 0)
        dup2(in, STDIN_FILENO);
    for (int fd = 1; fd <= 2; fd++)
        if (io->child_fd[fd] >= 0)
            dup2(io->child_fd[fd], fd);
    if (io->restore_ttin)
        signal(SIGTTIN, SIG_DFL);
    io_state.mid[1] = io_state.mid[2] = NULL; /* our stderr is the rank's pipe now */
    (void)r;
}

void iofwd_parent(struct job *j, int r)
{
    (void)r;
    for (int fd = 0; fd <= 2; fd++)
        close_fd(&j->io->child_fd[fd]);
}

/* ------------------------------------------------------------- input */

static void stop_input(struct iofwd *io)
{
    io->in_open = false;
    io->in_len = io->in_off = 0;
    close_fd(&io->in_w);
}

static void read_input(struct iofwd *io)
{
    ssize_t n = read(STDIN_FILENO, io->in_buf, sizeof io->in_buf);
    if (n > 0) {
        io->in_len = (size_t)n;
        io->in_off = 0;
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        /* EOF; EIO is a terminal we may not read (in the background): end of input too. */
        stop_input(io);
    }
}

/* Where rank 0's input goes: its pipe here, or its agent's stdin (-1: nowhere now). */
static int in_target(const struct job *j)
{
    const struct iofwd *io = j->io;
    if (io->in_agent < 0)
        return io->in_w;
    return io->in_eof_sent ? -1 : j->agents[io->in_agent].in_w;
}

/* Rank 0 is on another host: the next frame to its agent, or the end. */
static void write_agent_input(struct iofwd *io, int w)
{
    uint8_t frame[3 + AGENT_IN_MAX_DATA];
    size_t len = io->in_len - io->in_off;
    if (!io->in_len) {
        frame[0] = AGENT_IN_EOF;
        if (write(w, frame, 1) == 1 || (errno != EAGAIN && errno != EINTR))
            io->in_eof_sent = true;
        return;
    }
    if (len > AGENT_IN_MAX_DATA)
        len = AGENT_IN_MAX_DATA;
    frame[0] = AGENT_IN_DATA;
    frame[1] = (uint8_t)(len >> 8);
    frame[2] = (uint8_t)len;
    memcpy(frame + 3, io->in_buf + io->in_off, len);
    /* At most PIPE_BUF bytes: written whole or not at all, never split by a heartbeat. */
    ssize_t n = write(w, frame, 3 + len);
    if (n == (ssize_t)(3 + len)) {
        io->in_off += len;
        if (io->in_off == io->in_len)
            io->in_len = io->in_off = 0;
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
        stop_input(io); /* the agent is gone */
        io->in_eof_sent = true;
    }
}

static void write_input(struct job *j)
{
    struct iofwd *io = j->io;
    if (io->in_agent >= 0) {
        write_agent_input(io, in_target(j));
        return;
    }
    ssize_t n = write(io->in_w, io->in_buf + io->in_off, io->in_len - io->in_off);
    if (n > 0) {
        io->in_off += (size_t)n;
        if (io->in_off == io->in_len)
            io->in_len = io->in_off = 0;
        if (!io->in_len && !io->in_open)
            close_fd(&io->in_w);
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
        stop_input(io); /* EPIPE: rank 0 closed its stdin or is gone */
    }
}

/* ------------------------------------------------------------ output */

/* Our stdout or stderr failed: report it once (where it can still be read). */
static void write_error(struct iofwd *io, int dst, int err)
{
    io->dst_dead[dst] = true;
    if (err == EPIPE) /* the reader has quit (`| head`): drop the rest quietly */
        return;
    io->write_failed = true;
    errno = err;
    launcher_say("cannot write to standard %s: %m; the rest of the ranks' %s is discarded",
                 dst == STDOUT_FILENO ? "output" : "error", dst == STDOUT_FILENO ? "output" : "errors");
}

static void emit(struct iofwd *io, int dst, const char *p, size_t len)
{
    if (len > 0 && io->dst_closed[dst] && !io->dst_dead[dst])
        write_error(io, dst, EBADF);
    while (len > 0 && !io->dst_dead[dst]) {
        ssize_t n = write(dst, p, len);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EAGAIN) { /* someone made our stdout non-blocking */
            struct pollfd p1 = {.fd = dst, .events = POLLOUT};
            poll(&p1, 1, -1);
        } else if (n < 0 && errno != EINTR) {
            write_error(io, dst, errno); /* drop the rest, keep draining */
        } else if (n == 0) {
            write_error(io, dst, EIO);
        }
    }
}

/* With --tag-output, bytes from s (or from the launcher itself, s = NULL)
 * start on a fresh line unless s itself left off mid-line: the one newline
 * ever added to output.  Without it nothing is added (byte for byte). */
static void fresh_line(struct iofwd *io, int dst, const struct stream *s)
{
    if (io->tagged && io->mid[dst] && io->mid[dst] != s) {
        emit(io, dst, "\n", 1);
        io->mid[dst] = NULL;
    }
}

/* Before each of the launcher's own lines (job.c's line guard). */
static void launcher_line_starts(int dst)
{
    if (dst == STDOUT_FILENO || dst == STDERR_FILENO)
        fresh_line(&io_state, dst, NULL);
}

static void emit_from(struct iofwd *io, struct stream *s, const char *p, size_t len)
{
    if (!len)
        return;
    fresh_line(io, s->dst, s);
    emit(io, s->dst, p, len);
    io->mid[s->dst] = p[len - 1] != '\n' ? s : NULL;
}

static void consume(struct stream *s, size_t len)
{
    memmove(s->buf, s->buf + len, s->len - len);
    s->len -= len;
}

/* Bytes [0, len) of s's buffer with "[rank] " before each line, in one write. */
static void pass_tagged(struct iofwd *io, struct stream *s, size_t len)
{
    char tag[24];
    size_t tl = (size_t)snprintf(tag, sizeof tag, "[%d] ", s->rank), lines = 1;
    /* A line of ours cut by another rank's goes on under a tag of its own. */
    bool at_start = io->mid[s->dst] != s;
    for (const char *p = s->buf; (p = memchr(p, '\n', len - (size_t)(p - s->buf))); p++)
        lines++;
    size_t need = len + lines * tl;
    if (need > io->outcap) {
        char *nb = realloc(io->out, need);
        if (!nb) { /* no room to join them: the same bytes in two writes */
            if (at_start)
                emit_from(io, s, tag, tl);
            emit_from(io, s, s->buf, len);
            return;
        }
        io->out = nb;
        io->outcap = need;
    }
    size_t o = 0, at = 0;
    while (at < len) {
        if (at_start) {
            memcpy(io->out + o, tag, tl);
            o += tl;
        }
        const char *nl = memchr(s->buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - s->buf) + 1 : len;
        memcpy(io->out + o, s->buf + at, end - at);
        o += end - at;
        at_start = nl != NULL;
        at = end;
    }
    emit_from(io, s, io->out, o);
}

/* Pass on bytes [0, len) of s's buffer. */
static void pass_on(struct job *j, struct stream *s, size_t len)
{
    if (j->tag_output)
        pass_tagged(j->io, s, len);
    else
        emit_from(j->io, s, s->buf, len);
    consume(s, len);
}

/* Pass on every complete line, and a piece of an over-long one. */
static void pass_lines(struct job *j, struct stream *s)
{
    char *last = memrchr(s->buf, '\n', s->len);
    if (last)
        pass_on(j, s, (size_t)(last - s->buf) + 1);
    if (s->len >= LINE_MAX_BYTES)
        pass_on(j, s, s->len);
}

static void close_stream(struct job *j, struct stream *s)
{
    if (s->len)
        pass_on(j, s, s->len);
    close_fd(&s->fd);
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* Read up to budget bytes from s; returns false at EOF or error (stream closed). */
static bool read_stream(struct job *j, struct stream *s, size_t budget)
{
    size_t got = 0;
    while (got < budget) {
        if (s->cap - s->len < READ_CHUNK) {
            size_t cap = s->cap ? 2 * s->cap : 2 * READ_CHUNK;
            char *nb = realloc(s->buf, cap);
            if (!nb) { /* pass on what we have and read into the room that frees */
                pass_on(j, s, s->len);
                if (s->cap - s->len < READ_CHUNK)
                    return true;
            } else {
                s->buf = nb;
                s->cap = cap;
            }
        }
        ssize_t n = read(s->fd, s->buf + s->len, READ_CHUNK);
        if (n > 0) {
            s->len += (size_t)n;
            got += (size_t)n;
            pass_lines(j, s);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            return true;
        } else {
            close_stream(j, s); /* EOF: every writer has closed it */
            return false;
        }
    }
    return true;
}

/* --output-filename: a remote rank's bytes into its file here. */
static void feed_file(struct iofwd *io, struct stream *s, const uint8_t *p, size_t len)
{
    while (len > 0 && s->file >= 0) {
        ssize_t n = write(s->file, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            launcher_say("--output-filename: cannot write rank %d's %s: %m; the rest is discarded", s->rank,
                         s->dst == STDOUT_FILENO ? "output" : "errors");
            io->write_failed = true;
            close_fd(&s->file);
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

/* Bytes rank r wrote on another host, as its agent passed them on. */
void iofwd_feed(struct job *j, int r, int dst, const uint8_t *p, size_t len)
{
    struct iofwd *io = j->io;
    if (!io)
        return;
    struct stream *s = &io->s[2 * r + (dst == STDERR_FILENO)];
    if (io->to_files) {
        feed_file(io, s, p, len);
        return;
    }
    while (len > 0) {
        if (s->cap - s->len < READ_CHUNK) {
            size_t cap = s->cap ? 2 * s->cap : 2 * READ_CHUNK;
            char *nb = realloc(s->buf, cap);
            if (!nb) {
                pass_on(j, s, s->len);
                if (s->cap - s->len == 0)
                    return;
            } else {
                s->buf = nb;
                s->cap = cap;
            }
        }
        size_t take = s->cap - s->len < len ? s->cap - s->len : len;
        memcpy(s->buf + s->len, p, take);
        s->len += take;
        p += take;
        len -= take;
        pass_lines(j, s);
    }
}

void iofwd_feed_end(struct job *j, int r)
{
    struct iofwd *io = j->io;
    for (int i = 2 * r; io && i < 2 * r + 2; i++) {
        close_fd(&io->s[i].file);
        if (io->s[i].fd < 0)
            close_stream(j, &io->s[i]);
    }
    if (io && r == 0 && io->in_agent >= 0) {
        stop_input(io); /* rank 0 reads no more */
        io->in_eof_sent = true;
    }
}

/* ------------------------------------------------------- event loop */

size_t iofwd_npoll(const struct job *j) { return j->io ? 2 * (size_t)j->n + 1 : 0; }

size_t iofwd_pollset(struct job *j, struct pollfd *pfd)
{
    struct iofwd *io = j->io;
    size_t k = 0;
    if (!io)
        return 0;
    int w = in_target(j);
    bool eof_due = io->in_agent >= 0 && !io->in_open && !io->in_eof_sent;
    if ((io->in_len || eof_due) && w >= 0) {
        pfd[k] = (struct pollfd){.fd = w, .events = POLLOUT};
        io->polled[k++] = -2;
    } else if (io->in_open && w >= 0) {
        pfd[k] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        io->polled[k++] = -1;
    }
    for (int i = 0; i < 2 * j->n; i++) {
        if (io->s[i].fd < 0)
            continue;
        pfd[k] = (struct pollfd){.fd = io->s[i].fd, .events = POLLIN};
        io->polled[k++] = i;
    }
    io->npolled = k;
    return k;
}

void iofwd_events(struct job *j, const struct pollfd *pfd)
{
    struct iofwd *io = j->io;
    for (size_t k = 0; io && k < io->npolled; k++) {
        if (!pfd[k].revents)
            continue;
        if (io->polled[k] == -1)
            read_input(io);
        else if (io->polled[k] == -2)
            write_input(j);
        else
            read_stream(j, &io->s[io->polled[k]], FAIR_SHARE);
    }
}

void iofwd_rank_exited(struct job *j, int r)
{
    struct iofwd *io = j->io;
    if (!io)
        return;
    /* Everything it wrote is in its pipes now: out with it before the verdict. */
    for (int i = 2 * r; i < 2 * r + 2; i++)
        if (io->s[i].fd >= 0)
            read_stream(j, &io->s[i], DRAIN_MAX);
    if (r == 0)
        stop_input(io);
}

bool iofwd_finish(struct job *j)
{
    struct iofwd *io = j->io;
    if (!io)
        return false;
    stop_input(io);
    for (int i = 0; i < 2 * j->n; i++) {
        struct stream *s = &io->s[i];
        close_fd(&s->file);
        if (s->fd < 0 || read_stream(j, s, DRAIN_MAX))
            close_stream(j, s); /* a descendant still holds it open: stop here;
                                 * or an agent's rank cut short mid-line */
    }
    /* Still mid-line: the launcher's last words start a line of their own. */
    static struct stream gone;
    for (int dst = 1; dst <= 2; dst++)
        if (io->mid[dst])
            io->mid[dst] = &gone;
    free(io->s);
    free(io->polled);
    free(io->out);
    io->s = NULL;
    io->polled = NULL;
    io->out = NULL;
    j->io = NULL;
    return io->write_failed;
}
