/*
 * pmi2.c - direct launch through the PMI-2 wire protocol (see pmi2.h).
 *
 * The conversation, over the launcher's socket PMI_FD, one request and one
 * answer at a time:
 *
 *   "cmd=init pmi_version=2 pmi_subversion=0\n"      (PMI-1 framing: a line)
 *   then PMI-2 framing: a 6-character decimal length, then
 *   "cmd=NAME;key=value;...;" (a ';' inside a value is written ";;")
 *     fullinit            -> rank, size
 *     info-getjobattr     -> PMI_process_mapping: how many hosts
 *     kvs-put, kvs-fence  -> every rank's address (and rank 0's job key)
 *     kvs-get             -> read them back
 *     abort / finalize
 *
 * As under PMIx, the launcher's key-value store replaces sdsmrun's
 * rendezvous and nothing else; the job key lives only there.  Every value
 * we put is hex, so it never needs escaping, and everything read back is
 * checked (framing, lengths, hex, ranges) before use: the socket is the
 * launcher's, but a wrong answer must end in a message, not in a crash.
 * Only the thread in sdsm_init talks here, except an abort (one bounded
 * write, never a read).
 */
#include "pmi2.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "sdsm.h"

#define MSG_MAX    4096 /* the protocol's values are at most 1024 bytes */
#define MAX_PAIRS  32
#define MAX_RANKS  (1L << 20)
#define KEY_JOBKEY "sdsm-key"

static int pmi_fd = -1;
static int my_rank, job_size;

typedef struct reply {
    char buf[MSG_MAX + 1];
    char *key[MAX_PAIRS], *val[MAX_PAIRS];
    int n;
} reply_t;

int sdsm_pmi2_present(void) { return getenv("PMI_FD") && getenv("PMI_RANK") && getenv("PMI_SIZE"); }

/* What the launcher sent, fit for a log line: printable, cut short. */
static const char *shown(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 4 < n; i++)
        out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    strcpy(out + i, s[i] ? "..." : "");
    return out;
}

static int env_long(const char *name, long lo, long hi, long *out)
{
    const char *s = getenv(name);
    if (s && !sdsm_config_parse_long(s, lo, hi, out))
        return 0;
    char buf[40];
    sdsm_error_log("%s=%s: expected a number from %ld to %ld (set by the PMI launcher)", name,
                   s ? shown(s, buf, sizeof buf) : "", lo, hi);
    return SDSM_EPROTO;
}

/* The launcher socket failed (e from auth.h's I/O helpers, errno saying
 * why): log it.  SDSM_ETIMEDOUT or SDSM_EPEER. */
static int io_error(int e, const char *what, long timeout_s)
{
    if (e == SDSM_ETIMEDOUT) {
        /* The fence, and hydra's kvs-get, wait for every rank's put. */
        int all = !strncmp(what, "kvs-", 4);
        sdsm_error_log("PMI-2 %s: no answer from the launcher within %ld s (SDSM_TIMEOUT)%s", what, timeout_s,
                       all ? ": did every rank reach sdsm_init?" : "");
        return SDSM_ETIMEDOUT;
    }
    if (errno == ECONNRESET) /* EOF too */
        sdsm_error_log("PMI-2 %s: the launcher closed its socket (PMI_FD)", what);
    else
        sdsm_error_log("PMI-2 %s: launcher socket (PMI_FD=%d): %m", what, pmi_fd);
    return SDSM_EPEER;
}

/* One PMI-2 request: the 6-character length, then the text.  0, an error
 * of sdsm_io_write_full, or SDSM_EINVAL (errno EMSGSIZE) for a request too
 * long. */
