/*
 * spawn.c - the ranks as processes: start them in a process group of their
 * own, reap them, decide which exits are failures, and take the whole group
 * down when the job stops.
 *
 * A rank's exit status and the end of its control link arrive in either
 * order; a rank is judged only once both are in (or LINGER_US has passed),
 * so an ABORT or DONE still sitting in the socket is never mistaken for a
 * silent death.
 *
 * A stop after a failure signals the job only at the end of a short grace
 * (job_stop), so ranks already exiting flush their output; and when the job
 * is over, whatever its ranks started is found among our children (we are
 * a subreaper) and ended too (spawn_sweep): nothing of a job outlives it.
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
int spawn_check_program(const char *prog)
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

void spawn_child_restore(const struct job *j)
{
    if (j->restore_nofile)
        setrlimit(RLIMIT_NOFILE, &j->child_nofile);
    if (j->restore_sigpipe)
        signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &j->child_mask, NULL);
}

void spawn_child_env(const struct job *j, int r)
{
    char num[16];
    snprintf(num, sizeof num, "%d", r);
    setenv("SDSM_RANK", num, 1);
    setenv("SDSM_HOST", j->hosts[j->ranks[r].host].name, 1);
    setenv("SDSM_JOB_KEY", j->keyhex, 1); /* only here: see setup_env */
}

const char *spawn_pid_str(const struct job *j, const struct rank *rk, char *buf, size_t len)
{
    if (rk->agent < 0)
        snprintf(buf, len, "%d", (int)rk->pid);
    else
        snprintf(buf, len, "%d on host %s", (int)rk->pid, j->hosts[rk->host].name);
    return buf;
}

/*
 * Programs written for TreadMarks, JIAJIA or PARMACS pass pointers to
 * globals, functions and the C library's objects between ranks; with the
 * layout randomized they would point elsewhere in the receiver.  The
 * personality flag survives exec, so the rank starts with a fixed layout.
 */
void spawn_child_aslr(void)
{
    const char *keep = getenv("SDSM_ASLR");
    if (keep && strcmp(keep, "0") != 0)
        return;
    int cur = personality(0xffffffff);
    if (cur != -1)
        personality((unsigned long)cur | ADDR_NO_RANDOMIZE);
}

static __attribute__((noreturn)) void child(const struct job *j, int r)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* The launcher may have died before the line above took effect. */
    if (getppid() != j->self)
        _exit(127);
    /* Also done by the parent: whichever runs first wins the race with exec. */
    setpgid(0, j->pgid);
    close(j->lfd);
    close(j->sfd);
    iofwd_child(j, r);
    spawn_child_env(j, r);
    spawn_child_restore(j);
    spawn_child_aslr();
    execvp(j->argv[0], j->argv);
    launcher_say("cannot run '%s': %m", j->argv[0]);
    _exit(127);
}

/* Ranks that were never started count as gone, so the loop can end. */
static void never_started(struct job *j, int from)
{
    for (int r = from; r < j->n; r++) {
        if (j->ranks[r].judged)
            continue;
        j->ranks[r].reaped = j->ranks[r].judged = true;
        j->nreaped++;
        j->njudged++;
    }
}

int spawn_all(struct job *j)
{
    for (int r = 0; r < j->n; r++) {
        int64_t t = launcher_now();
        if (j->ranks[r].agent >= 0)
            continue; /* its host's agent starts it */
        if (iofwd_prepare(j, r)) {
            never_started(j, r);
            return -1;
        }
        pid_t pid = fork();
        if (pid == 0)
            child(j, r);
        iofwd_parent(j, r);
        if (pid < 0) {
            job_fail(j, 1, "cannot start rank %d: fork: %m", r);
            never_started(j, r);
            return -1;
        }
        if (!j->pgid)
            j->pgid = pid;
        setpgid(pid, j->pgid); /* EACCES once the child has exec'd: it did it itself */
        j->ranks[r].pid = pid;
        j->ranks[r].t_spawn = t;
    }
    for (int r = 0; r < j->n && j->verbose; r++)
        if (j->ranks[r].agent < 0)
            launcher_verbose(j, "rank %d: pid %d started at %.1f ms", r, (int)j->ranks[r].pid,
                             launcher_ms(j, j->ranks[r].t_spawn));
    if (agents_start(j)) {
        never_started(j, 0);
        return -1;
    }
    return 0;
}

static void describe(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
                 WCOREDUMP(st) ? ", core dumped" : "");
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

