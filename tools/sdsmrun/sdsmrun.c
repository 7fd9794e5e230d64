/*
 * sdsmrun.c - the job launcher: `sdsmrun -n N prog args...` starts N ranks
 * of prog on this machine, introduces them to each other through a private,
 * key-authenticated rendezvous socket, and watches them: the first rank that
 * fails (or a signal, or --timeout) stops the whole job, and nothing of the
 * job outlives the launcher.
 *
 * This file holds the set-up, the event loop and the steps of the stop
 * (SIGTERM after the grace, SIGKILL after that); options.c reads the
 * command line and holds the help texts; ctrl.c speaks to the ranks'
 * control links, spawn.c forks them, iofwd.c passes on their standard input,
 * output and error, hosts.c places them and agents.c runs the other
 * hosts' agents.  Below those, job.c holds what they all call (messages, the
 * failure, the verdicts on the ranks) and proc.c the process plumbing.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"
#include "net/ifaddr.h"
#include "core/config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sdsm.h"

/*
 * Read the SDSM_* variables the ranks will get, with the runtime's own
 * table, so a bad value stops the job once, before any rank starts, rather
 * than once per rank.  Returns 0 or the exit status.
 */
static int check_config(struct job *j)
{
    char num[16], err[512];
    sdsm_config_t cfg;
    extern char **environ;
    snprintf(num, sizeof num, "%d", j->n);
    /* As the ranks will see them; each rank gets its own SDSM_RANK. */
    if (unsetenv("SDSM_RANK") || setenv("SDSM_NPROCS", num, 1) ||
        (j->protocol && setenv("SDSM_PROTOCOL", j->protocol, 1))) {
        launcher_say("cannot set the ranks' environment: %m");
        return 1;
    }
    if (sdsm_config_load(&cfg, environ, err, sizeof err, NULL) == 0 &&
        (!cfg.iface || sdsm_ifaddr_check(cfg.iface, err, sizeof err) == 0)) {
        j->setup_us = cfg.timeout * 1000000LL;
        j->hb_us = cfg.heartbeat_ms * 1000LL;
        j->peer_timeout_us = cfg.peer_timeout_ms * 1000LL;
        j->rto_min_ms = cfg.rto_min_ms;
        return -1;
    }
    launcher_say("%s; no rank was started (see sdsmrun --info)", err);
    return EXIT_USAGE;
}

/* The job key is not among these: it goes into each rank's environment in
 * the rank's child (spawn_child_env), so the remote shells (and whatever an
 * ssh_config's SendEnv would pass on) never see it; a key inherited from an
 * enclosing job is not passed on either. */
/* --stats asks for the statistics; a form the user chose (SDSM_STATS=all or json) stays. */
static int set_stats(void)
{
    const char *v = getenv("SDSM_STATS");
    return v && *v && strcmp(v, "0") != 0 ? 0 : setenv("SDSM_STATS", "1", 1);
}

static int setup_env(struct job *j)
{
    char num[16];
    snprintf(num, sizeof num, "%d", j->n);
    if (setenv("SDSM_NPROCS", num, 1) || setenv("SDSM_RENDEZVOUS", j->rdv_local, 1) ||
        unsetenv("SDSM_JOB_KEY") || (j->stats && set_stats()) ||
        (j->protocol && setenv("SDSM_PROTOCOL", j->protocol, 1))) {
        launcher_say("cannot set the ranks' environment: %m");
        return -1;
    }
    return 0;
}

/* Every rank's control link and output pipes are descriptors here; make sure there are enough. */
static int setup_nofile(struct job *j)
{
    struct rlimit rl;
    rlim_t need = 3 * (rlim_t)j->n + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
        return 0;
    /* Short of fds the rendezvous would stall half-way: better say so now. */
    if (rl.rlim_max < need) {
        launcher_say("%d ranks need about %lu open files, but the limit is %lu (see ulimit -n)", j->n,
                     (unsigned long)need, (unsigned long)rl.rlim_max);
        return -1;
    }
    j->child_restore.nofile = rl;
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl)) {
        launcher_say("cannot raise the open-file limit to %lu: %m", (unsigned long)need);
        return -1;
    }
    j->child_restore.restore_nofile = true;
    return 0;
}

