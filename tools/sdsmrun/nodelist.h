/*
 * nodelist.h - Slurm's compressed host lists and per-node counts, as its
 * environment gives them to a job step (SLURM_JOB_NODELIST,
 * SLURM_TASKS_PER_NODE).  Pure functions: no state, no launcher.
 */
#ifndef SDSMRUN_NODELIST_H
#define SDSMRUN_NODELIST_H

#include <stddef.h>

#define NODELIST_MAX 65536 /* hosts one list may expand to */

/*
 * "node[01-03,07],gpu5,rack[1-2]-n[1-2]" into node01 node02 node03 node07
 * gpu5 rack1-n1 rack1-n2 rack2-n1 rack2-n2: a range keeps the width of its
 * first number (01-03).  Returns how many names *names holds (an array of
 * malloc'ed strings, free with nodelist_free), or -1 with err set.
 */
int nodelist_expand(const char *list, char ***names, char *err, size_t errlen);
void nodelist_free(char **names, int n);

/*
 * "2(x3),1" into counts[0..n): 2 2 2 1.  0, or -1 with err set when the
 * text is malformed or does not give exactly n counts.
 */
int nodelist_counts(const char *spec, int *counts, int n, char *err, size_t errlen);

#endif