static void judge(struct job *j, struct rank *rk)
{
    int r = (int)(rk - j->ranks), st = rk->wstatus;
    char how[160], pb[96], lb[96];
    const char *pid = spawn_pid_str(j, rk, pb, sizeof pb);
    if (rk->judged)
        return;
    rk->judged = true;
    rk->linger = 0;
    j->njudged++;
    /* A rank that exits because it lost its link to another is a consequence:
     * when that other has died too, it is the failure to report.  (Marked
     * judged first, so two ranks that lost each other cannot recurse.) */
    if (rk->lost && !j->stopping) {
        struct rank *cause = &j->ranks[rk->lost - 1];
        if (cause->reaped)
            judge(j, cause);
    }
    describe(st, how, sizeof how);
    if (j->stopping || rk->aborted)
        launcher_verbose(j, "rank %d (pid %s) %s at %.1f ms", r, pid, how, launcher_ms(j, rk->t_exit));
    else if (WIFSIGNALED(st))
        job_fail(j, 128 + WTERMSIG(st), "rank %d (pid %s) %s", r, pid, how);
    else if (WEXITSTATUS(st) && rk->lost)
        job_fail(j, WEXITSTATUS(st), "rank %d (pid %s) %s after losing its link to rank %d (pid %s)",
                 r, pid, how, rk->lost - 1, spawn_pid_str(j, &j->ranks[rk->lost - 1], lb, sizeof lb));
    else if (WEXITSTATUS(st))
        job_fail(j, WEXITSTATUS(st), "rank %d (pid %s) %s", r, pid, how);
    else if (rk->registered && j->table_sent && !rk->done)
        job_fail(j, 1, "rank %d (pid %s) exited without calling sdsm_finalize", r, pid);
    else if (!j->table_sent && (rk->registered || j->nregistered > 0))
        job_fail(j, 1, "rank %d (pid %s) exited before sdsm_init completed", r, pid);
    else {
        if (!rk->registered)
            j->nexited_unreg++;
        launcher_verbose(j, "rank %d (pid %s) %s at %.1f ms", r, pid, how, launcher_ms(j, rk->t_exit));
    }
}

/*
 * A rank that registers after another left without registering can never
 * get its table: the one that left is the failure.
 */
void spawn_registered(struct job *j, struct rank *rk)
{
    (void)rk;
    if (j->stopping || j->table_sent || j->nexited_unreg == 0)
        return;
    for (int r = 0; r < j->n; r++) {
        struct rank *gone = &j->ranks[r];
        if (gone->judged && !gone->registered && gone->pid > 0) {
            char pb[96];
            job_fail(j, 1, "rank %d (pid %s) exited before sdsm_init completed", r,
                     spawn_pid_str(j, gone, pb, sizeof pb));
            return;
        }
    }
}

void spawn_link_closed(struct job *j, struct rank *rk)
{
    if (rk->reaped)
        judge(j, rk);
    else if (!rk->done && !rk->aborted && !j->stopping)
        rk->linger = launcher_now() + LINGER_US; /* expect its exit soon */
}

static struct rank *find_rank(struct job *j, pid_t pid)
{
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].pid == pid && !j->ranks[r].reaped && j->ranks[r].agent < 0)
            return &j->ranks[r];
    return NULL;
}

void spawn_stopped(struct job *j, struct rank *rk, int sig)
{
    int r = (int)(rk - j->ranks);
    char pb[96];
    spawn_pid_str(j, rk, pb, sizeof pb);
    if (j->stopping)
        launcher_verbose(j, "rank %d (pid %s) stopped by signal %d", r, pb, sig);
    else
        job_fail(j, 128 + sig, "rank %d (pid %s) stopped by signal %d (%s)", r, pb, sig,
                 strsignal(sig));
}

/*
 * Exits collected together (the launcher was stopped or slow) are judged
 * after all are in, ranks that died of a lost link last: the order of
 * waitpid says nothing about which rank failed first.
 */
void spawn_reap(struct job *j)
{
    bool any = false;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG | WUNTRACED);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0) {
            if (pid < 0 && errno != ECHILD)
                launcher_say("waitpid: %m");
            break;
        }
        struct rank *rk = find_rank(j, pid);
        if (!rk && agents_reaped(j, pid, st))
            continue;
        if (!rk) { /* an orphan of a rank, reparented to us as subreaper */
            launcher_verbose(j, "reaped pid %d, a descendant of a rank", (int)pid);
            continue;
        }
        if (WIFSTOPPED(st)) {
            spawn_stopped(j, rk, WSTOPSIG(st));
            continue;
        }
        iofwd_rank_exited(j, (int)(rk - j->ranks));
        rk->reaped = rk->just_reaped = any = true;
        rk->wstatus = st;
        rk->t_exit = launcher_now();
        j->nreaped++;
    }
    if (any)
        spawn_judge_reaped(j);
}

void spawn_judge_reaped(struct job *j)
{
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < j->n; r++) {
            struct rank *rk = &j->ranks[r];
            if (!rk->just_reaped || (pass == 0 && rk->lost))
                continue;
            rk->just_reaped = false;
            if (rk->link && !j->stopping)
                rk->linger = rk->t_exit + LINGER_US; /* let the link's last bytes arrive */
            else
                judge(j, rk);
        }
}

