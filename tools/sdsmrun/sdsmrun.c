/*
 * sdsmrun.c - the job launcher: `sdsmrun -n N prog args...` starts N ranks
 * of prog on this machine, introduces them to each other through a private,
 * key-authenticated rendezvous socket, and watches them: the first rank that
 * fails (or a signal, or --timeout) stops the whole job, and nothing of the
 * job outlives the launcher.
 *
 * This file holds the options, the event loop and the steps of the stop
 * (SIGTERM after the grace, SIGKILL after that); ctrl.c speaks to the ranks'
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
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sdsm.h"

#define EXIT_USAGE    2
#define EXIT_TIMEOUT  124
#define EXIT_NOEXEC   127
#define MAX_TIMEOUT_S 31536000.0 /* a year: keeps the deadline arithmetic far from overflow */

static const char usage_line[] =
    "Usage: sdsmrun -n N [--timeout S] [--stats] [--protocol NAME] [--verbose]\n"
    "               [--tag-output] [--output-filename DIR] [--hosts H[:S],... | --hostfile F]\n"
    "               [--map-by slot|node] [--rsh CMD] [--prefix DIR] [-x NAME[=VALUE]]...\n"
    "               [--threads T] [--aslr] [--trace DIR]\n"
    "               [--] program [args...]\n";

static const char vars_text[] =
    "Variables set in every rank's environment:\n"
    "  SDSM_RANK=R            the rank, 0..N-1\n"
    "  SDSM_NPROCS=N          the number of ranks\n"
    "  SDSM_RENDEZVOUS=IP:PORT  where sdsm_init reaches the launcher (127.0.0.1 when\n"
    "                         every rank is on this machine)\n"
    "  SDSM_JOB_KEY=HEX       64 hex digits, the job's secret: every connection of the\n"
    "                         job must prove it knows the key (never print it)\n"
    "  SDSM_STATS=1           with --stats\n"
    "  SDSM_PROTOCOL=NAME     with --protocol\n"
    "  SDSM_TRACE=DIR         with --trace\n"
    "  SDSM_HOST=NAME         the host the rank was placed on, as --hosts/--hostfile name\n"
    "                         it (without them: this machine's name)\n"
    "\n"
    "Variables users commonly set themselves (passed to the ranks unchanged):\n"
    "  SDSM_STATS=0|1         1: rank 0 prints every rank's statistics at sdsm_finalize\n"
    "  SDSM_ERRORS=abort|return  abort (default): a failing sdsm call prints the error\n"
    "                         and stops the whole job; return: the call returns a\n"
    "                         negative SDSM_E* code to the program\n"
    "  SDSM_PROTOCOL=NAME     coherence protocol: hlrc (default), update, ibec\n"
    "  SDSM_HEAP_SIZE=SIZE    shared address space reserved per rank, e.g. 1G\n"
    "                         (default 64G; memory is used only when touched)\n"
    "  SDSM_PAGE_SIZE=SIZE    coherence unit, a power of two >= 4096 (default 4096)\n"
    "  SDSM_LOG=LEVEL         runtime log level: error, warn (default), info, debug\n"
    "  SDSM_TIMEOUT=S         seconds sdsm_init waits for the job to assemble (default 30);\n"
    "                         also how long sdsmrun waits for each host's agent to start\n"
    "  SDSM_RSH=CMD           remote shell for --hosts/--hostfile (default: ssh -o BatchMode=yes)\n"
    "  SDSM_HANG_REPORT=S     after a call has waited S seconds, rank 0 prints what every\n"
    "                         rank is waiting for, once per period (default 60; 0: never)\n";

