/*
 * options.c - sdsmrun's command line: the help texts (--help, --info,
 * the variables and exit statuses) and the parsing of the options into the
 * job (struct job, launcher.h).
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"
#include "core/config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdsm.h"

static const char usage_line[] =
    "Usage: sdsmrun -n N [--timeout S] [--stats] [--protocol NAME] [--verbose]\n"
    "               [--tag-output] [--output-filename DIR] [--hosts H[:S],... | --hostfile F]\n"
    "               [--map-by slot|node|ppr:N:node] [-N N] [--bind-to core|none]\n"
    "               [--report-bindings] [--display-map] [--rsh CMD] [--prefix DIR]\n"
    "               [-x NAME[=VALUE]]... [--threads T] [--aslr] [--trace DIR]\n"
    "               [--] program [args...] [: -n N program [args...]]...\n";

static const char vars_text[] =
    "Variables set in every rank's environment:\n"
    "  SDSM_RANK=R            the rank, 0..N-1\n"
    "  SDSM_NPROCS=N          the number of ranks\n"
    "  SDSM_RENDEZVOUS=IP:PORT  where sdsm_init reaches the launcher (127.0.0.1 when\n"
    "                         every rank is on this machine)\n"
    "  SDSM_JOB_KEY=HEX       64 hex digits, the job's secret: every connection of the\n"
    "                         job must prove it knows the key (never print it)\n"
    "  SDSM_STATS=1           with --stats (unless SDSM_STATS is set to all or json)\n"
    "  SDSM_PROTOCOL=NAME     with --protocol\n"
    "  SDSM_TRACE=DIR         with --trace\n"
    "  SDSM_HOST=NAME         the host the rank was placed on, as --hosts, --hostfile or\n"
    "                         the Slurm allocation name it (else this machine's name)\n"
    "\n"
    "Variables users commonly set themselves (passed to the ranks unchanged):\n"
    "  SDSM_STATS=0|1|all|json  1: rank 0 prints every rank's statistics at\n"
    "                         sdsm_finalize (a summary line per rank, then the counters\n"
    "                         that are not 0); all: zeros too; json: one JSON line\n"
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
    "  -n, --nprocs N       number of ranks, 1..4096; also -np N (required unless\n"
    "                       the hosts say it: without -n, as many ranks as the hosts\n"
    "                       of --hosts, --hostfile or the Slurm allocation have slots,\n"
    "                       or -N N per host)\n"
    "  -t, --timeout S      stop the job after S seconds (decimals allowed; 0: no limit)\n"
    "  -s, --stats          ask every rank for statistics at sdsm_finalize (SDSM_STATS=1)\n"
    "  -p, --protocol NAME  coherence protocol for every rank: hlrc, update, ibec\n"
    "                       (SDSM_PROTOCOL=NAME; see sdsm(7))\n"
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
    "  -H, --host, --hosts H[:S],...\n"
    "                       run ranks on these hosts, S slots each (default 1); a name\n"
    "                       given twice adds its slots.  This machine (its name, with\n"
    "                       or without its domain, or \"localhost\") runs its ranks\n"
    "                       itself; for every other host sdsmrun starts an agent:\n"
    "                       RSH HOST SDSMRUN --agent ..., which forks that host's\n"
    "                       ranks and passes back their output and exit statuses.\n"
    "                       Given several times, the lists add up.\n"
    "                       Inside a Slurm allocation (SLURM_JOB_NODELIST set) the\n"
    "                       default is the allocation's nodes, with its\n"
    "                       SLURM_TASKS_PER_NODE (else SLURM_JOB_CPUS_PER_NODE) as slots\n"
    "      --hostfile FILE  hosts from FILE: lines \"host [slots=N]\", '#' comments\n"
    "      --map-by slot|node|ppr:N:node\n"
    "                       slot (default): fill each host's slots in order; node:\n"
    "                       one rank per host in turn, skipping full hosts; ppr:N:node:\n"
    "                       N ranks on each host (in place of its slots), in order\n"
    "  -N N                 N ranks per host: --map-by ppr:N:node\n"
    "      --bind-to core|none  core: pin each rank to one CPU of its host (the i-th\n"
    "                       rank there to the i-th CPU sdsmrun or the agent may use,\n"
    "                       round again when there are more ranks); none (default):\n"
    "                       leave them to the scheduler\n"
    "      --report-bindings  print each rank's binding on stderr as it starts:\n"
    "                       \"[host:pid] rank R bound to CPU C: [./B/./.]\"\n"
    "      --display-map    print which rank runs on which host, and its program,\n"
    "                       on stderr before the job starts\n"
    "      --rsh CMD        remote shell command, split at spaces (default $SDSM_RSH, else\n"
    "                       \"ssh -o BatchMode=yes\"); it gets HOST then the agent's command\n"
    "                       line, quoted for the remote shell\n"
    "      --prefix DIR     the directory holding sdsmrun on the other hosts (default:\n"
    "                       the same path as here)\n"
    "  -x NAME[=VALUE]      give every rank on every host NAME (its value here, or VALUE);\n"
    "                       SDSM_* variables set here reach the other hosts by themselves\n"
    "      --info           say whether direct launch by mpirun or srun (PMIx, PMI-2)\n"
    "                       is built in, list the SDSM_* environment variables, exit\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the version and exit\n"
    "  --                   end of options: the next word is the program, and every\n"
    "                       word after it is an argument of it (':' too)\n"
    "Options stop at the first word that is not one, so the program's own options\n"
    "need no '--'.  A long option's whole name also takes one dash, as mpirun's\n"
    "do (-np 4, -host a,b); other words with one dash are short options, as\n"
    "always (-st 5 is -s -t 5).  An option of mpirun or srun that sdsmrun spells differently, or\n"
    "does not need, is named with sdsmrun's way (e.g. --machinefile: --hostfile).\n"
    "\n"
    "Several programs (MPMD, as mpirun): sdsmrun [options] -n 1 ./a : -n 3 ./b x\n"
    "runs rank 0 as ./a and ranks 1 to 3 as ./b x, one job of 4 ranks (every\n"
    "program uses sdsm).  Each ':' starts a program with its own -n; options\n"
    "before the first program are for all of them.\n"
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
    "forwarded there too, through its agent.  The job key reaches each\n"
    "agent on its standard input, never on a command line nor in the remote shell's\n"
    "environment; text the remote shell prints before the agent (a login banner)\n"
    "is skipped (shown with --verbose).  When the launcher or its\n"
    "connection goes away the agent stops its ranks.  A host whose remote shell or\n"
    "agent fails (unknown host, program missing there) fails the job naming the\n"
    "host.  With --output-filename, the files of ranks on other hosts are written\n"
    "here, on this machine, from the output their agents pass back.  sdsmrun and\n"
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
    "SIGTERM goes at once.  SIGUSR1 and SIGUSR2 are passed on to every rank (the\n"
    "processes sdsmrun or an agent started, not their children), and the job goes\n"
    "on.  When --timeout expires it first asks the\n"
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
    "           (137, SIGKILL: the message says whether the out-of-memory killer did it)\n"
    "           (147, SIGSTOP, for a rank under a wrapper stopped by any signal)\n"
    "  124      the --timeout expired\n"
    "  127      the program could not be executed\n"
    "  129, 130, 143  sdsmrun received SIGHUP, SIGINT or SIGTERM\n"
    "  2        bad command line, or an invalid SDSM_* variable (no rank is started)\n";

int options_usage_error(const char *fmt, ...)
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
        return options_usage_error("invalid number of ranks '%s': expected 1 to %d", s, LAUNCHER_MAX_RANKS);
    j->n = (int)v;
    return -1;
}

static int parse_timeout(struct job *j, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > MAX_TIMEOUT_S)
        return options_usage_error("invalid timeout '%s': expected seconds from 0 to %.0f", s, MAX_TIMEOUT_S);
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
        return options_usage_error("--trace: the directory must not be empty");
    if (mkdir(dir, 0777) && errno != EEXIST)
        return options_usage_error("--trace: cannot create the directory '%s': %s", dir, strerror(errno));
    if (!realpath(dir, abs))
        return options_usage_error("--trace: '%s': %s", dir, strerror(errno));
    if (setenv("SDSM_TRACE", abs, 1))
        return options_usage_error("--trace: cannot set SDSM_TRACE");
    return -1;
}

static int protocol_option(struct job *j, const char *name)
{
    for (int i = 0; i < SDSM_PROTO_COUNT; i++)
        if (strcmp(name, sdsm_proto_names[i]) == 0) {
            j->protocol = name;
            return -1;
        }
    return options_usage_error("unknown protocol '%s': expected one of %s", name, proto_list());
}

static int threads_option(const char *arg)
{
    char *end;
    long t = strtol(arg, &end, 10);
    if (end == arg || *end || t < 1 || t > 4096)
        return options_usage_error("--threads: '%s' is not a number of threads in [1, 4096]", arg);
    if (setenv("SDSM_THREADS", arg, 1))
        return options_usage_error("--threads: cannot set SDSM_THREADS");
    return -1;
}

/* What --info says first: how sdsm_init can start without sdsmrun. */
static const char direct_launch_text[] =
    "Direct launch (mpirun or srun starts the ranks, without sdsmrun):\n"
