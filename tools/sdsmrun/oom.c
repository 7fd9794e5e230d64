/*
 * oom.c - was a rank that died of SIGKILL ended by the out-of-memory
 * killer?  The kernel counts its kills: per memory cgroup (cgroup v2's
 * memory.events, v1's memory.oom_control: "oom_kill N") and for the whole
 * machine (/proc/vmstat).  The launcher's counts are read when the job
 * starts; its ranks are in its cgroup or below it (v2's count includes
 * those below), so a count that has grown by the time a rank died of
 * SIGKILL names the killer.  dmesg would say more, but is often not
 * readable by users.
 *
 * A bottom-layer part like proc.c: it calls no other part of sdsmrun.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static struct {
    char cgroup[PATH_MAX]; /* the counting file of our memory cgroup, "" if none */
    const char *name;      /* the cgroup's path as /proc/self/cgroup names it */
    long long cg0, vm0;    /* the counts at the start; -1: unknown */
    char line[512];
} oom_state = {.cg0 = -1, .vm0 = -1};

/* The number after "oom_kill " in file; -1 when there is none. */
static long long read_count(const char *file)
{
    FILE *f = fopen(file, "re");
    char line[256];
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "oom_kill %lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* Our memory cgroup's counting file: v1's memory controller, else v2's. */
static void find_cgroup(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char *line = oom_state.line, v1[PATH_MAX] = "", v2[PATH_MAX] = "";
    while (f && fgets(line, sizeof oom_state.line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        ctl++;
        if (!*ctl)
            snprintf(v2, sizeof v2, "%s", path);
        else if (strcmp(ctl, "memory") == 0 || strstr(ctl, "memory,") || strstr(ctl, ",memory"))
            snprintf(v1, sizeof v1, "%s", path);
    }
    if (f)
        fclose(f);
    const char *path = *v1 ? v1 : v2;
    snprintf(oom_state.cgroup, sizeof oom_state.cgroup,
             *v1 ? "/sys/fs/cgroup/memory%s/memory.oom_control" : "/sys/fs/cgroup%s/memory.events",
             strcmp(path, "/") == 0 ? "" : path);
    /* (path came from a line of oom_state.line's size: it fits) */
    snprintf(oom_state.line, sizeof oom_state.line, "%.*s", (int)sizeof oom_state.line - 1, path);
    oom_state.name = oom_state.line;
}

void oom_watch_start(void)
{
    find_cgroup();
    oom_state.cg0 = read_count(oom_state.cgroup);
    oom_state.vm0 = read_count("/proc/vmstat");
}

/* After "killed by signal 9 (Killed)": what ended it, or a hint. */
const char *oom_explain(bool here, char *buf, size_t len)
{
    long long cg = here && oom_state.cg0 >= 0 ? read_count(oom_state.cgroup) : -1;
    long long vm = here && oom_state.vm0 >= 0 ? read_count("/proc/vmstat") : -1;
    if (cg > oom_state.cg0)
        snprintf(buf, len,
                 ": the out-of-memory killer ended it (cgroup %s: oom_kill %lld -> %lld); memory ran out",
                 oom_state.name, oom_state.cg0, cg);
    else if (vm > oom_state.vm0)
        snprintf(buf, len,
                 ": the kernel's out-of-memory killer ended a process meanwhile (/proc/vmstat: oom_kill "
                 "%lld -> %lld), most likely this one; memory ran out",
                 oom_state.vm0, vm);
    else
        snprintf(buf, len, " (SIGKILL: out of memory? see dmesg)");
    return buf;
}