static int setup_signals(struct job *j)
{
    struct sigaction old;
    /* Writing to a closed stderr pipe must not kill the launcher mid-job. */
    if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        signal(SIGPIPE, SIG_IGN);
        j->child_restore.restore_sigpipe = true;
    }
    if ((j->sfd = proc_signalfd(&j->child_restore.mask)) < 0) {
        launcher_say("cannot set up signal handling: %m");
        return -1;
    }
    return 0;
}

static int setup(struct job *j)
{
    j->self = getpid();
    if (sdsm_auth_key_generate(j->keyhex)) { /* errno says why */
        launcher_say("cannot generate the job key: %m");
        return -1;
    }
    sdsm_auth_key_parse(j->keyhex, j->key);
    if (setup_nofile(j) || iofwd_init(j) || ctrl_listen(j) || setup_env(j) || setup_signals(j))
        return -1;
    if (j->timeout_s > 0)
        j->deadline = j->t0 + (int64_t)(j->timeout_s * 1e6);
    oom_watch_start();
    return 0;
}

/*
 * The stop's SIGTERM: at the end of the failure's grace period, at once for
 * a signal to us or --timeout.  SIGCONT after SIGTERM: a stopped rank
 * resumes only to die.  Links are closed after the signals so ranks die
 * before they notice and complain.
 */
static void terminate(struct job *j)
{
    if (j->signalled)
        return;
    j->signalled = true;
    j->term_at = launcher_now();
    spawn_signal_job(j, SIGTERM);
    spawn_signal_job(j, SIGCONT);
    ctrl_close_all(j);
}

/* Our children that ended or stopped: ranks, agents' remote shells, and
 * orphans of ranks.  The ranks' exits are judged together after the loop
 * (job_judge_reaped). */
static void reap(struct job *j)
{
    bool any = false;
    for (;;) {
        int st;
        pid_t pid = proc_wait_any(&st);
        if (pid <= 0) {
            if (pid < 0 && errno != ECHILD)
                launcher_say("waitpid: %m");
            break;
        }
        struct rank *rk = job_local_rank(j, pid);
        if (!rk && agents_reaped(j, pid, st))
            continue;
        if (!rk) { /* an orphan of a rank, reparented to us as subreaper */
            launcher_verbose(j, "reaped pid %d, a descendant of a rank", (int)pid);
            continue;
        }
        if (WIFSTOPPED(st)) {
            job_rank_stopped(j, rk, WSTOPSIG(st));
            continue;
        }
        iofwd_rank_exited(j, (int)(rk - j->ranks));
        job_rank_exited(j, rk, st);
        any = true;
    }
    if (any)
        job_judge_reaped(j);
}

static void on_signals(struct job *j)
{
    struct signalfd_siginfo si[16];
    bool child = false;
    for (;;) {
        ssize_t n = read(j->sfd, si, sizeof si);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++) {
            int sig = (int)si[i].ssi_signo;
            if (sig == SIGCHLD) {
                child = true;
            } else if (sig == SIGUSR1 || sig == SIGUSR2) {
                launcher_verbose(j, "received signal %d (%s): passing it on to the ranks", sig,
                                 strsignal(sig));
                spawn_forward_signal(j, sig);
                agents_forward_signal(j, sig);
            } else if (!j->stopping) {
                j->urgent = true;
                job_fail(j, 128 + sig, "received signal %d (%s)", sig, strsignal(sig));
                terminate(j);
            } else if (!j->signalled) { /* a signal ends the failure's grace at once */
                launcher_verbose(j, "received signal %d (%s)", sig, strsignal(sig));
                terminate(j);
            } else if (!j->killed) { /* impatient user: skip the grace period */
                launcher_say("received signal %d again; killing the job", sig);
                spawn_signal_job(j, SIGKILL);
                j->killed = true;
            }
        }
    }
    if (child)
        reap(j);
}