#ifdef SDSM_HAVE_PMIX
    "  PMIx:  yes (srun --mpi=pmix, Open MPI's mpirun)\n"
#else
    "  PMIx:  no (built without it: the build found no PMIx, pkg-config pmix, or\n"
    "         had -DSDSM_PMIX=OFF; install libpmix-dev and rebuild to have it)\n"
#endif
    "  PMI-2: yes (srun --mpi=pmi2, MPICH's and Intel MPI's mpiexec with PMI-2)\n"
    "\n";

/* --info: direct launch, then every SDSM_* variable, with its value here. */
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
    fputs(direct_launch_text, stdout);
    printf("Every SDSM_* variable the runtime reads (value here: %s):\n",
           bad ? "defaults; the environment has an invalid one" : "from this environment");
    sdsm_config_print(&cfg, stdout);
    return print_texts(info);
}

static const struct option own_longopts[] = {{"nprocs", required_argument, NULL, 'n'},
                                             {"np", required_argument, NULL, 'n'},
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
                                             {"host", required_argument, NULL, OPT_HOSTS},
                                             {"hostfile", required_argument, NULL, OPT_HOSTFILE},
                                             {"map-by", required_argument, NULL, OPT_MAP_BY},
                                             {"rsh", required_argument, NULL, OPT_RSH},
                                             {"prefix", required_argument, NULL, OPT_PREFIX},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"aslr", no_argument, NULL, OPT_ASLR},
                                             {"trace", required_argument, NULL, OPT_TRACE},
                                             {"bind-to", required_argument, NULL, OPT_BIND_TO},
                                             {"report-bindings", no_argument, NULL, OPT_REPORT_BINDINGS},
                                             {"display-map", no_argument, NULL, OPT_DISPLAY_MAP},
                                             {NULL, 0, NULL, 0}};

