/*
 * launcher.h - state shared by the parts of sdsmrun: the job (options, ranks,
 * first failure: job.c), the control links of the rendezvous (ctrl.c), the
 * child processes (spawn.c, proc.c) and their standard streams (iofwd.c).
 * sdsmrun.c owns main() and the event loop.
 *
 * Everything runs on one thread driven by poll(), so nothing here is locked.
 * Times are CLOCK_MONOTONIC microseconds (launcher_now).
 */
#ifndef SDSMRUN_LAUNCHER_H
#define SDSMRUN_LAUNCHER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "net/auth.h"
#include "net/wire.h"

#define LAUNCHER_MAX_RANKS 4096
#define HANDSHAKE_US       (5 * 1000000LL) /* a connection must authenticate (and register) in this */
#define LINGER_US          (1000000LL)     /* how long a rank's process and its link may disagree */
#define EXIT_GRACE_US      (500000LL)      /* a failure -> SIGTERM: ranks already ending may finish */
#define KILL_AFTER_US      (2 * 1000000LL) /* SIGTERM -> SIGKILL */
#define GIVE_UP_AFTER_US   (4500000LL)     /* stop must end within 5 s of the failure */
#define ASK_US             (700000LL)      /* --timeout: how long ranks have to say what they wait for */

#define CTRL_HDR    ((size_t)sizeof(sdsm_hdr_t))
#define CTRL_IN_MAX (CTRL_HDR + 4 + SDSM_CTRL_MAX_REASON)

enum conn_state {
    CONN_AUTH,   /* hello_a sent, waiting for the connector's 64-byte hello */
    CONN_AUTHED, /* proved the key as some rank, REGISTER expected */
    CONN_LINKED, /* a registered rank's control link */
};

struct conn {
    int fd; /* -1 once closed; freed after the poll round */
    enum conn_state st;
    uint32_t rank;    /* proven in the handshake (CONN_AUTHED and later) */
    int64_t deadline; /* for CONN_AUTH/CONN_AUTHED; 0 when none */
    uint8_t nonce_a[16];
    char peer[64]; /* "ip:port", for log lines */
    uint32_t ip;   /* the peer's address (network order), for the stranger log */
    size_t have;   /* bytes of the current message in `in` */
    uint8_t in[CTRL_IN_MAX];
    uint8_t *out; /* bytes the socket did not take yet */
    size_t outlen, outoff;
};

struct rank {
    pid_t pid;
    int wstatus;
    bool reaped, registered, done, aborted, judged;
    bool just_reaped;  /* reaped in this spawn_reap round, not judged yet */
    struct conn *link; /* the registered control link while open */
    int64_t t_spawn, t_reg, t_exit;
    int64_t linger; /* deadline while process and link disagree; 0 = none */
    int lost;       /* 1 + the rank whose link this one lost (SDSM_CTRL_LOST); 0 = none */
    pid_t reg_pid;  /* the pid it registered: pid, or a descendant's under a wrapper */
    sdsm_ctrl_addr_t addr;
    int host;  /* index in job.hosts */
    int agent; /* index in job.agents for a rank on another host; -1 = ours.
                             * Its pid is then the agent's report (0 until it comes). */
    int app;   /* index in job.apps: the program it runs */
    int cpu;   /* --bind-to core: the CPU it is pinned to; -1 = not bound */
    char *oom; /* on another host, killed by SIGKILL: its agent's oom_explain */
};

/* One program of the command line (several with MPMD: prog1 : prog2). */
struct app {
    char **argv; /* program and its arguments, NULL-terminated */
    int n;       /* its ranks; 0 = the rest (the only group, without -n) */
};

/* What a child of ours restores before exec (proc_child_restore): the
 * signal mask, file limit and SIGPIPE it would have had without us. */
struct proc_restore {
    sigset_t mask;
    struct rlimit nofile;
    bool restore_nofile, restore_sigpipe;
};

/* Long options without a short form. */
enum {
    OPT_HOSTS = 1000,
    OPT_HOSTFILE,
    OPT_MAP_BY,
    OPT_RSH,
    OPT_PREFIX,
    OPT_THREADS,
    OPT_ASLR,
    OPT_TRACE,
    OPT_BIND_TO,
    OPT_REPORT_BINDINGS,
    OPT_DISPLAY_MAP,
    OPT_FOREIGN, /* another launcher's option: named with a hint (foreign.c) */
};

/* A host of --hosts/--hostfile. */
struct host {
    char *name;
    int slots;
    bool local; /* this machine: its ranks are forked here */
};

