/*
 * job.c - the job-wide state every part of the launcher reads and the
 * helpers they all call: the clock, the launcher's own messages, the first
 * failure and the stop it starts, and the verdicts on the ranks.
 *
 * This is the bottom layer with proc.c: it calls no other part of sdsmrun.
 * The stop it marks (job_stop) is carried out by the event loop
 * (sdsmrun.c), which owns the links and the processes; the one part above
 * it that shares our stderr, iofwd.c, is reached through the line guard it
 * sets (launcher_set_line_guard).
 *
 * A rank's exit status and the end of its control link arrive in either
 * order; a rank is judged only once both are in (or LINGER_US has passed),
 * so an ABORT or DONE still sitting in the socket is never mistaken for a
 * silent death.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void (*line_guard)(int dst);

int64_t launcher_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double launcher_ms(const struct job *j, int64_t t) { return (double)(t - j->t0) / 1000.0; }

void launcher_set_line_guard(void (*guard)(int dst)) { line_guard = guard; }

void launcher_vsay(const char *prefix, const char *fmt, va_list ap)
{
    int saved = errno; /* %m must see the caller's errno */
    char buf[SDSM_CTRL_MAX_REASON + 512];
    int n = snprintf(buf, sizeof buf, "%s", prefix);
    errno = saved;
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    if (line_guard)
        line_guard(STDERR_FILENO); /* not glued to a rank's unfinished line */
    ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
    (void)w;
    errno = saved;
}

void launcher_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    launcher_vsay("sdsmrun: ", fmt, ap);
    va_end(ap);
}

void launcher_say_prefixed(const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    launcher_vsay(prefix, fmt, ap);
    va_end(ap);
}

void launcher_verbose(const struct job *j, const char *fmt, ...)
{
    if (!j->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    launcher_vsay("sdsmrun: ", fmt, ap);
    va_end(ap);
}

void job_fail(struct job *j, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* Deaths the stop itself causes are not news. */
    if (!j->failed) {
        j->failed = true;
        j->status = status;
        launcher_vsay("sdsmrun: ", fmt, ap);
    } else if (j->verbose) {
        launcher_vsay("sdsmrun: ", fmt, ap);
    }
    va_end(ap);
    job_stop(j);
}

/*
 * A failure does not kill the others at once: a rank that has returned from
 * main (or called exit) is flushing its stdio buffers, and SIGTERM would
 * throw that output away.  The ranks get EXIT_GRACE_US to end by themselves
 * (the grace ends as soon as all have); then the event loop sends SIGTERM.
 * A signal to the launcher or --timeout (j->urgent) stops at once: the event
 * loop, which sets urgent, sends SIGTERM right after this.
 */
void job_stop(struct job *j)
{
    if (j->stopping)
        return;
    j->stopping = true;
    j->stop_at = launcher_now();
    j->term_at = j->stop_at + (j->urgent ? 0 : EXIT_GRACE_US);
    launcher_say("stopping the job");
}

const char *job_pid_str(const struct job *j, const struct rank *rk, char *buf, size_t len)
{
    if (rk->agent < 0)
        snprintf(buf, len, "%d", (int)rk->pid);
    else
        snprintf(buf, len, "%d on host %s", (int)rk->pid, j->hosts[rk->host].name);
    return buf;
}

bool job_any_local(const struct job *j)
{
    for (int r = 0; r < j->n; r++)
        if (j->hosts[j->ranks[r].host].local)
            return true;
    return false;
}

bool job_all_local(const struct job *j)
{
    for (int r = 0; r < j->n; r++)
        if (!j->hosts[j->ranks[r].host].local)
            return false;
    return true;
}

struct rank *job_local_rank(struct job *j, pid_t pid)
{
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].pid == pid && !j->ranks[r].reaped && j->ranks[r].agent < 0)
            return &j->ranks[r];
    return NULL;
}

/* Ranks that were never started count as gone, so the loop can end. */
void job_never_started(struct job *j, int from)
{
    for (int r = from; r < j->n; r++) {
        if (j->ranks[r].judged)
            continue;
        j->ranks[r].reaped = j->ranks[r].judged = true;
        j->nreaped++;
        j->njudged++;
    }
}

/* ------------------------------------------------------------ verdicts */

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
    char how[160], pb[96], lb[PATH_MAX + 200];
    const char *pid = job_pid_str(j, rk, pb, sizeof pb);
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
    else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
        job_fail(j, 128 + SIGKILL, "rank %d (pid %s) %s%s", r, pid, how,
                 rk->oom ? rk->oom : oom_explain(rk->agent < 0, lb, sizeof lb));
    else if (WIFSIGNALED(st))
        job_fail(j, 128 + WTERMSIG(st), "rank %d (pid %s) %s", r, pid, how);
    else if (WEXITSTATUS(st) && rk->lost)
        job_fail(j, WEXITSTATUS(st), "rank %d (pid %s) %s after losing its link to rank %d (pid %s)", r, pid,
                 how, rk->lost - 1, job_pid_str(j, &j->ranks[rk->lost - 1], lb, sizeof lb));
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
void job_rank_registered(struct job *j, struct rank *rk)
{
    (void)rk;
    if (j->stopping || j->table_sent || j->nexited_unreg == 0)
        return;
    for (int r = 0; r < j->n; r++) {
        struct rank *gone = &j->ranks[r];
        if (gone->judged && !gone->registered && gone->pid > 0) {
            char pb[96];
            job_fail(j, 1, "rank %d (pid %s) exited before sdsm_init completed", r,
                     job_pid_str(j, gone, pb, sizeof pb));
            return;
        }
    }
}

void job_link_closed(struct job *j, struct rank *rk)
{
    if (rk->reaped)
        judge(j, rk);
    else if (!rk->done && !rk->aborted && !j->stopping)
        rk->linger = launcher_now() + LINGER_US; /* expect its exit soon */
}

void job_rank_stopped(struct job *j, struct rank *rk, int sig)
{
    int r = (int)(rk - j->ranks);
    char pb[96];
    job_pid_str(j, rk, pb, sizeof pb);
    if (j->stopping)
        launcher_verbose(j, "rank %d (pid %s) stopped by signal %d", r, pb, sig);
    else
        job_fail(j, 128 + sig, "rank %d (pid %s) stopped by signal %d (%s)", r, pb, sig, strsignal(sig));
}

void job_rank_exited(struct job *j, struct rank *rk, int wstatus)
{
    rk->reaped = rk->just_reaped = true;
    rk->wstatus = wstatus;
    rk->t_exit = launcher_now();
    j->nreaped++;
}

/*
 * Exits collected together (the launcher was stopped or slow) are judged
 * after all are in, ranks that died of a lost link last: the order of
 * waitpid says nothing about which rank failed first.
 */
void job_judge_reaped(struct job *j)
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
