/*
 * hosts.c - which rank runs on which host: --hosts/--hostfile, placement
 * (--map-by), the remote shell (--rsh, --prefix) and -x.
 *
 * Ranks placed on this machine (its own name or "localhost") are forked by
 * spawn.c as always; every other host that has ranks gets one agent
 * (assign_agents), which agents.c starts and listens to.
 */
#define _GNU_SOURCE
#include "launcher.h"
#include "nodelist.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE  2
#define DEFAULT_RSH "ssh -o BatchMode=yes"

static int say_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int say_usage(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    launcher_say("%s", buf);
    fputs("Try 'sdsmrun --help' for more information.\n", stderr);
    return EXIT_USAGE;
}

/* Add slots on host name (a name given twice adds up, as with mpirun). */
static int add_host(struct job *j, const char *name, size_t len, long slots)
{
    for (int i = 0; i < j->nhosts; i++)
        if (strlen(j->hosts[i].name) == len && memcmp(j->hosts[i].name, name, len) == 0) {
            j->hosts[i].slots += (int)slots;
            return 0;
        }
    struct host *nh = realloc(j->hosts, ((size_t)j->nhosts + 1) * sizeof *nh);
    char *copy = strndup(name, len);
    if (!nh || !copy) {
        free(copy);
        if (nh)
            j->hosts = nh;
        launcher_say("out of memory for the host list");
        return -1;
    }
    j->hosts = nh;
    j->hosts[j->nhosts++] = (struct host){.name = copy, .slots = (int)slots};
    return 0;
}

static bool name_ok(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-._", s[i]))
            return false;
    return true;
}

bool hosts_parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > LAUNCHER_MAX_RANKS)
        return false;
    *out = v;
    return true;
}

/* "a:2,b,c:4" */
static int parse_hosts(struct job *j, const char *arg)
{
    const char *p = arg;
    for (;;) {
        const char *end = strchrnul(p, ',');
        const char *colon = memchr(p, ':', (size_t)(end - p));
        size_t nlen = (size_t)((colon ? colon : end) - p);
        long slots = 1;
        char num[16];
        if (colon) {
            size_t l = (size_t)(end - colon - 1);
            if (l >= sizeof num)
                l = sizeof num - 1;
            memcpy(num, colon + 1, l);
            num[l] = '\0';
        }
        if (!name_ok(p, nlen) || (colon && !hosts_parse_count(num, &slots)))
            return say_usage("--hosts '%s': expected host[:slots],... (slots 1 to %d)", arg,
                             LAUNCHER_MAX_RANKS);
        if (add_host(j, p, nlen, slots))
            return 1;
        if (!*end)
            return -1;
        p = end + 1;
    }
}

/* One line of a hostfile: "host [slots=N]", '#' starts a comment.  1 = bad. */
static int hostfile_line(struct job *j, char *line)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save, *name = strtok_r(line, " \t\r\n", &save);
    if (!name)
        return 0;
    long slots = 1;
    for (char *w; (w = strtok_r(NULL, " \t\r\n", &save));) {
        if (strncmp(w, "slots=", 6) != 0 || !hosts_parse_count(w + 6, &slots))
            return 1;
    }
    if (!name_ok(name, strlen(name)))
        return 1;
    return add_host(j, name, strlen(name), slots) ? -1 : 0;
}

static int parse_hostfile(struct job *j, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return say_usage("--hostfile: cannot open '%s': %m", path);
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = -1;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        int e = hostfile_line(j, line);
        if (e > 0) {
            rc = say_usage("%s:%d: expected 'host [slots=N]' (N from 1 to %d), '#' comments", path, lineno,
                           LAUNCHER_MAX_RANKS);
            break;
        }
        if (e < 0) {
            rc = 1;
            break;
        }
    }
    if (rc < 0 && ferror(f))
        rc = say_usage("--hostfile: cannot read '%s': %m", path);
    if (rc < 0 && j->nhosts == 0)
        rc = say_usage("--hostfile '%s' names no host", path);
    free(line);
    fclose(f);
    return rc;
}

/* -x NAME (its value here) or -x NAME=VALUE: for every rank on every host. */
static int parse_x(struct job *j, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (nlen == 0 || (!isalpha((unsigned char)arg[0]) && arg[0] != '_'))
        return say_usage("-x '%s': expected NAME or NAME=VALUE", arg);
    for (size_t i = 0; i < nlen; i++)
        if (!isalnum((unsigned char)arg[i]) && arg[i] != '_')
            return say_usage("-x '%s': expected NAME or NAME=VALUE", arg);
    char *entry;
    if (eq) {
        entry = strdup(arg);
    } else {
        const char *v = getenv(arg);
        if (!v)
            return say_usage("-x %s: %s is not set here", arg, arg);
        if (asprintf(&entry, "%s=%s", arg, v) < 0)
            entry = NULL;
    }
    char **nx = entry ? realloc(j->xenv, ((size_t)j->nxenv + 1) * sizeof *nx) : NULL;
    if (!nx) {
        free(entry);
        launcher_say("out of memory for -x");
        return 1;
    }
    j->xenv = nx;
    j->xenv[j->nxenv++] = entry;
    return -1;
}

