/*
 * proc.c - starting and reaping processes, for the launcher (its ranks and
 * its agents' remote shells) and for an agent (its host's ranks): finding
 * the program as execvp will, what a child does between fork and exec,
 * process groups, pipes and signals, reaping, and the sweep that ends
 * whatever a job left behind.
 *
 * This is the bottom layer with job.c: nothing here knows of ranks, links
 * or output; it calls only the clock and the messages of job.c.
 */
#define _GNU_SOURCE /* strchrnul */
#include "launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int exec_ok(const char *path)
{
    struct stat st;
    if (stat(path, &st))
        return errno;
    if (!S_ISREG(st.st_mode))
        return EACCES; /* what execve says for a directory */
    return access(path, X_OK) ? errno : 0;
}

/*
 * Find prog the way execvp will, so a typo is reported once by the launcher
 * instead of once per rank.  Returns 0 or the errno execvp would give.
 */
int proc_check_program(const char *prog)
{
    if (*prog == '\0')
        return ENOENT;
    if (strchr(prog, '/'))
        return exec_ok(prog);
    const char *p = getenv("PATH");
    if (!p || !*p)
        p = "/bin:/usr/bin";
    int err = ENOENT;
    for (;;) {
        const char *end = strchrnul(p, ':');
        char full[PATH_MAX];
        int dirlen = (int)(end - p);
        /* An empty entry means the current directory. */
        int len = snprintf(full, sizeof full, "%.*s%s%s", dirlen, p, dirlen ? "/" : "", prog);
        if (len > 0 && (size_t)len < sizeof full) {
            int e = exec_ok(full);
            if (e == 0)
                return 0;
            if (e == EACCES)
                err = EACCES;
        }
        if (*end == '\0')
            return err;
        p = end + 1;
    }
}

void proc_child_begin(pid_t parent, pid_t pgid)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The parent may have died before the line above took effect. */
    if (getppid() != parent)
        _exit(127);
    /* Also done by the parent: whichever runs first wins the race with exec. */
    setpgid(0, pgid);
}

void proc_child_restore(const struct proc_restore *rs)
{
    if (rs->restore_nofile)
        setrlimit(RLIMIT_NOFILE, &rs->nofile);
    if (rs->restore_sigpipe)
        signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &rs->mask, NULL);
}

void proc_join_group(pid_t pid, pid_t *pgid)
{
    if (!*pgid)
        *pgid = pid;
    setpgid(pid, *pgid); /* EACCES once the child has exec'd: it did it itself */
}

int proc_out_pipe(int *ours, int *childs)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    *ours = p[0];
    *childs = p[1];
    return 0;
}

int proc_signalfd(sigset_t *old_mask)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1); /* passed on to the ranks */
    sigaddset(&set, SIGUSR2);
    if (sigprocmask(SIG_BLOCK, &set, old_mask))
        return -1;
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return -1;
    /* Orphans of dying ranks come to us, so the stop can reap them too. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return fd;
}

/*
 * Programs written for TreadMarks, JIAJIA or PARMACS pass pointers to
 * globals, functions and the C library's objects between ranks; with the
 * layout randomized they would point elsewhere in the receiver.  The
 * personality flag survives exec, so the rank starts with a fixed layout.
 */
void proc_child_aslr(void)
{
    const char *keep = getenv("SDSM_ASLR");
    if (keep && strcmp(keep, "0") != 0)
        return;
    int cur = personality(0xffffffff);
    if (cur != -1)
        personality((unsigned long)cur | ADDR_NO_RANDOMIZE);
}

/*
 * What a job leaves behind: a rank's children (in the job's process group,
 * or in a session of their own) become ours when their parent dies, as we
 * are a subreaper; their children ours when they die, and so on.  So
 * signalling our children again and again until none is left reaches
 * everything the job started.  The launcher's and the agents' last step.
 */
#define SWEEP_ROUND_MS     10
#define SWEEP_KILL_WAIT_US 2000000LL /* SIGKILL -> giving up */

static void reap_any(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* Signal our children and the group pgid; how many of them are there. */
static int signal_left(pid_t pgid, int sig)
{
    int n = 0;
    if (pgid > 0 && kill(-pgid, sig) == 0) {
        kill(-pgid, SIGCONT);
        n++;
    }
    DIR *d = opendir("/proc");
    if (!d)
        return n;
    pid_t self = getpid();
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], buf[512];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len <= 0)
            continue;
        buf[len] = '\0';
        const char *p = strrchr(buf, ')'); /* "pid (comm) S ppid ...": comm may hold ')' */
        int ppid;
        char state;
        if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2 || ppid != self || state == 'Z')
            continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        kill(pid, sig);
        kill(pid, SIGCONT);
        n++;
    }
    closedir(d);
    return n;
}

int proc_sweep_group(pid_t pgid, bool kill_now)
{
    int64_t kill_at = launcher_now() + (kill_now ? 0 : KILL_AFTER_US), give_up = 0;
    int left;
    for (;;) {
        reap_any();
        int64_t now = launcher_now();
        int sig = now >= kill_at ? SIGKILL : SIGTERM;
        /* Given up only once SIGKILL has gone out and had time to work,
         * however late a loaded machine lets us look. */
        if (sig == SIGKILL && !give_up)
            give_up = now + SWEEP_KILL_WAIT_US;
        left = signal_left(pgid, sig);
        if (left == 0 || (give_up && now >= give_up))
            break;
        poll(NULL, 0, SWEEP_ROUND_MS);
    }
    reap_any();
    return left;
}

/* The next child that ended or stopped, without waiting: its pid, 0 when
 * none has, or -1 with errno set (ECHILD: no child is left). */
pid_t proc_wait_any(int *wstatus)
{
    for (;;) {
        pid_t pid = waitpid(-1, wstatus, WNOHANG | WUNTRACED);
        if (pid >= 0 || errno != EINTR)
            return pid;
    }
}
