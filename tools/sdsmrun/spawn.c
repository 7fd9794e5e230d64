/*
 * spawn.c - the ranks forked on this machine, as processes: start them in a
 * process group of their own, watch those started through a wrapper, and
 * signal the whole group when the job stops.  Reaping them and the verdicts
 * on their exits are the event loop's (sdsmrun.c) and job.c's.
 *
 * A stop after a failure signals the job only at the end of a short grace
 * (job_stop), so ranks already exiting flush their output; and when the job
 * is over, whatever its ranks started is found among our children (we are
 * a subreaper) and ended too (spawn_sweep): nothing of a job outlives it.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* SDSM_RANK, SDSM_HOST and the key, in rank r's child. */
static void child_env(const struct job *j, int r)
{
    char num[16];
    snprintf(num, sizeof num, "%d", r);
    setenv("SDSM_RANK", num, 1);
    setenv("SDSM_HOST", j->hosts[j->ranks[r].host].name, 1);
    setenv("SDSM_JOB_KEY", j->keyhex, 1); /* only here: see setup_env */
}

static __attribute__((noreturn)) void child(const struct job *j, int r)
{
    proc_child_begin(j->self, j->pgid);
    close(j->lfd);
    close(j->sfd);
    iofwd_child(j, r);
    child_env(j, r);
    proc_child_restore(&j->child_restore);
    proc_child_aslr();
    bind_child(j->ranks[r].cpu);
    char **argv = apps_argv(j, r);
    execvp(argv[0], argv);
    launcher_say("cannot run '%s': %m", argv[0]);
    _exit(127);
}

/* --bind-to core: the ranks forked here take this machine's CPUs in turn. */
static void bind_local(struct job *j)
{
    bool shared = false;
    int i = 0;
    for (int r = 0; r < j->n && j->bind_core; r++)
        if (j->ranks[r].agent < 0)
            j->ranks[r].cpu = bind_cpu(i++, &shared);
    if (shared)
        launcher_say("--bind-to core: %d ranks on this machine, more than its CPUs: some share one", i);
}

static void report_local(const struct job *j)
{
    for (int r = 0; r < j->n && j->report_bindings; r++)
        if (j->ranks[r].agent < 0)
            bind_report(j->hosts[j->ranks[r].host].name, j->ranks[r].pid, r, j->ranks[r].cpu);
}

int spawn_all(struct job *j)
{
    bind_local(j);
    /* Before any fork: a failure here leaves nothing running. */
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].agent >= 0 && iofwd_remote(j, r)) {
            job_never_started(j, 0);
            return -1;
        }
    for (int r = 0; r < j->n; r++) {
        int64_t t = launcher_now();
        if (j->ranks[r].agent >= 0)
            continue; /* its host's agent starts it */
        if (iofwd_prepare(j, r)) {
            job_never_started(j, r);
            return -1;
        }
        pid_t pid = fork();
        if (pid == 0)
            child(j, r);
        iofwd_parent(j, r);
        if (pid < 0) {
            job_fail(j, 1, "cannot start rank %d: fork: %m", r);
            job_never_started(j, r);
            return -1;
        }
        proc_join_group(pid, &j->pgid);
        j->ranks[r].pid = pid;
        j->ranks[r].t_spawn = t;
    }
    report_local(j);
    for (int r = 0; r < j->n && j->verbose; r++)
        if (j->ranks[r].agent < 0)
            launcher_verbose(j, "rank %d: pid %d started at %.1f ms", r, (int)j->ranks[r].pid,
                             launcher_ms(j, j->ranks[r].t_spawn));
    return 0;
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
    return rk->agent < 0 && rk->link && !rk->reaped && !rk->done && rk->reg_pid > 0 && rk->reg_pid != rk->pid;
}

static bool pid_stopped(pid_t pid)
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

void spawn_timers(struct job *j, int64_t now)
{
    if (j->stopping || now < j->stop_poll_at)
        return;
    j->stop_poll_at = now + STOP_POLL_US;
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (wrapped(rk) && pid_stopped(rk->reg_pid)) {
            job_fail(j, 128 + SIGSTOP, "rank %d (pid %d) stopped by a signal (it runs under pid %d)", r,
                     (int)rk->reg_pid, (int)rk->pid);
            return;
        }
    }
}

int64_t spawn_next_deadline(const struct job *j)
{
    int64_t next = INT64_MAX;
    for (int r = 0; r < j->n; r++)
        if (!j->stopping && wrapped(&j->ranks[r]) && j->stop_poll_at < next)
            next = j->stop_poll_at;
    return next;
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

/* As mpirun: to the processes started, not to what they started in turn. */
void spawn_forward_signal(struct job *j, int sig)
{
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (!rk->reaped && rk->agent < 0 && rk->pid > 0 && kill(rk->pid, sig) && errno != ESRCH)
            launcher_say("cannot pass signal %d on to rank %d (pid %d): %m", sig, r, (int)rk->pid);
    }
}

/* Every rank reaped and nothing else left in the job's process group. */
bool spawn_job_gone(const struct job *j)
{
    if (j->nreaped < j->n)
        return false;
    return j->pgid <= 0 || (kill(-j->pgid, 0) && errno == ESRCH);
}

void spawn_sweep(struct job *j)
{
    int left = proc_sweep_group(j->pgid, j->killed);
    if (left)
        launcher_say("%d process(es) of the job could not be ended", left);
}