static int send_cmd(int64_t deadline, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int send_cmd(int64_t deadline, const char *fmt, ...)
{
    char msg[6 + MSG_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(msg + 6, MSG_MAX + 1, fmt, ap);
    va_end(ap);
    if (len < 0 || len > MSG_MAX) {
        errno = EMSGSIZE;
        return SDSM_EINVAL;
    }
    char head[8];
    snprintf(head, sizeof head, "%-6d", len);
    memcpy(msg, head, 6);
    return sdsm_io_write_full(pmi_fd, msg, 6 + (size_t)len, deadline);
}

/* "k=v;k=v;" in place: ";;" in a value is one ';'.  0, or SDSM_EPROTO when malformed. */
static int parse_pairs(reply_t *r, size_t len)
{
    char *p = r->buf, *end = r->buf + len;
    for (r->n = 0; p < end; r->n++) {
        char *k = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
            p++;
        if (p == end || *p != '=' || p == k || r->n == MAX_PAIRS)
            return SDSM_EPROTO;
        *p++ = '\0';
        char *v = p, *w = p;
        for (; p < end && *p; *w++ = *p++) {
            if (*p != ';')
                continue;
            if (p + 1 < end && p[1] == ';')
                p++; /* keep one of the two */
            else
                break;
        }
        if (p == end || *p != ';')
            return SDSM_EPROTO; /* every pair ends with ';', and no NUL inside */
        *w = '\0';
        p++;
        r->key[r->n] = k;
        r->val[r->n] = v;
    }
    return r->n ? 0 : SDSM_EPROTO;
}

static const char *get(const reply_t *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->key[i], key))
            return r->val[i];
    return NULL;
}

/* Read the answer to `what`: it must be cmd=<what>-response (or
 * fullinit-response...) with rc=0 unless soft (then rc is the caller's). */
static int recv_reply(reply_t *r, const char *what, int soft, int64_t deadline, long timeout_s)
{
    char head[7] = {0}, buf[80];
    int e = sdsm_io_read_full(pmi_fd, head, 6, deadline);
    if (e)
        return io_error(e, what, timeout_s);
    char *endp;
    long len = strtol(head, &endp, 10);
    while (*endp == ' ')
        endp++;
    if (*endp || len < 1 || len > MSG_MAX || !isdigit((unsigned char)head[strspn(head, " ")])) {
        sdsm_error_log("PMI-2 %s: the launcher's answer has a bad length field '%s'", what,
                       shown(head, buf, sizeof buf));
        return SDSM_EPROTO;
    }
    if ((e = sdsm_io_read_full(pmi_fd, r->buf, (size_t)len, deadline)))
        return io_error(e, what, timeout_s);
    r->buf[len] = '\0';
    char copy[80];
    shown(r->buf, copy, sizeof copy);
    char want[64];
    snprintf(want, sizeof want, "%s-response", what);
    const char *cmd, *rc;
    if (parse_pairs(r, (size_t)len) || !(cmd = get(r, "cmd")) || strcmp(cmd, want)) {
        sdsm_error_log("PMI-2 %s: unexpected answer from the launcher: '%s'", what, copy);
        return SDSM_EPROTO;
    }
    rc = get(r, "rc");
    if (!soft && (!rc || strcmp(rc, "0"))) {
        const char *why = get(r, "errmsg");
        sdsm_error_log("PMI-2 %s failed: rc=%s%s%s", what, rc ? shown(rc, buf, 24) : "(none)",
                       why ? ": " : "", why ? shown(why, copy, sizeof copy) : "");
        return SDSM_EPEER;
    }
    return 0;
}

/* A decimal number in [lo, hi] from the answer, or a logged error. */
static int get_long(const reply_t *r, const char *what, const char *key, long lo, long hi, long *out)
{
    const char *v = get(r, key);
    char buf[40];
    if (v && !sdsm_config_parse_long(v, lo, hi, out))
        return 0;
    sdsm_error_log("PMI-2 %s: %s=%s is not a number from %ld to %ld", what, key,
                   v ? shown(v, buf, sizeof buf) : "(missing)", lo, hi);
    return SDSM_EPROTO;
}