/* The launcher's side of one remote host's agent (agents.c). */
struct agent {
    int host;
    pid_t pid;    /* the remote shell's process, our child */
    int in_w;     /* its stdin: the key, then held open (-1 once closed) */
    int out_r;    /* its stdout: frames (-1 once at EOF) */
    uint8_t *buf; /* a frame being read */
    size_t len, cap;
    bool ready, reaped, failed;
    bool synced;       /* AGENT_MAGIC seen: frames follow */
    size_t banner_len; /* bytes the remote shell printed before it */
    char banner[128];  /* their start, printable, for messages */
    int wstatus;
    int64_t ready_by; /* it must say hello by then */
    int64_t heard_at; /* when its last bytes came (from its hello on) */
    int64_t beat_at;  /* when we next write a heartbeat byte to its stdin */
};

struct job {
    /* options */
    int n;
    double timeout_s; /* 0 = none */
    bool stats, verbose;
    const char *protocol;
    bool tag_output;        /* --tag-output */
    const char *output_dir; /* --output-filename DIR, or NULL */
    struct app *apps;       /* the programs: one, or one per ':' group (MPMD) */
    int napps;
    bool bind_core;       /* --bind-to core */
    bool report_bindings; /* --report-bindings */
    bool display_map;     /* --display-map */
    /* hosts (hosts.c) and their agents (agents.c); without --hosts/--hostfile one local host */
    struct host *hosts;
    int nhosts;
    bool map_by_node;        /* --map-by node: round-robin; else fill each host's slots */
    int ppr;                 /* --map-by ppr:N:node, -N: N ranks per host (in place of slots); 0 = none */
    const char *host_source; /* "--hosts", "--hostfile", "Slurm": where the hosts came from */
    const char *rsh;         /* --rsh, SDSM_RSH or the default */
    const char *prefix;      /* --prefix: sdsmrun's directory on the remote hosts */
    char **xenv;             /* -x: "NAME=VALUE" for every rank */
    int nxenv;
    struct agent *agents;
    int nagents;

    /* rendezvous */
    int lfd, sfd; /* listening socket, signalfd */
    uint16_t port;
    char rdv_local[32];   /* SDSM_RENDEZVOUS of the ranks forked here: "ip:port" */
    char rdv_agents[320]; /* the agents' --rendezvous: "ip[,ip...]:port" (ctrl.c) */
    char keyhex[2 * SDSM_KEY_BYTES + 1];
    uint8_t key[SDSM_KEY_BYTES];
    bool accept_paused; /* out of fds: retry at accept_retry */
    int64_t accept_retry;
    struct conn **conns;
    size_t nconns, capconns;

    /* ranks */
    struct rank *ranks;
    pid_t pgid, self; /* the job's process group (rank 0's pid), the launcher */
    int nregistered, nreaped, njudged, nexited_unreg;
    bool table_sent;

    struct iofwd *io; /* the ranks' stdin/stdout/stderr (iofwd.c) */

    struct proc_restore child_restore; /* what a child restores before exec */

    /* ending */
    int64_t t0, deadline;           /* start; --timeout expiry or 0 */
    int64_t setup_us;               /* the ranks' set-up time limit (SDSM_TIMEOUT) */
    int64_t hb_us, peer_timeout_us; /* SDSM_HEARTBEAT, SDSM_PEER_TIMEOUT (0: none), for the agents */
    long rto_min_ms;                /* SDSM_RTO_MIN, for the ranks' links to the launcher */
    bool failed, stopping, killed;
    bool urgent;    /* the stop skips EXIT_GRACE_US (a signal to us, --timeout):
                             * who sets it sends SIGTERM after job_fail */
    bool signalled; /* the stop's SIGTERM went out (at term_at) */
    int64_t term_at;
    int nasked, nanswered; /* ranks asked what they wait for when --timeout fired, answers */
    int64_t ask_until;     /* end of that question's grace period; 0 before */
    int status;            /* exit status of the first failure */
    int64_t stop_at;
    int64_t stop_poll_at; /* next look for wrapped ranks stopped by a signal */
};

/*
 * The parts call one way: sdsmrun.c (main, the event loop and the stop's
 * steps) calls ctrl.c, spawn.c, iofwd.c, hosts.c and agents.c, and the
 * agent mode agent.c; all of them call job.c, proc.c and oom.c, which call
 * no other part.  (spawn.c prepares a rank's streams with iofwd.c before its
 * fork; agents.c hands iofwd.c the output its agents pass back.)
 */

/* Exit statuses of sdsmrun itself (besides a rank's own). */
#define EXIT_USAGE    2
#define EXIT_TIMEOUT  124
#define EXIT_NOEXEC   127
#define MAX_TIMEOUT_S 31536000.0 /* a year: keeps the deadline arithmetic far from overflow */