static struct {
    int at;            /* the word's index in argv, 0 = none */
    const char *typed; /* as the user typed it, for messages */
} respelled;

/* --hosts and -H add up, as mpirun's --host does; a hostfile comes alone. */
static int hosts_given(struct job *j, int c, const char *arg)
{
    const char *source = c == OPT_HOSTFILE ? "--hostfile" : "--hosts";
    if (j->host_source && (c == OPT_HOSTFILE || strcmp(j->host_source, source) != 0))
        return options_usage_error("give --hosts (-H) or --hostfile, not both, and --hostfile once");
    j->host_source = source;
    return hosts_option(j, c, arg);
}

/* An unknown option (or a foreign one, OPT_FOREIGN): its word and a hint. */
static int unknown_option(char **argv)
{
    char word[4] = {'-', (char)optopt, '\0', '\0'};
    if (optopt)
        return foreign_unknown(word, own_longopts);
    return foreign_unknown(argv[optind - 1], own_longopts);
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
            return options_usage_error("the output directory must not be empty");
        j->output_dir = optarg;
        return -1;
    case 'p': return protocol_option(j, optarg);
    case OPT_THREADS: return threads_option(optarg);
    case OPT_ASLR:
        if (setenv("SDSM_ASLR", "1", 1))
            return options_usage_error("--aslr: cannot set SDSM_ASLR");
        return -1;
    case OPT_TRACE: return trace_option(optarg);
    case 'h': return print_texts(help);
    case 'H':
    case OPT_HOSTS:
    case OPT_HOSTFILE: return hosts_given(j, c == OPT_HOSTFILE ? c : OPT_HOSTS, optarg);
    case 'N':
    case OPT_MAP_BY:
    case OPT_RSH:
    case OPT_PREFIX:
    case 'x': return hosts_option(j, c, optarg);
    case 'I': return print_info();
    case 'V':
        snprintf(version, sizeof version, "sdsmrun (sdsm) %d.%d.%d\n", SDSM_VERSION_MAJOR, SDSM_VERSION_MINOR,
                 SDSM_VERSION_PATCH);
        return print_texts(vers);
    case OPT_BIND_TO:
    case OPT_REPORT_BINDINGS:
    case OPT_DISPLAY_MAP: return bind_option(j, c, optarg);
    case OPT_FOREIGN:
        return foreign_unknown(respelled.at == optind - 1 ? respelled.typed : argv[optind - 1], own_longopts);
    case ':': return options_usage_error("option '%s' needs a value", argv[optind - 1]);
    default: return unknown_option(argv);
    }
}