/* The greeting is still PMI-1 framed: one line each way. */
static int greet(int64_t deadline, long timeout_s)
{
    static const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    char line[256], buf[80];
    size_t n = 0;
    int e = sdsm_io_write_full(pmi_fd, hello, sizeof hello - 1, deadline);
    while (!e && n < sizeof line - 1 && (n == 0 || line[n - 1] != '\n'))
        e = sdsm_io_read_full(pmi_fd, &line[n++], 1, deadline);
    if (e)
        return io_error(e, "init", timeout_s);
    line[n] = '\0';
    if (line[n - 1] != '\n' || strncmp(line, "cmd=response_to_init ", 21)) {
        sdsm_error_log("PMI-2 init: unexpected answer from the launcher: '%s'", shown(line, buf, sizeof buf));
        return SDSM_EPROTO;
    }
    line[n - 1] = ' ';
    if (!strstr(line, " pmi_version=2 ") || !strstr(line, " rc=0 ")) {
        sdsm_error_log("started by a PMI launcher that does not speak PMI-2 (it answered '%s'): "
                       "sdsm speaks PMIx and PMI-2 only; use sdsmrun, srun --mpi=pmi2 or pmix, "
                       "or a PMIx launcher",
                       shown(line, buf, sizeof buf));
        return SDSM_ENOTSUP;
    }
    return 0;
}

/* "(vector,(start,nodes,ranks_per_node),...)": the blocks repeat over the
 * ranks, so the number of hosts is the highest start + nodes.  0 or SDSM_EPROTO. */
static int count_hosts(const char *map, long *hosts)
{
    const char *p = map;
    int used;
    *hosts = 0;
    if (strncmp(p, "(vector", 7))
        return SDSM_EPROTO;
    p += 7;
    while (*p == ',') {
        long s, n, k;
        if (sscanf(p, ",(%ld,%ld,%ld)%n", &s, &n, &k, &used) != 3 || s < 0 || n < 1 || k < 1 ||
            s >= MAX_RANKS || n > MAX_RANKS || k > MAX_RANKS)
            return SDSM_EPROTO;
        if (s + n > *hosts)
            *hosts = s + n;
        p += used;
    }
    return strcmp(p, ")") || *hosts == 0 ? SDSM_EPROTO : 0;
}

/* 1 if every rank runs on this host, 0 if not, -1 if the launcher does not
 * say (not an error: boot.c does without). */
static int one_host_from_mapping(int64_t deadline, long timeout_s)
{
    reply_t *r = malloc(sizeof *r);
    int res = -1;
    long hosts;
    char buf[80];
    if (!r)
        return -1;
    if (send_cmd(deadline, "cmd=info-getjobattr;key=PMI_process_mapping;") ||
        recv_reply(r, "info-getjobattr", 1, deadline, timeout_s))
        goto out; /* logged; boot.c does without */
    const char *found = get(r, "found"), *map = get(r, "value"), *rc = get(r, "rc");
    if (!rc || strcmp(rc, "0") || !found || strcmp(found, "TRUE") || !map) {
        sdsm_debug("PMI-2: the launcher gives no PMI_process_mapping");
    } else if (count_hosts(map, &hosts)) {
        sdsm_warn("PMI-2: ignoring a malformed PMI_process_mapping '%s'", shown(map, buf, sizeof buf));
    } else {
        res = hosts == 1;
    }
out:
    free(r);
    return res;
}

/* Slurm sets PMI_JOBID and wants it back; hydra sets none.  jid gets the
 * fullinit field ("pmijobid=...;" or ""); 0 or SDSM_EPROTO. */
static int jobid_field(char *jid, size_t len)
{
    const char *jobid = getenv("PMI_JOBID");
    if (jobid && (strlen(jobid) > 128 || strpbrk(jobid, ";=\n"))) {
        sdsm_error_log("PMI_JOBID=%s: not a PMI-2 job id (set by the PMI launcher)", shown(jobid, jid, len));
        return SDSM_EPROTO;
    }
    if (jobid)
        snprintf(jid, len, "pmijobid=%s;", jobid);
    else
        jid[0] = '\0';
    return 0;
}