/* options.c: the command line into j (0, or the exit status: help printed,
 * or a usage error reported), and a usage error of main's own checks. */
int options_parse(struct job *j, int argc, char **argv);
int options_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* foreign.c: other launchers' options.  getopt's table: own then theirs. */
struct option;
const struct option *foreign_longopts(const struct option *own);
/* The usage error for an unknown option word ("--mca", "-c"): a hint. */
int foreign_unknown(const char *word, const struct option *own);

/* apps.c: the programs (MPMD: prog1 : prog2) */
/* The program words (w[0..nw)); one_program: after "--", ':' is no separator. */
int apps_parse(struct job *j, char **w, int nw, bool one_program);
void apps_assign(struct job *j);              /* each rank's app, after placement */
char **apps_argv(const struct job *j, int r); /* rank r's program and arguments */
int apps_check_local(const struct job *j);    /* 0, or EXIT_NOEXEC (said) */
void apps_free(struct job *j);

/* bind.c: --bind-to, --report-bindings, --display-map */
int bind_option(struct job *j, int c, const char *arg);
/* The CPU of the i-th rank forked on this host; *shared set when CPUs ran out. */
int bind_cpu(int i, bool *shared);
void bind_child(int cpu); /* in a rank's child before exec; -1: nothing */
void bind_report(const char *host, pid_t pid, int rank, int cpu);
void bind_display_map(const struct job *j);

