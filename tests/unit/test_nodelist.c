/*
 * test_nodelist.c - sdsmrun's reading of Slurm's host lists and per-node
 * counts (tools/sdsmrun/nodelist.c), as SLURM_JOB_NODELIST and
 * SLURM_TASKS_PER_NODE give them.
 */
#define _GNU_SOURCE /* as nodelist.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nodelist.h"

/* The expansion of list, joined by spaces ("" when it is refused). */
static const char *expanded(const char *list)
{
    static char out[4096];
    char err[256], **names;
    int n = nodelist_expand(list, &names, err, sizeof err);
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n && o + 64 < sizeof out; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? " " : "", names[i]);
    if (n >= 0)
        nodelist_free(names, n);
    return out;
}

static void test_plain_and_ranges(void)
{
    CHECK_STR(expanded("gpu5"), "gpu5");
    CHECK_STR(expanded("a,b,c"), "a b c");
    CHECK_STR(expanded("node[1-3]"), "node1 node2 node3");
    CHECK_STR(expanded("node[01-03,07],gpu5"), "node01 node02 node03 node07 gpu5");
    CHECK_STR(expanded("n[8-11]"), "n8 n9 n10 n11");
    CHECK_STR(expanded("n[098-101]"), "n098 n099 n100 n101");
    CHECK_STR(expanded("x[5]y"), "x5y");
}

static void test_products(void)
{
    CHECK_STR(expanded("rack[1-2]-n[1-2]"), "rack1-n1 rack1-n2 rack2-n1 rack2-n2");
    CHECK_STR(expanded("a[1,3]b[0-1],c"), "a1b0 a1b1 a3b0 a3b1 c");
}

static void test_refused(void)
{
    char err[256], **names = NULL;
    const char *bad[] = {"", "a,,b", "node[1-", "node]1[", "node[3-1]", "node[a-b]", "node[1-2", "a[]", ","};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK_I(nodelist_expand(bad[i], &names, err, sizeof err), ==, -1);
        CHECK(err[0] != '\0');
    }
    CHECK_I(nodelist_expand("n[1-70000]", &names, err, sizeof err), ==, -1);
    CHECK_HAS(err, "65536");
}

static void test_counts(void)
{
    int c[6];
    char err[256];
    CHECK_I(nodelist_counts("2(x3),1", c, 4, err, sizeof err), ==, 0);
    CHECK(c[0] == 2 && c[1] == 2 && c[2] == 2 && c[3] == 1);
    CHECK_I(nodelist_counts("4", c, 1, err, sizeof err), ==, 0);
    CHECK_I(c[0], ==, 4);
    CHECK_I(nodelist_counts("1,16(x2)", c, 3, err, sizeof err), ==, 0);
    CHECK(c[0] == 1 && c[1] == 16 && c[2] == 16);
    CHECK_I(nodelist_counts("2(x3)", c, 2, err, sizeof err), ==, -1);
    CHECK_HAS(err, "3 count(s) for 2 host(s)");
    CHECK_I(nodelist_counts("2,2", c, 3, err, sizeof err), ==, -1);
    const char *bad[] = {"", "x", "2(x)", "2(3)", "2,", "0", "2(x0)", "2;1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_I(nodelist_counts(bad[i], c, 1, err, sizeof err), ==, -1);
}

int main(void)
{
    RUN(test_plain_and_ranges);
    RUN(test_products);
    RUN(test_refused);
    RUN(test_counts);
    return ck_done("test_nodelist");
}