int sdsm_pmi2_start(int *rank, int *nprocs, int *one_host, long timeout_s)
{
    long fd, rk, sz;
    int rc;
    if ((rc = env_long("PMI_RANK", 0, MAX_RANKS - 1, &rk)))
        return rc;
    sdsm_log_rank = (int)rk;
    if ((rc = env_long("PMI_SIZE", 1, MAX_RANKS, &sz)) || (rc = env_long("PMI_FD", 0, 1 << 20, &fd)))
        return rc;
    struct stat st;
    if (fstat((int)fd, &st) || !S_ISSOCK(st.st_mode)) {
        sdsm_error_log("PMI_FD=%ld is not a socket open in this process: started by a PMI launcher "
                       "whose socket was closed, or PMI_FD was inherited from elsewhere",
                       fd);
        return SDSM_EPROTO;
    }
    pmi_fd = (int)fd;
    fcntl(pmi_fd, F_SETFD, FD_CLOEXEC); /* the program's children are no ranks */
    int64_t deadline = sdsm_io_now_ms() + timeout_s * 1000;
    reply_t *r = malloc(sizeof *r);
    if (!r)
        return SDSM_ENOMEM;
    long frank, fsize;
    if ((rc = greet(deadline, timeout_s)))
        goto out;
    char jid[160];
    if ((rc = jobid_field(jid, sizeof jid)))
        goto out;
    if ((rc = send_cmd(deadline, "cmd=fullinit;%spmirank=%ld;threaded=FALSE;", jid, rk))) {
        rc = io_error(rc, "fullinit", timeout_s);
        goto out;
    }
    if ((rc = recv_reply(r, "fullinit", 0, deadline, timeout_s)) ||
        (rc = get_long(r, "fullinit", "size", 1, MAX_RANKS, &fsize)) ||
        (rc = get_long(r, "fullinit", "rank", 0, fsize - 1, &frank)))
        goto out;
    if (frank != rk || fsize != sz) {
        sdsm_error_log("PMI-2 fullinit: the launcher says rank %ld of %ld, the environment rank %ld "
                       "of %ld (PMI_RANK, PMI_SIZE)",
                       frank, fsize, rk, sz);
        rc = SDSM_EPROTO;
        goto out;
    }
    my_rank = (int)rk;
    job_size = (int)sz;
    *rank = my_rank;
    *nprocs = job_size;
    *one_host = one_host_from_mapping(deadline, timeout_s);
out:
    free(r);
    return rc;
}

static void to_hex(const void *p, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[((const uint8_t *)p)[i] >> 4];
        out[2 * i + 1] = digits[((const uint8_t *)p)[i] & 15];
    }
    out[2 * len] = '\0';
}

static int from_hex(const char *s, void *out, size_t len)
{
    if (strlen(s) != 2 * len)
        return SDSM_EPROTO;
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
            sscanf(s + 2 * i, "%2x", &v) != 1)
            return SDSM_EPROTO;
        ((uint8_t *)out)[i] = (uint8_t)v;
    }
    return 0;
}

static int put(const char *key, const char *hex, int64_t deadline, long timeout_s)
{
    reply_t *r = malloc(sizeof *r);
    if (!r)
        return SDSM_ENOMEM;
    int e = send_cmd(deadline, "cmd=kvs-put;key=%s;value=%s;", key, hex);
    int rc = e ? io_error(e, "kvs-put", timeout_s) : recv_reply(r, "kvs-put", 0, deadline, timeout_s);
    free(r);
    return rc;
}

/* Key `key` as exactly len bytes of hex into out; `whose` names it in messages. */
static int get_hex(const char *key, const char *whose, void *out, size_t len, int64_t deadline,
                   long timeout_s)
{
    reply_t *r = malloc(sizeof *r);
    if (!r)
        return SDSM_ENOMEM;
    char buf[80];
    int e = send_cmd(deadline, "cmd=kvs-get;jobid=;srcid=-1;key=%s;", key);
    int rc = e ? io_error(e, "kvs-get", timeout_s) : recv_reply(r, "kvs-get", 0, deadline, timeout_s);
    const char *found = rc ? NULL : get(r, "found"), *v = rc ? NULL : get(r, "value");
    if (!rc && (!found || strcmp(found, "TRUE") || !v)) {
        sdsm_error_log("PMI-2 kvs-get(%s): the launcher has no %s after the fence", key, whose);
        rc = SDSM_EPROTO;
    } else if (!rc && from_hex(v, out, len)) {
        sdsm_error_log("PMI-2 kvs-get(%s): %s is not %zu hex digits: '%s'", key, whose, 2 * len,
                       shown(v, buf, sizeof buf));
        rc = SDSM_EPROTO;
    }
    free(r);
    return rc;
}