static const char help_text[] =
    "\n"
    "Run an sdsm job: start N ranks of program on this machine, let them find each\n"
    "other through a private rendezvous, and stop the whole job when any rank fails.\n"
    "\n"
    "Options:\n"
    "  -n, --nprocs N       number of ranks, 1..4096 (required)\n"
    "  -t, --timeout S      stop the job after S seconds (decimals allowed; 0: no limit)\n"
    "  -s, --stats          ask every rank for statistics at sdsm_finalize (SDSM_STATS=1)\n"
    "  -p, --protocol NAME  coherence protocol for every rank: hlrc, update, ibec\n"
    "                       (SDSM_PROTOCOL=NAME; see README)\n"
    "      --threads T      compute threads per rank (sets SDSM_THREADS for every rank;\n"
    "                       see sdsm_thread_create)\n"
    "      --aslr           keep address randomization for the ranks (SDSM_ASLR=1; by\n"
    "                       default ranks start with it off, so a program's globals,\n"
    "                       functions and libraries have the same addresses in every rank)\n"
    "      --trace DIR      every rank writes its timeline to DIR/rank-R.sdsmtrace\n"
    "                       (DIR is created; sets SDSM_TRACE to its absolute path);\n"
    "                       sdsm-report DIR merges them into DIR/trace.json (Perfetto),\n"
    "                       a text profile and figures\n"
    "  -v, --verbose        report each rank's pid, registration and exit, with times\n"
    "      --tag-output     start each line a rank prints with \"[rank] \"\n"
    "      --output-filename DIR\n"
    "                       write rank R's stdout and stderr to the files\n"
    "                       DIR/rank.R/stdout and DIR/rank.R/stderr (created or\n"
    "                       truncated; no tags) instead of sdsmrun's\n"
    "      --hosts H[:S],...  run ranks on these hosts, S slots each (default 1); a name\n"
    "                       given twice adds its slots.  This machine (its name or\n"
    "                       \"localhost\") runs its ranks itself; for every other host\n"
    "                       sdsmrun starts an agent: RSH HOST SDSMRUN --agent ..., which\n"
    "                       forks that host's ranks and passes back their output and\n"
    "                       exit statuses\n"
    "      --hostfile FILE  hosts from FILE: lines \"host [slots=N]\", '#' comments\n"
    "      --map-by slot|node  slot (default): fill each host's slots in order; node:\n"
    "                       one rank per host in turn, skipping full hosts\n"
    "      --rsh CMD        remote shell command, split at spaces (default $SDSM_RSH, else\n"
    "                       \"ssh -o BatchMode=yes\"); it gets HOST then the agent's command\n"
    "                       line, quoted for the remote shell\n"
    "      --prefix DIR     the directory holding sdsmrun on the other hosts (default:\n"
    "                       the same path as here)\n"
    "  -x NAME[=VALUE]      give every rank on every host NAME (its value here, or VALUE);\n"
    "                       SDSM_* variables set here reach the other hosts by themselves\n"
    "      --info           list the SDSM_* environment variables and exit\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the version and exit\n"
    "  --                   end of options: the next word is the program\n"
    "Options stop at the first word that is not one, so the program's own options\n"
    "need no '--'.\n"
    "\n"
    "Standard input goes to rank 0 only (through sdsmrun, so a terminal works too);\n"
    "the other ranks read /dev/null.  The ranks' output and errors reach sdsmrun's\n"
    "stdout and stderr line by line, so lines of different ranks never mix: only a\n"
    "line longer than 1 MiB is passed on in pieces.  Without --tag-output each\n"
    "rank's bytes arrive exactly as written (binary output too; an unfinished\n"
    "last line stays unfinished); with it, an unfinished line is ended by a\n"
    "newline when another tagged line has to follow it.  Ranks write to pipes, so\n"
    "C stdio buffers their stdout: fflush(stdout) or setvbuf(stdout, NULL,\n"
    "_IOLBF, 0) shows output at once.  Everything a rank wrote is passed on, even\n"
    "when it dies.  sdsmrun fails (status 1, or the job's own) when it cannot\n"
    "write its stdout or stderr (a full disk, a closed descriptor); a reader that\n"
    "quits (| head) is not an error.  The ranks run in a process group of their\n"
    "own; whatever they start is ended with the job, on every host.\n"
    "\n"
    "On other hosts: the program must be at the same path (or on the PATH there),\n"
    "the job runs in the same working directory, and rank 0's standard input is\n"
    "forwarded only when rank 0 runs on this machine.  The job key reaches each\n"
    "agent on its standard input, never on a command line nor in the remote shell's\n"
    "environment; text the remote shell prints before the agent (a login banner)\n"
    "is skipped (shown with --verbose).  When the launcher or its\n"
    "connection goes away the agent stops its ranks.  A host whose remote shell or\n"
    "agent fails (unknown host, program missing there) fails the job naming the\n"
    "host; --output-filename works only for ranks on this machine.  sdsmrun and\n"
    "each agent exchange heartbeats (SDSM_HEARTBEAT): an agent silent for\n"
    "SDSM_PEER_TIMEOUT (stopped, hung, host cut off) fails the job naming its\n"
    "host, and an agent that hears nothing from sdsmrun as long stops its ranks.\n"
    "\n"
    "Addresses: a job on this machine alone uses loopback only.  With other hosts,\n"
    "sdsmrun listens on this machine's interface addresses (those SDSM_IFACE names,\n"
    "if set) and each agent picks the one its host reaches (same network first,\n"
    "then any with a route); every rank listens for its peers only on the address\n"
    "its link to sdsmrun leaves from, or on SDSM_IFACE's, which is passed to every\n"
    "host: SDSM_IFACE=eth1 or SDSM_IFACE=10.1.0.0/16 (names or networks, comma-\n"
    "separated).  Ranks placed on this machine in such a job use its first\n"
    "address: set SDSM_IFACE when it has several networks.\n"
    "\n"
    "A rank fails when it exits non-zero, is killed or stopped by a signal (also\n"
    "when started through a wrapper such as a shell script: the process that called\n"
    "sdsm_init is watched), calls sdsm_abort, exits without sdsm_finalize after\n"
    "sdsm_init, exits while the others are still in sdsm_init, or stops responding\n"
    "(the other ranks heard nothing from it for SDSM_PEER_TIMEOUT).  Then the\n"
    "other ranks have 0.5 s to end by themselves (a rank that is exiting flushes\n"
    "its output); sdsmrun then sends SIGTERM to all that are left, SIGKILL 2 s\n"
    "later, and exits.  On SIGINT/SIGTERM/SIGHUP, or when --timeout expires, the\n"
    "SIGTERM goes at once.  When --timeout expires it first asks the\n"
    "ranks what they are waiting for (call, lock, collective, page) and prints their\n"
    "answers (0.7 s at most).  A program that never calls sdsm_init runs like any\n"
    "program: the job succeeds when all ranks exit 0.\n"
    "\n";