/* -N N and --map-by ppr:N:node: N ranks on each host. */
static int parse_ppr(struct job *j, const char *opt, const char *num, size_t len)
{
    char buf[16];
    long v;
    if (len == 0 || len >= sizeof buf)
        return say_usage("%s: expected a number of ranks per host from 1 to %d", opt, LAUNCHER_MAX_RANKS);
    memcpy(buf, num, len);
    buf[len] = '\0';
    if (!hosts_parse_count(buf, &v))
        return say_usage("%s: '%s' is not a number of ranks per host from 1 to %d", opt, buf,
                         LAUNCHER_MAX_RANKS);
    j->ppr = (int)v;
    j->map_by_node = false;
    return -1;
}

static int map_by(struct job *j, const char *arg)
{
    size_t len = strlen(arg);
    if (strcmp(arg, "node") == 0) {
        j->map_by_node = true;
        j->ppr = 0;
    } else if (strcmp(arg, "slot") == 0) {
        j->map_by_node = false;
        j->ppr = 0;
    } else if (strncmp(arg, "ppr:", 4) == 0 && len > 9 && strcmp(arg + len - 5, ":node") == 0) {
        return parse_ppr(j, "--map-by ppr:N:node", arg + 4, len - 9);
    } else {
        return say_usage("--map-by '%s': expected slot, node or ppr:N:node", arg);
    }
    return -1;
}

int hosts_option(struct job *j, int c, const char *arg)
{
    switch (c) {
    case OPT_HOSTS: return parse_hosts(j, arg);
    case OPT_HOSTFILE: return parse_hostfile(j, arg);
    case OPT_MAP_BY: return map_by(j, arg);
    case 'N': return parse_ppr(j, "-N", arg, strlen(arg));
    case OPT_RSH:
        if (!*arg)
            return say_usage("--rsh must not be empty");
        j->rsh = arg;
        return -1;
    case OPT_PREFIX:
        if (!*arg)
            return say_usage("--prefix must not be empty");
        j->prefix = arg;
        return -1;
    case 'x': return parse_x(j, arg);
    default: return say_usage("internal: unknown host option %d", c);
    }
}

/* a is b, or b with its domain: "node1" and "node1.cluster". */
static bool same_or_short(const char *a, const char *b)
{
    size_t la = strlen(a);
    return strncmp(a, b, la) == 0 && (b[la] == '\0' || (b[la] == '.' && !strchr(a, '.')));
}

/* This machine by any name it goes by: Slurm's node names are often the
 * short one of a host whose own name has its domain, or the other way. */
static bool is_local(const char *name)
{
    char me[HOST_NAME_MAX + 1];
    if (strcmp(name, "localhost") == 0)
        return true;
    if (gethostname(me, sizeof me))
        return false;
    me[HOST_NAME_MAX] = '\0';
    return same_or_short(name, me) || same_or_short(me, name);
}

/* One agent per other host that has ranks. */
static int assign_agents(struct job *j)
{
    int *agent_of = malloc((size_t)j->nhosts * sizeof *agent_of);
    if (!agent_of)
        return -1;
    for (int h = 0; h < j->nhosts; h++)
        agent_of[h] = -1;
    for (int r = 0; r < j->n; r++) {
        int h = j->ranks[r].host;
        j->ranks[r].agent = -1;
        if (j->hosts[h].local)
            continue;
        if (agent_of[h] < 0)
            agent_of[h] = j->nagents++;
        j->ranks[r].agent = agent_of[h];
    }
    j->agents = calloc((size_t)j->nagents + 1, sizeof *j->agents);
    if (j->agents)
        for (int h = 0; h < j->nhosts; h++)
            if (agent_of[h] >= 0)
                j->agents[agent_of[h]] = (struct agent){.host = h, .in_w = -1, .out_r = -1};
    free(agent_of);
    return j->agents ? 0 : -1;
}

const char *slurm_nodelist(void)
{
    const char *v = getenv("SLURM_JOB_NODELIST");
    if (!v || !*v)
        v = getenv("SLURM_NODELIST");
    return v && *v ? v : NULL;
}

/* Slots of the allocation's hosts: tasks per node, else CPUs, else 1. */
static int slurm_slots(const struct job *j, int *counts, int n)
{
    static const char *const vars[] = {"SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE", NULL};
    char err[256];
    for (int i = 0; vars[i]; i++) {
        const char *spec = getenv(vars[i]);
        if (!spec || !*spec)
            continue;
        if (nodelist_counts(spec, counts, n, err, sizeof err) == 0) {
            launcher_verbose(j, "slots from %s=%s", vars[i], spec);
            return 0;
        }
        launcher_say("%s: %s; give --hosts instead", vars[i], err);
        return -1;
    }
    for (int h = 0; h < n; h++)
        counts[h] = 1;
    return 0;
}