static int fence(int64_t deadline, long timeout_s)
{
    reply_t *r = malloc(sizeof *r);
    if (!r)
        return SDSM_ENOMEM;
    int e = send_cmd(deadline, "cmd=kvs-fence;");
    int rc = e ? io_error(e, "kvs-fence", timeout_s) : recv_reply(r, "kvs-fence", 0, deadline, timeout_s);
    free(r);
    return rc;
}

int sdsm_pmi2_exchange(const sdsm_ctrl_addr_t *me, long timeout_s, sdsm_ctrl_addr_t *table,
                       uint8_t key[SDSM_KEY_BYTES])
{
    int64_t deadline = sdsm_io_now_ms() + timeout_s * 1000;
    char name[32], hex[2 * SDSM_KEY_BYTES + 1], whose[32];
    uint8_t wire[6];
    memcpy(wire, &me->ipv4, 4); /* both already in network byte order */
    memcpy(wire + 4, &me->port, 2);
    to_hex(wire, sizeof wire, hex);
    snprintf(name, sizeof name, "sdsm-addr-%d", my_rank);
    int rc = put(name, hex, deadline, timeout_s);
    if (!rc && my_rank == 0) {
        if (sdsm_auth_key_generate(hex) || sdsm_auth_key_parse(hex, key)) {
            sdsm_error_log("cannot make a job key: %m");
            return SDSM_ESYS;
        }
        rc = put(KEY_JOBKEY, hex, deadline, timeout_s);
    }
    memset(hex, 0, sizeof hex);
    if (!rc)
        rc = fence(deadline, timeout_s);
    if (!rc && my_rank != 0)
        rc = get_hex(KEY_JOBKEY, "job key of rank 0", key, SDSM_KEY_BYTES, deadline, timeout_s);
    for (int r = 0; !rc && r < job_size; r++) {
        snprintf(name, sizeof name, "sdsm-addr-%d", r);
        snprintf(whose, sizeof whose, "address of rank %d", r);
        if ((rc = get_hex(name, whose, wire, sizeof wire, deadline, timeout_s)))
            break;
        memset(&table[r], 0, sizeof table[r]);
        memcpy(&table[r].ipv4, wire, 4);
        memcpy(&table[r].port, wire + 4, 2);
        if (!table[r].ipv4 || !table[r].port) {
            sdsm_error_log("PMI-2 kvs-get(%s): rank %d's address has a zero IP or port", name, r);
            rc = SDSM_EPROTO;
        }
    }
    return rc;
}

/* The launcher may tear the job down as soon as it reads the abort, and
 * drop what is still in this rank's output pipes: the message saying why it
 * stops.  Wait (briefly) until it has read them. */
static void drain_output(void)
{
    int64_t until = sdsm_io_now_ms() + 500;
    for (;;) {
        int left = 0;
        for (int fd = 1; fd <= 2; fd++) {
            struct stat st;
            int n = 0;
            if (!fstat(fd, &st) && S_ISFIFO(st.st_mode) && !ioctl(fd, FIONREAD, &n))
                left += n;
        }
        if (!left || sdsm_io_now_ms() >= until)
            return;
        usleep(2000);
    }
}

void sdsm_pmi2_abort(int code, const char *reason)
{
    if (pmi_fd < 0)
        return;
    drain_output();
    /* The message is ours, but keep it a plain value: no ';', no control
     * characters. */
    char msg[512];
    size_t i = 0;
    for (; reason[i] && i < sizeof msg - 1; i++)
        msg[i] = reason[i] == ';' || !isprint((unsigned char)reason[i]) ? ' ' : reason[i];
    msg[i] = '\0';
    (void)code; /* PMI-2's abort has no exit code: the launcher ends the job non-zero */
    send_cmd(sdsm_io_now_ms() + 1000, "cmd=abort;isworldabort=TRUE;msg=%s;", msg);
}

void sdsm_pmi2_fini(void)
{
    if (pmi_fd < 0)
        return;
    reply_t *r = malloc(sizeof *r);
    int64_t deadline = sdsm_io_now_ms() + 2000;
    if (r && !send_cmd(deadline, "cmd=finalize;"))
        recv_reply(r, "finalize", 1, deadline, 2);
    free(r);
    close(pmi_fd);
    pmi_fd = -1;
}