/* job.c: the clock, messages, the first failure, the verdicts on the ranks */
int64_t launcher_now(void);
/* Milliseconds from the launcher's start to t, for --verbose timings. */
double launcher_ms(const struct job *j, int64_t t);
/* prefix + message + newline, in one write so it never interleaves. */
void launcher_vsay(const char *prefix, const char *fmt, va_list ap);
/* "sdsmrun: " + message + newline. */
void launcher_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* prefix + message, for lines that are not "sdsmrun: " ones. */
void launcher_say_prefixed(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Only with --verbose. */
void launcher_verbose(const struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* guard(STDERR_FILENO) runs before each of the launcher's lines (iofwd.c
 * starts it on a fresh line when a rank's output left off mid-line). */
void launcher_set_line_guard(void (*guard)(int dst));
/* First failure: print it, remember its status, stop the job.  Later: verbose only. */
void job_fail(struct job *j, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Mark the job stopping; the event loop sends the signals (j->term_at). */
void job_stop(struct job *j);
/* "1234" or "1234 on host b": a rank's pid as messages name it. */
const char *job_pid_str(const struct job *j, const struct rank *rk, char *buf, size_t len);
bool job_any_local(const struct job *j); /* some rank runs on this machine */
bool job_all_local(const struct job *j); /* every rank does */
/* The rank forked here whose pid this is, not reaped yet; NULL if none. */
struct rank *job_local_rank(struct job *j, pid_t pid);
/* Ranks from `from` on that were never started count as gone. */
void job_never_started(struct job *j, int from);
void job_rank_registered(struct job *j, struct rank *rk); /* after REGISTER */
void job_link_closed(struct job *j, struct rank *rk);     /* its control link ended */
void job_rank_stopped(struct job *j, struct rank *rk, int sig);
/* Its wait status is in: marked just_reaped, judged by job_judge_reaped. */
void job_rank_exited(struct job *j, struct rank *rk, int wstatus);
/* Judge the ranks marked just_reaped (by the event loop or an agent's report). */
void job_judge_reaped(struct job *j);

/* proc.c: starting and reaping processes (the launcher's and an agent's) */
/* 0, or the errno execvp would give for prog. */
int proc_check_program(const char *prog);
/* In a child right after fork: die with our process `parent` (and at once
 * if it is gone already), and join the job's process group pgid. */
void proc_child_begin(pid_t parent, pid_t pgid);
/* In a child before exec: the file limit, SIGPIPE and signal mask it would
 * have had without the launcher (or the agent). */
void proc_child_restore(const struct proc_restore *rs);
/* In the parent after fork: the child joins the job's group, the first one
 * starts it (*pgid 0 until then). */
void proc_join_group(pid_t pid, pid_t *pgid);
/* A pipe a child writes and we read: both ends close-on-exec, ours
 * non-blocking.  0, or -1 with errno set. */
int proc_out_pipe(int *ours, int *childs);
/* Block SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 (the mask before goes to
 * *old_mask) and read them from the returned signalfd (-1 with errno set);
 * orphans of our children come to us (a subreaper). */
int proc_signalfd(sigset_t *old_mask);
/* In a rank's child before exec: address randomization off unless SDSM_ASLR=1. */
void proc_child_aslr(void);
/* waitpid(-1, WNOHANG | WUNTRACED) through EINTR: a pid, 0 for none, -1. */
pid_t proc_wait_any(int *wstatus);
/* Kill whatever a job left (its group pgid and our children, also in
 * sessions of their own) and reap it; SIGTERM first unless kill_now, SIGKILL
 * after KILL_AFTER_US.  Returns how many were left when it gave up, or 0. */
int proc_sweep_group(pid_t pgid, bool kill_now);

/* oom.c: was a SIGKILL the out-of-memory killer's? */
void oom_watch_start(void); /* the kill counts at the job's start */
/* Text to follow "killed by signal 9 (Killed)", from the counts of this
 * machine (here) or none (a hint only). */
const char *oom_explain(bool here, char *buf, size_t len);

/* ctrl.c */
int ctrl_listen(struct job *j);
void ctrl_accept(struct job *j);
void ctrl_io(struct job *j, struct conn *c, short revents);
void ctrl_timers(struct job *j, int64_t now);
int64_t ctrl_next_deadline(const struct job *j);
void ctrl_close(struct job *j, struct conn *c);
void ctrl_close_all(struct job *j);
/* Ask every linked rank what it is waiting for; how many were asked. */
int ctrl_ask_all(struct job *j);
void ctrl_sweep(struct job *j);

/* iofwd.c: the ranks' standard streams */
int iofwd_init(struct job *j);                /* before any other descriptor is opened */
int iofwd_prepare(struct job *j, int r);      /* before rank r's fork; job_fail on error */
void iofwd_child(const struct job *j, int r); /* in rank r's child, before exec */
int iofwd_remote(struct job *j, int r);       /* rank r runs on another host; job_fail on error */
void iofwd_parent(struct job *j, int r);      /* after rank r's fork, in the launcher */
size_t iofwd_npoll(const struct job *j);      /* most pollfds iofwd_pollset fills */
size_t iofwd_pollset(struct job *j, struct pollfd *pfd);
void iofwd_events(struct job *j, const struct pollfd *pfd); /* the entries pollset filled */
void iofwd_rank_exited(struct job *j, int r);               /* pass on all it wrote, before judging it */
/* Drain and close everything; true if writing our stdout or stderr failed. */
bool iofwd_finish(struct job *j);
/* For ranks on other hosts: their output arrives from their agent */
void iofwd_feed(struct job *j, int r, int dst, const uint8_t *p, size_t len);
void iofwd_feed_end(struct job *j, int r); /* the rank exited: pass on unfinished lines */

/* spawn.c: the ranks forked on this machine */
int spawn_all(struct job *j);
void spawn_timers(struct job *j, int64_t now); /* ranks under a wrapper stopped? */
int64_t spawn_next_deadline(const struct job *j);
void spawn_signal_job(struct job *j, int sig);
/* SIGUSR1/SIGUSR2 to us: to every rank forked here (not to their group). */
void spawn_forward_signal(struct job *j, int sig);
bool spawn_job_gone(const struct job *j);
/* Kill whatever the job left (a rank's children, also in sessions of their
 * own) and reap it; returns once none is left or after a bounded wait. */
void spawn_sweep(struct job *j);

/* hosts.c: --hosts, --hostfile, -x, placement */
int hosts_option(struct job *j, int c, const char *arg); /* -1: go on; else exit status */
int hosts_place(struct job *j);                          /* after parsing; -1: go on; else exit status */
int hosts_setup_env(struct job *j);                      /* -x for our own ranks */
void hosts_free(struct job *j);                          /* the host table and -x, at exit */
/* A count of ranks or slots, 1..LAUNCHER_MAX_RANKS, and nothing after it. */
bool hosts_parse_count(const char *s, long *out);
const char *slurm_nodelist(void); /* SLURM_JOB_NODELIST (or SLURM_NODELIST), or NULL */

/* agents.c: the launcher's side of the other hosts' agents */
int agents_start(struct job *j);                      /* after the local ranks are forked */
bool agents_reaped(struct job *j, pid_t pid, int st); /* true if pid was an agent */
size_t agents_npoll(const struct job *j);
size_t agents_pollset(struct job *j, struct pollfd *pfd);
void agents_events(struct job *j, const struct pollfd *pfd);
void agents_timers(struct job *j, int64_t now);
int64_t agents_next_deadline(const struct job *j);
bool agents_gone(const struct job *j);
void agents_free(struct job *j);                    /* the agent table, at exit */
void agents_forward_signal(struct job *j, int sig); /* SIGUSR1/SIGUSR2 to their ranks */

/* agent.c */
int agent_main(int argc, char **argv); /* sdsmrun --agent ... */

#endif