/* The program words after the options: "--" makes them one program, ':'
 * words included; without it ':' separates the groups of MPMD. */
static int program_words(struct job *j, int argc, char **argv)
{
    bool dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
    if (optind >= argc)
        return options_usage_error("missing the program to run");
    return apps_parse(j, argv + optind, argc - optind, dashdash);
}

/*
 * mpirun's long options take one dash (-np 4, -host a,b): the next word,
 * when it is one of getopt's long names spelled out in full, gets its
 * second dash.  Anything else with one dash stays short options ("-st 5"
 * is -s -t 5), as it always was.
 */
static void one_dash_long(int argc, char **argv, const struct option *longopts)
{
    static char spelled[16][512];
    static int used;
    if (optind >= argc || argv[optind][0] != '-' || argv[optind][1] == '-' || used == 16)
        return;
    const char *w = argv[optind];
    size_t len = strcspn(w + 1, "=");
    if (len < 2 || strlen(w) + 2 > sizeof spelled[0])
        return;
    for (const struct option *o = longopts; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, w + 1, len) == 0) {
            snprintf(spelled[used], sizeof spelled[0], "-%s", w);
            respelled.at = optind;
            respelled.typed = w;
            argv[optind] = spelled[used++];
            return;
        }
}

/* Returns -1 to run the job, else the exit status. */
int options_parse(struct job *j, int argc, char **argv)
{
    const struct option *longopts = foreign_longopts(own_longopts);
    int c;
    opterr = 0;
    /* '+': the program's own options are not ours; ':': report missing values ourselves. */
    for (;;) {
        one_dash_long(argc, argv, longopts);
        if ((c = getopt_long(argc, argv, "+:n:t:sp:vhVx:H:N:", longopts, NULL)) == -1)
            break;
        int rc = option(j, c, argv);
        if (rc >= 0)
            return rc;
    }
    int rc = program_words(j, argc, argv);
    if (rc >= 0)
        return rc;
    if (!j->n && !j->ppr && !j->nhosts && !slurm_nodelist())
        return options_usage_error("missing -n N, the number of ranks");
    return -1;
}