static const char status_text[] =
    "\n"
    "Exit status (of the first failure only):\n"
    "  0        every rank exited with status 0\n"
    "  S        a rank exited with status S, or aborted with code S (1 for code 0);\n"
    "           1 also when a rank exited without sdsm_finalize, broke the control\n"
    "           protocol, stopped responding, or the launcher could not start the\n"
    "           job, and when a host's agent failed or fell silent\n"
    "  128+SIG  a rank was killed (or stopped) by signal SIG, e.g. 139 for SIGSEGV\n"
    "           (147, SIGSTOP, for a rank under a wrapper stopped by any signal)\n"
    "  124      the --timeout expired\n"
    "  127      the program could not be executed\n"
    "  129, 130, 143  sdsmrun received SIGHUP, SIGINT or SIGTERM\n"
    "  2        bad command line, or an invalid SDSM_* variable (no rank is started)\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    launcher_vsay("sdsmrun: ", fmt, ap);
    va_end(ap);
    fputs(usage_line, stderr);
    fputs("Try 'sdsmrun --help' for more information.\n", stderr);
    return EXIT_USAGE;
}

static int parse_nprocs(struct job *j, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 1 || v > LAUNCHER_MAX_RANKS)
        return usage_error("invalid number of ranks '%s': expected 1 to %d", s, LAUNCHER_MAX_RANKS);
    j->n = (int)v;
    return -1;
}

static int parse_timeout(struct job *j, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > MAX_TIMEOUT_S)
        return usage_error("invalid timeout '%s': expected seconds from 0 to %.0f", s, MAX_TIMEOUT_S);
    j->timeout_s = v;
    return -1;
}