/* Inside a Slurm allocation without --hosts: its nodes, as mpirun takes them. */
static int slurm_hosts(struct job *j)
{
    const char *list = slurm_nodelist();
    char err[256], **names = NULL;
    int n = nodelist_expand(list, &names, err, sizeof err), rc = -1;
    if (n < 0) {
        launcher_say("the Slurm host list '%s': %s; give --hosts instead", list, err);
        return EXIT_USAGE;
    }
    int *counts = calloc((size_t)n, sizeof *counts);
    if (!counts || slurm_slots(j, counts, n))
        rc = counts ? EXIT_USAGE : 1;
    for (int h = 0; h < n && rc < 0; h++)
        if (add_host(j, names[h], strlen(names[h]), counts[h]))
            rc = 1;
    if (rc < 0)
        launcher_verbose(j, "inside a Slurm allocation: the ranks go to its %d host(s), %s", n, list);
    free(counts);
    nodelist_free(names, n);
    j->host_source = "Slurm";
    return rc;
}

/* Hosts when none were given: the Slurm allocation's, or this machine. */
static int default_hosts(struct job *j)
{
    if (j->nhosts)
        return -1;
    if (slurm_nodelist())
        return slurm_hosts(j);
    char me[HOST_NAME_MAX + 1] = "localhost";
    if (gethostname(me, sizeof me) == 0)
        me[HOST_NAME_MAX] = '\0';
    return add_host(j, me, strlen(me), j->n ? j->n : j->ppr) ? 1 : -1;
}

/* How many ranks the hosts take (-N caps each); without -n that many run. */
static int capacity(struct job *j)
{
    long total = 0;
    for (int h = 0; h < j->nhosts; h++) {
        j->hosts[h].local = is_local(j->hosts[h].name);
        total += j->ppr ? j->ppr : j->hosts[h].slots;
    }
    if (!j->n && total > LAUNCHER_MAX_RANKS) {
        launcher_say("the hosts have %ld slots, more than %d ranks: give -n N", total, LAUNCHER_MAX_RANKS);
        return EXIT_USAGE;
    }
    if (!j->n)
        j->n = (int)total;
    if (total >= j->n)
        return -1;
    if (j->ppr)
        launcher_say("%d ranks do not fit %d per host on %d host(s); no rank was started", j->n, j->ppr,
                     j->nhosts);
    else
        launcher_say("%d ranks need %d slots, but the hosts have only %ld; no rank was started", j->n, j->n,
                     total);
    return EXIT_USAGE;
}

int hosts_place(struct job *j)
{
    int rc = default_hosts(j);
    if (rc >= 0 || (rc = capacity(j)) >= 0)
        return rc;
    j->ranks = calloc((size_t)j->n, sizeof *j->ranks);
    int *used = calloc((size_t)j->nhosts, sizeof *used);
    if (!j->ranks || !used) {
        free(used);
        launcher_say("out of memory for %d ranks", j->n);
        return 1;
    }
    int h = 0;
    for (int r = 0; r < j->n; r++) {
        /* Round-robin moves on after every rank, fill moves on when a host is full. */
        while (used[h] >= (j->ppr ? j->ppr : j->hosts[h].slots))
            h = (h + 1) % j->nhosts;
        j->ranks[r].host = h;
        j->ranks[r].cpu = -1;
        used[h]++;
        if (j->map_by_node)
            h = (h + 1) % j->nhosts;
    }
    free(used);
    apps_assign(j);
    if (assign_agents(j)) {
        launcher_say("out of memory for the agents");
        return 1;
    }
    if (!j->rsh)
        j->rsh = getenv("SDSM_RSH") && *getenv("SDSM_RSH") ? getenv("SDSM_RSH") : DEFAULT_RSH;
    return -1;
}

int hosts_setup_env(struct job *j)
{
    for (int i = 0; i < j->nxenv; i++) {
        char *eq = strchr(j->xenv[i], '=');
        *eq = '\0';
        int e = setenv(j->xenv[i], eq + 1, 1);
        *eq = '=';
        if (e) {
            launcher_say("-x: cannot set %s: %m", j->xenv[i]);
            return -1;
        }
    }
    return 0;
}

void hosts_free(struct job *j)
{
    for (int h = 0; h < j->nhosts; h++)
        free(j->hosts[h].name);
    free(j->hosts);
    j->hosts = NULL;
    j->nhosts = 0;
    for (int i = 0; i < j->nxenv; i++)
        free(j->xenv[i]);
    free(j->xenv);
    j->xenv = NULL;
    j->nxenv = 0;
}