/*
 * A rank started through a wrapper (a shell script, a tool) is not our child:
 * waitpid never reports it stopped, and the others would wait for it
 * forever.  The pid it registered is looked at in /proc instead.  Only 'T'
 * counts: 't' is a debugger's tracing stop, which is on purpose.
 */
#define STOP_POLL_US 200000

static bool wrapped(const struct rank *rk)
{
    return rk->agent < 0 && rk->link && !rk->reaped && !rk->done && rk->reg_pid > 0 &&
           rk->reg_pid != rk->pid;
}

static bool proc_stopped(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
    return p && p[1] == ' ' && p[2] == 'T';
}

static void poll_wrapped(struct job *j, int64_t now)
{
    if (j->stopping || now < j->stop_poll_at)
        return;
    j->stop_poll_at = now + STOP_POLL_US;
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (wrapped(rk) && proc_stopped(rk->reg_pid)) {
            job_fail(j, 128 + SIGSTOP, "rank %d (pid %d) stopped by a signal (it runs under pid %d)",
                     r, (int)rk->reg_pid, (int)rk->pid);
            return;
        }
    }
}

void spawn_timers(struct job *j, int64_t now)
{
    poll_wrapped(j, now);
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (!rk->linger || now < rk->linger || rk->judged)
            continue;
        rk->linger = 0;
        if (rk->reaped && rk->link)
            ctrl_close(j, rk->link); /* judges it */
        else if (!rk->reaped && !rk->link && !j->stopping) {
            char pb[96];
            job_fail(j, 1, "rank %d (pid %s) closed its control link without calling sdsm_finalize",
                     r, spawn_pid_str(j, rk, pb, sizeof pb));
        }
    }
    if (j->stopping && !j->signalled && (now >= j->term_at || j->nreaped == j->n))
        spawn_terminate(j);
    if (j->signalled && !j->killed && now >= j->term_at + KILL_AFTER_US && !spawn_job_gone(j)) {
        launcher_verbose(j, "sending SIGKILL to what is left of the job");
        spawn_signal_job(j, SIGKILL);
        j->killed = true;
    }
}

int64_t spawn_next_deadline(const struct job *j)
{
    int64_t next = INT64_MAX;
    for (int r = 0; r < j->n; r++) {
        if (j->ranks[r].linger && !j->ranks[r].judged && j->ranks[r].linger < next)
            next = j->ranks[r].linger;
        if (!j->stopping && wrapped(&j->ranks[r]) && j->stop_poll_at < next)
            next = j->stop_poll_at;
    }
    if (j->stopping && !j->signalled && j->term_at < next)
        next = j->term_at;
    if (j->signalled && !j->killed && j->term_at + KILL_AFTER_US < next)
        next = j->term_at + KILL_AFTER_US;
    if (j->stopping && j->stop_at + GIVE_UP_AFTER_US < next)
        next = j->stop_at + GIVE_UP_AFTER_US;
    return next;
}

void spawn_terminate(struct job *j)
{
    if (j->signalled)
        return;
    j->signalled = true;
    j->term_at = launcher_now();
    /* SIGCONT after SIGTERM: a stopped rank resumes only to die.  Links are
     * closed after the signals so ranks die before they notice and complain. */
    spawn_signal_job(j, SIGTERM);
    spawn_signal_job(j, SIGCONT);
    ctrl_close_all(j);
}

void spawn_signal_job(struct job *j, int sig)
{
    /* pgid 0 would mean our own group: never signal that. */
    if (j->pgid > 0 && kill(-j->pgid, sig) && errno != ESRCH)
        launcher_say("cannot signal the job's process group %d: %m", (int)j->pgid);
    /* A rank may have moved itself to another group; it is still our child. */
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (!rk->reaped && rk->agent < 0 && rk->pid > 0 && getpgid(rk->pid) != j->pgid)
            kill(rk->pid, sig);
    }
}

/* Every rank reaped and nothing else left in the job's process group. */
bool spawn_job_gone(const struct job *j)
{
    if (j->nreaped < j->n)
        return false;
    return j->pgid <= 0 || (kill(-j->pgid, 0) && errno == ESRCH);
}

/*
 * What a job leaves behind: a rank's children (in the job's process group,
 * or in a session of their own) become ours when their parent dies, as we
 * are a subreaper; their children ours when they die, and so on.  So
 * signalling our children again and again until none is left reaches
 * everything the job started.  The launcher's and the agents' last step.
 */
#define SWEEP_ROUND_MS 10
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

int spawn_sweep_group(pid_t pgid, bool kill_now)
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

void spawn_sweep(struct job *j)
{
    int left = spawn_sweep_group(j->pgid, j->killed);
    if (left)
        launcher_say("%d process(es) of the job could not be ended", left);
}