/* Exit status for --help and friends: 0 unless stdout could not take it. */
static int print_texts(const char *const *texts)
{
    for (; *texts; texts++)
        fputs(*texts, stdout);
    return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

static const char *proto_list(void)
{
    static char list[64];
    size_t used = 0;
    for (int i = 0; i < SDSM_PROTO_COUNT && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", sdsm_proto_names[i]);
    return list;
}

/* --trace DIR: made here, and absolute, so every rank (on any host, in the
 * same working directory) writes to the same place. */
static int trace_option(const char *dir)
{
    char abs[PATH_MAX];
    if (!*dir)
        return usage_error("--trace: the directory must not be empty");
    if (mkdir(dir, 0777) && errno != EEXIST)
        return usage_error("--trace: cannot create the directory '%s': %s", dir, strerror(errno));
    if (!realpath(dir, abs))
        return usage_error("--trace: '%s': %s", dir, strerror(errno));
    if (setenv("SDSM_TRACE", abs, 1))
        return usage_error("--trace: cannot set SDSM_TRACE");
    return -1;
}

static int protocol_option(struct job *j, const char *name)
{
    for (int i = 0; i < SDSM_PROTO_COUNT; i++)
        if (strcmp(name, sdsm_proto_names[i]) == 0) {
            j->protocol = name;
            return -1;
        }
    return usage_error("unknown protocol '%s': expected one of %s", name, proto_list());
}

static int threads_option(const char *arg)
{
    char *end;
    long t = strtol(arg, &end, 10);
    if (end == arg || *end || t < 1 || t > 4096)
        return usage_error("--threads: '%s' is not a number of threads in [1, 4096]", arg);
    if (setenv("SDSM_THREADS", arg, 1))
        return usage_error("--threads: cannot set SDSM_THREADS");
    return -1;
}

/* --info: every SDSM_* variable, with its value here. */
static int print_info(void)
{
    static const char *const info[] = {"\n", vars_text, NULL};
    /* The runtime's own table, so this list can never drift from it. */
    sdsm_config_t cfg;
    char err[256];
    extern char **environ;
    int bad = sdsm_config_load(&cfg, environ, err, sizeof err, NULL);
    if (bad)
        sdsm_config_load(&cfg, NULL, err, sizeof err, NULL);
    printf("Every SDSM_* variable the runtime reads (value here: %s):\n",
           bad ? "defaults; the environment has an invalid one" : "from this environment");
    sdsm_config_print(&cfg, stdout);
    return print_texts(info);
}

/* One option; returns -1 to go on or the exit status. */
static int option(struct job *j, int c, char **argv)
{
    static char version[64];
    static const char *const help[] = {usage_line, help_text, vars_text, status_text, NULL};
    static const char *const vers[] = {version, NULL};
    switch (c) {
    case 'n': return parse_nprocs(j, optarg);
    case 't': return parse_timeout(j, optarg);
    case 's': j->stats = true; return -1;
    case 'v': j->verbose = true; return -1;
    case 'T': j->tag_output = true; return -1;
    case 'O':
        if (!*optarg)
            return usage_error("the output directory must not be empty");
        j->output_dir = optarg;
        return -1;
    case 'p': return protocol_option(j, optarg);
    case OPT_THREADS: return threads_option(optarg);
    case OPT_ASLR:
        if (setenv("SDSM_ASLR", "1", 1))
            return usage_error("--aslr: cannot set SDSM_ASLR");
        return -1;
    case OPT_TRACE: return trace_option(optarg);
    case 'h': return print_texts(help);
    case OPT_HOSTS:
    case OPT_HOSTFILE:
        if (j->nhosts)
            return usage_error("give --hosts or --hostfile once");
        return hosts_option(j, c, optarg);
    case OPT_MAP_BY:
    case OPT_RSH:
    case OPT_PREFIX:
    case 'x': return hosts_option(j, c, optarg);
    case 'I': return print_info();
    case 'V':
        snprintf(version, sizeof version, "sdsmrun (sdsm) %d.%d.%d\n", SDSM_VERSION_MAJOR, SDSM_VERSION_MINOR,
                 SDSM_VERSION_PATCH);
        return print_texts(vers);
    case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
    default:
        if (optopt)
            return usage_error("unknown option '-%c'", optopt);
        return usage_error("unknown option '%s'", argv[optind - 1]);
    }
}

/* Returns -1 to run the job, else the exit status. */
static int parse_args(struct job *j, int argc, char **argv)
{
    static const struct option longopts[] = {{"nprocs", required_argument, NULL, 'n'},
                                             {"timeout", required_argument, NULL, 't'},
                                             {"stats", no_argument, NULL, 's'},
                                             {"protocol", required_argument, NULL, 'p'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"info", no_argument, NULL, 'I'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             /* long only: 'T' and 'O' are not in the short option string */
                                             {"tag-output", no_argument, NULL, 'T'},
                                             {"output-filename", required_argument, NULL, 'O'},
                                             {"hosts", required_argument, NULL, OPT_HOSTS},
                                             {"hostfile", required_argument, NULL, OPT_HOSTFILE},
                                             {"map-by", required_argument, NULL, OPT_MAP_BY},
                                             {"rsh", required_argument, NULL, OPT_RSH},
                                             {"prefix", required_argument, NULL, OPT_PREFIX},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"aslr", no_argument, NULL, OPT_ASLR},
                                             {"trace", required_argument, NULL, OPT_TRACE},
                                             {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    /* '+': the program's own options are not ours; ':': report missing values ourselves. */
    while ((c = getopt_long(argc, argv, "+:n:t:sp:vhVx:", longopts, NULL)) != -1) {
        int rc = option(j, c, argv);
        if (rc >= 0)
            return rc;
    }
    if (!j->n)
        return usage_error("missing -n N, the number of ranks");
    if (optind >= argc)
        return usage_error("missing the program to run");
    j->argv = argv + optind;
    return -1;
}

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
        return -1;
    }
    launcher_say("%s; no rank was started (see sdsmrun --info)", err);
    return EXIT_USAGE;
}

/* The job key is not among these: it goes into each rank's environment in
 * the rank's child (spawn_child_env), so the remote shells (and whatever an
 * ssh_config's SendEnv would pass on) never see it; a key inherited from an
 * enclosing job is not passed on either. */
static int setup_env(struct job *j)
{
    char num[16];
    snprintf(num, sizeof num, "%d", j->n);
    if (setenv("SDSM_NPROCS", num, 1) || setenv("SDSM_RENDEZVOUS", j->rdv_local, 1) ||
        unsetenv("SDSM_JOB_KEY") || (j->stats && setenv("SDSM_STATS", "1", 1)) ||
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
    int e = sdsm_auth_key_generate(j->keyhex);
    if (e) {
        errno = -e;
        launcher_say("cannot generate the job key: %m");
        return -1;
    }
    sdsm_auth_key_parse(j->keyhex, j->key);
    if (setup_nofile(j) || iofwd_init(j) || ctrl_listen(j) || setup_env(j) || setup_signals(j))
        return -1;
    if (j->timeout_s > 0)
        j->deadline = j->t0 + (int64_t)(j->timeout_s * 1e6);
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
    int rc = parse_args(&job, argc, argv);
    if (rc >= 0 || (rc = hosts_place(&job)) >= 0)
        goto out;
    if (job.output_dir && !job_all_local(&job)) {
        rc = usage_error("--output-filename works only for ranks on this machine");
        goto out;
    }
    /* Before the checks below: -x may set SDSM_* (checked) or PATH (where the program is). */
    rc = 1;
    if (hosts_setup_env(&job))
        goto out;
    /* Another host checks for itself (its agent names it when the program is missing). */
    int e = job_any_local(&job) ? proc_check_program(job.argv[0]) : 0;
    if (e) {
        errno = e;
        launcher_say("cannot run '%s': %m", job.argv[0]);
        rc = EXIT_NOEXEC;
        goto out;
    }
    if ((rc = check_config(&job)) >= 0)
        goto out;
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
    return rc;
}