/* A rank whose process and link still disagree after LINGER_US. */
static void linger_timers(struct job *j, int64_t now)
{
    for (int r = 0; r < j->n; r++) {
        struct rank *rk = &j->ranks[r];
        if (!rk->linger || now < rk->linger || rk->judged)
            continue;
        rk->linger = 0;
        if (rk->reaped && rk->link)
            ctrl_close(j, rk->link); /* judges it */
        else if (!rk->reaped && !rk->link && !j->stopping) {
            char pb[96];
            job_fail(j, 1, "rank %d (pid %s) closed its control link without calling sdsm_finalize", r,
                     job_pid_str(j, rk, pb, sizeof pb));
        }
    }
}

/* The stop's steps: SIGTERM after the grace, SIGKILL after KILL_AFTER_US. */
static void stop_timers(struct job *j, int64_t now)
{
    if (j->stopping && !j->signalled && (now >= j->term_at || j->nreaped == j->n))
        terminate(j);
    if (j->signalled && !j->killed && now >= j->term_at + KILL_AFTER_US && !spawn_job_gone(j)) {
        launcher_verbose(j, "sending SIGKILL to what is left of the job");
        spawn_signal_job(j, SIGKILL);
        j->killed = true;
    }
}

static int64_t linger_stop_deadline(const struct job *j)
{
    int64_t next = INT64_MAX;
    for (int r = 0; r < j->n; r++)
        if (j->ranks[r].linger && !j->ranks[r].judged && j->ranks[r].linger < next)
            next = j->ranks[r].linger;
    if (j->stopping && !j->signalled && j->term_at < next)
        next = j->term_at;
    if (j->signalled && !j->killed && j->term_at + KILL_AFTER_US < next)
        next = j->term_at + KILL_AFTER_US;
    if (j->stopping && j->stop_at + GIVE_UP_AFTER_US < next)
        next = j->stop_at + GIVE_UP_AFTER_US;
    return next;
}

static void timers(struct job *j, int64_t now)
{
    ctrl_timers(j, now);
    spawn_timers(j, now);
    linger_timers(j, now);
    stop_timers(j, now);
    agents_timers(j, now);
    /* A job that has just ended in time is not failed by the clock. */
    if (j->stopping || !j->deadline || now < j->deadline || j->njudged >= j->n)
        return;
    if (!j->ask_until) { /* first say what the ranks are stuck on, if they can */
        j->ask_until = now + ASK_US;
        j->nasked = ctrl_ask_all(j); /* answers are read by the next poll rounds */
        if (j->nasked)
            launcher_say("time limit of %.9g s exceeded; asking the ranks what they are waiting for",
                         j->timeout_s);
    }
    if (now >= j->ask_until || j->nanswered >= j->nasked) {
        j->urgent = true;
        job_fail(j, EXIT_TIMEOUT, "time limit of %.9g s exceeded", j->timeout_s);
        terminate(j);
    }
}

static bool finished(struct job *j, int64_t now)
{
    if (!j->stopping)
        return j->njudged == j->n && agents_gone(j);
    if (j->nreaped == j->n && agents_gone(j) && (j->killed || spawn_job_gone(j)))
        return true;
    if (now >= j->stop_at + GIVE_UP_AFTER_US) {
        launcher_say("%d rank(s) did not terminate; giving up on them", j->n - j->nreaped);
        return true;
    }
    return false;
}

