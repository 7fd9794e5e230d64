/*
 * foreign.c - options of other launchers (mpirun, mpiexec, srun) that
 * sdsmrun does not take.  Users type them from habit; each gets a message
 * that names sdsmrun's spelling, or says why sdsmrun does not need it,
 * instead of a bare "unknown option".  Any other unknown long option gets a
 * "did you mean" from sdsmrun's own names.
 *
 * The long ones are in getopt's table (foreign_longopts), so that a value
 * glued or not to them is never taken for a short option cluster: '-ppn 4'
 * would otherwise read as '-p pn'.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define NOT_NEEDED "an option sdsmrun does not need: "

struct foreign {
    const char *name; /* without its dashes */
    const char *hint;
};

static const struct foreign foreign_opts[] = {
    {"machinefile", "mpirun's; sdsmrun spells it --hostfile FILE"},
    {"nodelist", "srun's; sdsmrun spells it --hosts H,... or -H H,..."},
    {"w", "srun's --nodelist; sdsmrun spells it --hosts H,... or -H H,..."},
    {"npernode", "mpirun's; sdsmrun spells it -N N or --map-by ppr:N:node"},
    {"ppn", "mpiexec's; sdsmrun spells it -N N or --map-by ppr:N:node"},
    {"ntasks-per-node", "srun's; sdsmrun spells it -N N or --map-by ppr:N:node"},
    {"ntasks", "srun's; sdsmrun spells it -n N"},
    {"bynode", "mpirun's; sdsmrun spells it --map-by node"},
    {"byslot", "mpirun's; sdsmrun spells it --map-by slot"},
    {"bind-to-core", "mpirun's; sdsmrun spells it --bind-to core"},
    {"cpu-set", "mpirun's; sdsmrun pins each rank to one CPU with --bind-to core"},
    {"display-allocation", "mpirun's; sdsmrun spells it --display-map"},
    {"display-devel-map", "mpirun's; sdsmrun spells it --display-map"},
    {"label", "srun's; sdsmrun spells it --tag-output"},
    {"l", "srun's --label; sdsmrun spells it --tag-output"},
    {"output", "srun's; sdsmrun spells it --output-filename DIR"},
    {"time", "srun's (minutes); sdsmrun spells it --timeout S (seconds)"},
    {"export", "srun's; sdsmrun spells it -x NAME[=VALUE], once per variable"},
    {"env", "mpiexec's; sdsmrun spells it -x NAME=VALUE"},
    {"genv", "mpiexec's; sdsmrun spells it -x NAME=VALUE"},
    {"genvall", NOT_NEEDED "ranks here get the whole environment; name what other hosts need with -x NAME"},
    {"cpus-per-task", "srun's; sdsmrun has no CPU count per rank: --threads T sets the compute threads of "
                      "each rank, --bind-to core pins each rank to one CPU"},
    {"c", "srun's --cpus-per-task; sdsmrun has no CPU count per rank: --threads T sets the compute "
          "threads of each rank, --bind-to core pins each rank to one CPU"},
    {"nodes", "srun's; sdsmrun uses every node of the allocation (or of --hosts): -N N is ranks per node"},
    {"oversubscribe", NOT_NEEDED "without --hosts this machine takes any number of ranks; with them, give "
                                 "more slots (--hosts h:8)"},
    {"mca", NOT_NEEDED "sdsm is tuned by SDSM_* variables (sdsmrun --info)"},
    {"gmca", NOT_NEEDED "sdsm is tuned by SDSM_* variables (sdsmrun --info)"},
    {"wdir", NOT_NEEDED "every rank, on every host, starts in sdsmrun's working directory: cd there first"},
    {"chdir", NOT_NEEDED "every rank, on every host, starts in sdsmrun's working directory: cd there first"},
    {"D", NOT_NEEDED "every rank, on every host, starts in sdsmrun's working directory: cd there first"},
    {"rankfile", "mpirun's; sdsmrun places ranks with --map-by slot|node|ppr:N:node over --hosts"},
    {"rank-by", "mpirun's; sdsmrun numbers ranks in the order --map-by places them"},
    {"mpi", "srun's; sdsmrun needs no PMI (to start ranks with srun itself: srun --mpi=pmix ./prog)"},
    {"kill-on-bad-exit", NOT_NEEDED "the first rank that fails always stops the whole job"},
    {"allow-run-as-root", NOT_NEEDED "it runs as any user"},
    {NULL, NULL},
};

/* getopt's table: sdsmrun's own options, then the foreign long ones. */
const struct option *foreign_longopts(const struct option *own)
{
    static struct option all[128];
    size_t n = 0;
    for (; own[n].name && n < sizeof all / sizeof all[0] - 1; n++)
        all[n] = own[n];
    for (const struct foreign *f = foreign_opts; f->name && n < sizeof all / sizeof all[0] - 1; f++)
        if (f->name[1]) /* one letter: a short option, reported through optopt */
            all[n++] = (struct option){f->name, optional_argument, NULL, OPT_FOREIGN};
    all[n] = (struct option){NULL, 0, NULL, 0};
    return all;
}

static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b), row[64];
    if (la >= 63 || lb >= 63)
        return 99;
    for (size_t k = 0; k <= lb; k++)
        row[k] = k;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t k = 1; k <= lb; k++) {
            size_t up = row[k], best = diag + (a[i - 1] != b[k - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[k - 1] + 1 < best)
                best = row[k - 1] + 1;
            diag = up;
            row[k] = best;
        }
    }
    return row[lb];
}

/* getopt took "--out" for the start of several long names: say which. */
static int ambiguous(const char *word, const char *name, size_t len, const struct option *own)
{
    char list[512];
    size_t o = 0;
    int n = 0;
    const struct option *all = foreign_longopts(own);
    for (const struct option *opt = all; opt->name && o + 64 < sizeof list; opt++)
        if (strncmp(opt->name, name, len) == 0 && strlen(opt->name) > len)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s--%s", n++ ? ", " : "", opt->name);
    if (n < 2)
        return -1;
    return options_usage_error("option '%.*s' is ambiguous: it may be %s", (int)(name - word + len), word,
                               list);
}

/* "unknown option 'W'" with the hint for W, or the nearest of sdsmrun's own. */
int foreign_unknown(const char *word, const struct option *own)
{
    const char *name = word + strspn(word, "-");
    size_t len = strcspn(name, "=");
    for (const struct foreign *f = foreign_opts; f->name; f++)
        if (strlen(f->name) == len && strncmp(name, f->name, len) == 0)
            return options_usage_error("unknown option '%.*s' (%s)", (int)(name - word + len), word, f->hint);
    int rc = word[1] == '-' ? ambiguous(word, name, len, own) : -1;
    if (rc >= 0)
        return rc;
    const char *best = NULL;
    size_t best_d = 3;
    for (const struct option *o = own; o->name; o++) {
        size_t d = edit_distance(name, len, o->name);
        if (d < best_d && d * 3 <= len) {
            best_d = d;
            best = o->name;
        }
    }
    if (best)
        return options_usage_error("unknown option '%.*s' (did you mean --%s?)", (int)(name - word + len),
                                   word, best);
    return options_usage_error("unknown option '%.*s'", (int)(name - word + len), word);
}
