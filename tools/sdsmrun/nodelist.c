/*
 * nodelist.c - Slurm's host list syntax (nodelist.h).  Brackets may appear
 * several times in a name, and the names are their product, in order.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "nodelist.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct names {
    char **v;
    int n, cap;
    char *err;
    size_t errlen;
};

static int bad(struct names *ns, const char *fmt, const char *what)
{
    snprintf(ns->err, ns->errlen, fmt, what);
    return -1;
}

static int emit(struct names *ns, const char *name)
{
    if (ns->n >= NODELIST_MAX)
        return bad(ns, "more than %s hosts", "65536");
    if (ns->n == ns->cap) {
        int cap = ns->cap ? 2 * ns->cap : 16;
        char **nv = realloc(ns->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return bad(ns, "out of memory%s", "");
        ns->v = nv;
        ns->cap = cap;
    }
    if (!(ns->v[ns->n] = strdup(name)))
        return bad(ns, "out of memory%s", "");
    ns->n++;
    return 0;
}

static bool number(const char *s, size_t len, long *v)
{
    char buf[24];
    if (len == 0 || len >= sizeof buf)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *v = strtol(buf, NULL, 10);
    return errno == 0;
}

static int expand(struct names *ns, const char *done, const char *rest);

/* One range of a bracket, "07" or "01-03": each number before tail. */
static int expand_range(struct names *ns, const char *done, const char *r, size_t len, const char *tail)
{
    const char *dash = memchr(r, '-', len);
    size_t la = dash ? (size_t)(dash - r) : len;
    long a, b;
    if (!number(r, la, &a) || (dash ? !number(dash + 1, len - la - 1, &b) : (b = a, false)) || b < a)
        return bad(ns, "bad range in '[...]' near '%.20s'", r);
    if (b - a >= NODELIST_MAX)
        return bad(ns, "more than %s hosts", "65536");
    for (long v = a; v <= b; v++) {
        char *next;
        if (asprintf(&next, "%s%0*ld", done, (int)la, v) < 0)
            return bad(ns, "out of memory%s", "");
        int rc = expand(ns, next, tail);
        free(next);
        if (rc)
            return rc;
    }
    return 0;
}

/* done + rest, with rest's first bracket expanded (and the ones after it). */
static int expand(struct names *ns, const char *done, const char *rest)
{
    const char *open = strchr(rest, '[');
    if (!open) {
        char *name;
        if (strchr(rest, ']'))
            return bad(ns, "']' without '[' in '%s'", rest);
        if (asprintf(&name, "%s%s", done, rest) < 0)
            return bad(ns, "out of memory%s", "");
        int rc = *name ? emit(ns, name) : bad(ns, "an empty host name%s", "");
        free(name);
        return rc;
    }
    const char *close = strchr(open, ']');
    if (!close || memchr(open + 1, '[', (size_t)(close - open - 1)))
        return bad(ns, "'[' without its ']' in '%s'", rest);
    char *head;
    if (asprintf(&head, "%s%.*s", done, (int)(open - rest), rest) < 0)
        return bad(ns, "out of memory%s", "");
    int rc = 0;
    for (const char *r = open + 1; !rc && r <= close;) {
        const char *end = memchr(r, ',', (size_t)(close - r));
        if (!end)
            end = close;
        rc = expand_range(ns, head, r, (size_t)(end - r), close + 1);
        r = end + 1;
    }
    free(head);
    return rc;
}

int nodelist_expand(const char *list, char ***names, char *err, size_t errlen)
{
    struct names ns = {.err = err, .errlen = errlen};
    char *copy = strdup(list), *item = copy;
    int rc = copy ? 0 : bad(&ns, "out of memory%s", "");
    /* Items end at commas outside brackets. */
    for (char *p = copy; !rc && p && item;) {
        int depth = 0;
        while (*p && (*p != ',' || depth)) {
            depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
            p++;
        }
        bool last = *p == '\0';
        *p = '\0';
        rc = *item ? expand(&ns, "", item) : bad(&ns, "an empty host name in '%s'", list);
        item = last ? NULL : ++p;
    }
    free(copy);
    if (rc) {
        nodelist_free(ns.v, ns.n);
        return -1;
    }
    *names = ns.v;
    return ns.n;
}

void nodelist_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int nodelist_counts(const char *spec, int *counts, int n, char *err, size_t errlen)
{
    int k = 0;
    for (const char *p = spec; *p;) {
        char *end;
        long c = strtol(p, &end, 10), times = 1;
        if (end == p || c < 1 || c > 1000000)
            goto malformed;
        p = end;
        if (strncmp(p, "(x", 2) == 0) {
            times = strtol(p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || times < 1)
                goto malformed;
            p = end + 1;
        }
        for (long t = 0; t < times && k <= n; t++, k++)
            if (k < n)
                counts[k] = (int)c;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            goto malformed;
    }
    if (k == n)
        return 0;
    snprintf(err, errlen, "'%s' gives %d count(s) for %d host(s)", spec, k, n);
    return -1;
malformed:
    snprintf(err, errlen, "'%s': expected counts like 2(x3),1", spec);
    return -1;
}
