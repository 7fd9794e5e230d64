/*
 * apps.c - the programs of a job.  Usually one; with mpirun's MPMD form
 *
 *   sdsmrun [options] -n 1 ./master : -n 3 ./worker args
 *
 * each ':' starts another group with its own -n and program, and the
 * groups' ranks follow each other: 0 runs ./master, 1..3 run ./worker.  It
 * is still one job: every rank gets the same SDSM_NPROCS, rendezvous and key.
 * A lone ':' after "--" is an argument like any other (one program).
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* -n N, -np N, --nprocs N, --np N, or the same with "=N". */
static const char *group_count(char **w, int nw, int *used)
{
    static const char *const names[] = {"-n", "-np", "--np", "--nprocs", NULL};
    for (int i = 0; names[i]; i++) {
        size_t l = strlen(names[i]);
        if (strncmp(w[0], names[i], l) != 0)
            continue;
        if (w[0][l] == '=') {
            *used = 1;
            return w[0] + l + 1;
        }
        if (w[0][l] == '\0' && nw > 1) {
            *used = 2;
            return w[1];
        }
    }
    return NULL;
}

static int add_app(struct job *j, char **argv, int n)
{
    struct app *na = realloc(j->apps, ((size_t)j->napps + 1) * sizeof *na);
    if (!na) {
        launcher_say("out of memory for the programs");
        return 1;
    }
    j->apps = na;
    j->apps[j->napps++] = (struct app){.argv = argv, .n = n};
    return -1;
}

/* A group after a ':': "-n N program [args]" up to the next ':' or the end. */
static int later_group(struct job *j, char **w, int nw)
{
    int used = 0, g = j->napps;
    const char *count = nw ? group_count(w, nw, &used) : NULL;
    if (nw == 0)
        return options_usage_error("nothing after ':' (program %d): expected -n N and a program", g + 1);
    if (!count)
        return options_usage_error("program %d (after ':'): expected -n N before '%s'", g + 1, w[0]);
    long n;
    if (!hosts_parse_count(count, &n))
        return options_usage_error("program %d (after ':'): invalid number of ranks '%s': expected 1 to %d",
                                   g + 1, count, LAUNCHER_MAX_RANKS);
    if (used >= nw)
        return options_usage_error("program %d (after ':'): -n %ld but no program", g + 1, n);
    if (w[used][0] == '-')
        return options_usage_error("program %d (after ':'): only -n N may come before the program, not '%s'",
                                   g + 1, w[used]);
    return add_app(j, w + used, (int)n);
}

static int check_total(struct job *j)
{
    long total = 0;
    if (!j->n)
        return options_usage_error("with ':' every program needs its own -n N; the first, '%s', has none",
                                   j->apps[0].argv[0]);
    for (int a = 0; a < j->napps; a++)
        total += j->apps[a].n;
    if (total > LAUNCHER_MAX_RANKS)
        return options_usage_error("the programs' ranks add up to %ld; at most %d", total,
                                   LAUNCHER_MAX_RANKS);
    j->n = (int)total;
    return -1;
}

int apps_parse(struct job *j, char **w, int nw, bool one_program)
{
    int start = 0, rc;
    for (int i = 0; i <= nw; i++) {
        if (i < nw && (one_program || strcmp(w[i], ":") != 0))
            continue;
        if (start == 0 && i == 0)
            return options_usage_error("':' with no program before it");
        if (start == 0) {
            rc = add_app(j, w, j->n);
        } else {
            rc = later_group(j, w + start, i - start);
        }
        if (rc >= 0)
            return rc;
        if (i < nw)
            w[i] = NULL; /* ends the group's argv */
        start = i + 1;
    }
    if (j->napps > 1)
        return check_total(j);
    return -1;
}

/* Each rank's program: the groups' ranks in order, the last takes the rest. */
void apps_assign(struct job *j)
{
    int a = 0, left = j->apps[0].n;
    for (int r = 0; r < j->n; r++) {
        while (left == 0 && a + 1 < j->napps)
            left = j->apps[++a].n;
        j->ranks[r].app = a;
        if (left > 0)
            left--;
    }
}

char **apps_argv(const struct job *j, int r) { return j->apps[j->ranks[r].app].argv; }

/* The first program a rank of this machine runs that cannot be run: 0, or
 * the exit status after saying so. */
int apps_check_local(const struct job *j)
{
    for (int a = 0; a < j->napps; a++)
        for (int r = 0; r < j->n; r++) {
            if (j->ranks[r].app != a || !j->hosts[j->ranks[r].host].local)
                continue;
            int e = proc_check_program(j->apps[a].argv[0]);
            if (e) {
                errno = e;
                launcher_say("cannot run '%s': %m", j->apps[a].argv[0]);
                return EXIT_NOEXEC;
            }
            break;
        }
    return 0;
}

void apps_free(struct job *j)
{
    free(j->apps);
    j->apps = NULL;
    j->napps = 0;
}