static int poll_timeout(const struct job *j, int64_t now)
{
    int64_t next = ctrl_next_deadline(j), t = spawn_next_deadline(j);
    if (t < next)
        next = t;
    if ((t = linger_stop_deadline(j)) < next)
        next = t;
    if ((t = agents_next_deadline(j)) < next)
        next = t;
    int64_t clock = j->ask_until ? j->ask_until : j->deadline;
    if (!j->stopping && clock && clock < next)
        next = clock;
    if (next == INT64_MAX)
        return -1;
    if (next <= now)
        return 0;
    int64_t ms = (next - now + 999) / 1000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* pollfd 0 is the signalfd, 1 the listening socket, then one per connection,
 * then the ranks' standard streams (iofwd.c), then the agents (agents.c). */
static int build_pollset(struct job *j, struct pollfd **pfd, size_t *cap, size_t *nio, size_t *nag)
{
    size_t need = 2 + j->nconns + iofwd_npoll(j) + agents_npoll(j);
    if (need > *cap) {
        struct pollfd *np = realloc(*pfd, need * sizeof *np);
        if (!np) {
            launcher_say("out of memory for %zu poll entries", need);
            return -1;
        }
        *pfd = np;
        *cap = need;
    }
    (*pfd)[0] = (struct pollfd){.fd = j->sfd, .events = POLLIN};
    (*pfd)[1] = (struct pollfd){.fd = j->accept_paused ? -1 : j->lfd, .events = POLLIN};
    for (size_t i = 0; i < j->nconns; i++) {
        struct conn *c = j->conns[i];
        (*pfd)[2 + i] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        if (c->outoff < c->outlen)
            (*pfd)[2 + i].events |= POLLOUT;
    }
    *nio = iofwd_pollset(j, *pfd + 2 + j->nconns);
    *nag = agents_pollset(j, *pfd + 2 + j->nconns + *nio);
    return (int)(2 + j->nconns + *nio + *nag);
}

static int run(struct job *j)
{
    struct pollfd *pfd = NULL;
    size_t cap = 0;
    for (;;) {
        int64_t now = launcher_now();
        timers(j, now);
        if (finished(j, now))
            break;
        size_t nio = 0, nag = 0;
        int np = build_pollset(j, &pfd, &cap, &nio, &nag);
        if (np < 0 || (poll(pfd, (nfds_t)np, poll_timeout(j, now)) < 0 && errno != EINTR)) {
            if (np >= 0)
                launcher_say("poll: %m");
            job_fail(j, 1, "the launcher cannot go on");
            break;
        }
        /* Links before child exits, so a DONE or ABORT is read before its sender's death. */
        size_t nc = (size_t)np - 2 - nio - nag;
        for (size_t i = 0; i < nc; i++)
            if (pfd[2 + i].revents)
                ctrl_io(j, j->conns[i], pfd[2 + i].revents);
        if (pfd[1].revents && j->lfd >= 0)
            ctrl_accept(j);
        /* Output before child exits too, so a rank's last words come before the verdict. */
        iofwd_events(j, pfd + 2 + nc);
        agents_events(j, pfd + 2 + nc + nio);
        if (pfd[0].revents)
            on_signals(j);
        ctrl_sweep(j);
    }
    free(pfd);
    /* Nothing the job started outlives it; their pipes then end, so the
     * drain below reaches their ends. */
    spawn_sweep(j);
    /* Output the job could not pass on fails it, as it fails any program. */
    if (iofwd_finish(j) && j->status == 0)
        j->status = 1;
    launcher_verbose(j, "job finished at %.1f ms, exit status %d", launcher_ms(j, launcher_now()), j->status);
    /* Strangers may still be connected; leak checkers should see a clean exit. */
    ctrl_close_all(j);
    ctrl_sweep(j);
    free(j->conns);
    for (int r = 0; r < j->n; r++)
        free(j->ranks[r].oom);
    free(j->ranks);
    j->conns = NULL;
    j->ranks = NULL;
    return j->status;
}

int main(int argc, char **argv)
{
    struct job job = {.lfd = -1, .sfd = -1};
    job.t0 = launcher_now();
    if (argc > 1 && strcmp(argv[1], "--agent") == 0)
        return agent_main(argc, argv);
    int rc = options_parse(&job, argc, argv);
    if (rc >= 0 || (rc = hosts_place(&job)) >= 0)
        goto out;
    /* Before the checks below: -x may set SDSM_* (checked) or PATH (where the program is). */
    rc = 1;
    if (hosts_setup_env(&job))
        goto out;
    /* Another host checks for itself (its agent names it when the program is missing). */
    if ((rc = apps_check_local(&job)))
        goto out;
    if ((rc = check_config(&job)) >= 0)
        goto out;
    if (job.display_map)
        bind_display_map(&job);
    rc = 1;
    if (setup(&job))
        goto out;
    if (spawn_all(&job) == 0 && agents_start(&job))
        job_never_started(&job, 0); /* those not started count as gone */
    rc = run(&job);
out:
    free(job.ranks); /* leak checkers should see a clean exit */
    agents_free(&job);
    hosts_free(&job);
    apps_free(&job);
    return rc;
}
