/*
 * bind.c - mpirun's --bind-to core, --report-bindings and --display-map.
 *
 * Binding is per host: whoever forks a host's ranks (sdsmrun for this
 * machine, the agent for another) pins the i-th of them to the i-th CPU it
 * may use itself, wrapping around when there are more ranks than CPUs (said
 * once: those ranks then share).  The child pins itself before exec, so
 * the program never runs a moment elsewhere.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#include "launcher.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int bind_option(struct job *j, int c, const char *arg)
{
    switch (c) {
    case OPT_BIND_TO:
        if (strcmp(arg, "core") == 0)
            j->bind_core = true;
        else if (strcmp(arg, "none") == 0)
            j->bind_core = false;
        else
            return options_usage_error("--bind-to '%s': expected core or none", arg);
        return -1;
    case OPT_REPORT_BINDINGS: j->report_bindings = true; return -1;
    default: j->display_map = true; return -1;
    }
}

/* The CPUs this process may run on, in order; how many (0 if unknown). */
static int allowed_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set))
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

/* The CPU of the i-th rank forked on this host (-1: none, or unknown). */
int bind_cpu(int i, bool *shared)
{
    static int cpus[CPU_SETSIZE], n = -1;
    if (n < 0)
        n = allowed_cpus(cpus, CPU_SETSIZE);
    if (n == 0)
        return -1;
    if (i >= n)
        *shared = true;
    return cpus[i % n];
}

/* In a rank's child before exec. */
void bind_child(int cpu)
{
    cpu_set_t set;
    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set))
        launcher_say("--bind-to core: cannot bind to CPU %d: %m", cpu);
}

/* "[host:pid] rank R bound to CPU 2: [./././B]" over the CPUs allowed here,
 * as mpirun's report draws a socket. */
void bind_report(const char *host, pid_t pid, int rank, int cpu)
{
    int cpus[CPU_SETSIZE], n = allowed_cpus(cpus, CPU_SETSIZE);
    char map[2 * 256 + 8];
    size_t o = 0;
    map[0] = '\0';
    for (int i = 0; i < n && o + 8 < sizeof map; i++)
        o += (size_t)snprintf(map + o, sizeof map - o, "%s%c", i ? "/" : "",
                              cpus[i] == cpu || cpu < 0 ? 'B' : '.');
    if (o + 8 >= sizeof map)
        snprintf(map + o, sizeof map - o, "/...");
    char prefix[300];
    snprintf(prefix, sizeof prefix, "[%s:%d] ", host, (int)pid);
    if (cpu < 0)
        launcher_say_prefixed(prefix, "rank %d is not bound (runs on any of its %d CPUs): [%s]", rank, n,
                              map);
    else
        launcher_say_prefixed(prefix, "rank %d bound to CPU %d: [%s]", rank, cpu, map);
}

/* --display-map: each host, how it is reached, its ranks and their programs. */
void bind_display_map(const struct job *j)
{
    launcher_say("job map: %d rank(s) on %d host(s)%s", j->n, j->nhosts,
                 j->host_source ? "" : " (this machine)");
    for (int h = 0; h < j->nhosts; h++) {
        int count = 0;
        for (int r = 0; r < j->n; r++)
            count += j->ranks[r].host == h;
        if (!count)
            continue;
        launcher_say_prefixed("  ", "host %s: %d rank(s), %d slot(s), %s", j->hosts[h].name, count,
                              j->hosts[h].slots, j->hosts[h].local ? "this machine" : "through an agent");
        for (int r = 0; r < j->n; r++) {
            char **argv = j->apps[j->ranks[r].app].argv;
            if (j->ranks[r].host == h)
                launcher_say_prefixed("    ", "rank %d: %s%s", r, argv[0], argv[1] ? " ..." : "");
        }
    }
}
