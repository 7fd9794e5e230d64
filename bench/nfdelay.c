/*
 * nfdelay.c - a delaying NFQUEUE reader: adds a fixed one-way delay (and
 * optionally random loss) to the packets an iptables rule sends to its queue.
 *
 *   nfdelay --delay-us D [--queue N] [--loss PCT] [--seed S] [--no-rt] [--spin]
 *
 * Used by tests/cluster/netprofile.sh in every emulated host's network
 * namespace, behind a rule such as
 *   iptables -A OUTPUT -o VETH -j NFQUEUE --queue-num N
 * so every packet a host sends to the emulated network waits D microseconds
 * before it leaves (the kernel has no netem qdisc; tbf does the bandwidth).
 *
 * Why a queue reader and not a proxy: the packets stay the kernel's own (same
 * TCP connections, same addresses and ports, acknowledgements delayed as
 * well), so any program, sdsm or MPI, sees the delay without being told
 * about it.
 *
 * How: the queue copies only packet metadata to us (NFQNL_COPY_META), whole
 * GSO packets included.  Each packet gets a deadline = arrival here + D;
 * the deadlines are in arrival order, so one batch verdict (accept every id
 * up to the last due one) releases the due packets in order.  Between
 * deadlines we sleep in ppoll with a 1 ns timer slack, the alarm set a
 * learned wake-up latency early (a moving average of how late timed
 * wake-ups were), and on waking release every packet due within that
 * latency: a packet leaves on average at its deadline, early or late by the
 * timer's jitter, as on a real network.  The reader costs the hosts no CPU
 * beyond its wake-ups: a real network takes none of theirs, and every
 * emulated host shares this machine's CPUs with it.  --spin is the precise
 * and costly way: wake early, then busy-wait until the deadline, so no
 * packet leaves early, at up to the learned latency of CPU per release (on
 * a 2-CPU virtual machine with the lan profile that was 77 % of a CPU
 * during a page-fetch loop, CPU the emulated hosts no longer had).  The
 * process runs SCHED_FIFO (unless --no-rt) so that a loaded CPU does not
 * stretch the delay, as a real network's would not be.  The queue's own
 * cost (the kernel waking us for each packet, our verdict) comes on top:
 * about 10 us per round trip on a 2-CPU virtual machine, measured by
 * netprofile.sh's ping-pong.  A lost packet (--loss) gets its DROP verdict
 * on arrival.
 *
 * Prints "nfdelay: queue N ready" on stdout once bound (the caller waits for
 * it), and at SIGTERM/SIGINT one line of counts on stderr: packets, dropped,
 * how late the releases were (median and maximum beyond the deadline) and
 * how many left early, by how much on average.
 *
 * Plain netlink, no library: the messages are the few in
 * <linux/netfilter/nfnetlink_queue.h>.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING     65536u /* packets held at once (queue maxlen too) */
#define LATE_MAX 4096u  /* lateness samples kept for the median */

typedef struct held {
    uint32_t id;
    uint64_t due_ns;
} held_t;

static held_t g_ring[RING];
static uint32_t g_head, g_tail; /* g_ring[g_head..g_tail) held, in id order */
static volatile sig_atomic_t g_stop;

static uint64_t g_packets, g_dropped, g_late_max, g_late_sum, g_released;
static uint64_t g_early, g_early_sum; /* released before their deadline (not --spin) */
static uint64_t g_late[LATE_MAX];
static uint32_t g_nlate;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* ------------------------------------------------------------ netlink */

typedef struct nlbuf {
    char b[256];
    size_t len;
} nlbuf_t;

static struct nlmsghdr *nl_start(nlbuf_t *m, uint16_t msg, uint16_t flags, uint16_t queue)
{
    memset(m, 0, sizeof *m);
    struct nlmsghdr *h = (struct nlmsghdr *)m->b;
    h->nlmsg_type = (uint16_t)((NFNL_SUBSYS_QUEUE << 8) | msg);
    h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
    struct nfgenmsg *g = (struct nfgenmsg *)NLMSG_DATA(h);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(queue);
    m->len = NLMSG_LENGTH(sizeof *g);
    h->nlmsg_len = (uint32_t)m->len;
    return h;
}

static void nl_attr(nlbuf_t *m, uint16_t type, const void *data, size_t len)
{
    struct nlattr *a = (struct nlattr *)(m->b + NLMSG_ALIGN(m->len));
    a->nla_type = type;
    a->nla_len = (uint16_t)(NLA_HDRLEN + len);
    memcpy((char *)a + NLA_HDRLEN, data, len);
    m->len = NLMSG_ALIGN(m->len) + NLA_ALIGN(a->nla_len);
    ((struct nlmsghdr *)m->b)->nlmsg_len = (uint32_t)m->len;
}

static int nl_send(int fd, nlbuf_t *m)
{
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};
    ssize_t n = sendto(fd, m->b, m->len, 0, (struct sockaddr *)&to, sizeof to);
    return n == (ssize_t)m->len ? 0 : -1;
}

/* Sends a configuration message with NLM_F_ACK and waits for the kernel's
 * answer: 0 or -errno. */
static int nl_config(int fd, nlbuf_t *m, const char *what)
{
    static uint32_t seq;
    ((struct nlmsghdr *)m->b)->nlmsg_seq = ++seq;
    if (nl_send(fd, m)) {
        fprintf(stderr, "nfdelay: %s: send: %s\n", what, strerror(errno));
        return -1;
    }
    char buf[8192];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "nfdelay: %s: recv: %s\n", what, strerror(errno));
            return -1;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq != seq)
                continue;
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (e->error) {
                fprintf(stderr, "nfdelay: %s: %s\n", what, strerror(-e->error));
                return -1;
            }
            return 0;
        }
    }
}

static int queue_open(uint16_t queue)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0) {
        fprintf(stderr, "nfdelay: socket(NETLINK_NETFILTER): %s\n", strerror(errno));
        return -1;
    }
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    if (bind(fd, (struct sockaddr *)&me, sizeof me)) {
        fprintf(stderr, "nfdelay: bind: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    int big = 64 << 20; /* a burst of packet messages must not overflow (ENOBUFS) */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big))
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);

    nlbuf_t m;
    struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET)};
    nl_start(&m, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
    nl_attr(&m, NFQA_CFG_CMD, &cmd, sizeof cmd);
    if (nl_config(fd, &m, "bind queue"))
        goto fail;

    struct nfqnl_msg_config_params par = {.copy_range = htonl(0), .copy_mode = NFQNL_COPY_META};
    uint32_t maxlen = htonl(RING - 1);
    uint32_t flags = htonl(NFQA_CFG_F_GSO), mask = htonl(NFQA_CFG_F_GSO);
    nl_start(&m, NFQNL_MSG_CONFIG, NLM_F_ACK, queue);
    nl_attr(&m, NFQA_CFG_PARAMS, &par, sizeof par);
    nl_attr(&m, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof maxlen);
    nl_attr(&m, NFQA_CFG_FLAGS, &flags, sizeof flags);
    nl_attr(&m, NFQA_CFG_MASK, &mask, sizeof mask);
    if (nl_config(fd, &m, "queue parameters"))
        goto fail;
    return fd;
fail:
    close(fd);
    return -1;
}

static int verdict(int fd, uint16_t queue, uint16_t type, uint32_t id, uint32_t v)
{
    nlbuf_t m;
    struct nfqnl_msg_verdict_hdr vh = {.verdict = htonl(v), .id = htonl(id)};
    nl_start(&m, type, 0, queue);
    nl_attr(&m, NFQA_VERDICT_HDR, &vh, sizeof vh);
    for (;;) {
        if (!nl_send(fd, &m))
            return 0;
        if (errno != EINTR) {
            fprintf(stderr, "nfdelay: verdict for packet %u: %s\n", id, strerror(errno));
            return -1;
        }
    }
}

/* ---------------------------------------------------------- the queue */

/* Packet id of one NFQNL_MSG_PACKET, or -1 if it has none. */
static int64_t packet_id(struct nlmsghdr *h)
{
    size_t off = NLMSG_LENGTH(sizeof(struct nfgenmsg));
    while (off + NLA_HDRLEN <= h->nlmsg_len) {
        struct nlattr *a = (struct nlattr *)((char *)h + off);
        if (a->nla_len < NLA_HDRLEN || off + a->nla_len > h->nlmsg_len)
            return -1;
        if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
            a->nla_len >= NLA_HDRLEN + sizeof(struct nfqnl_msg_packet_hdr)) {
            struct nfqnl_msg_packet_hdr ph;
            memcpy(&ph, (char *)a + NLA_HDRLEN, sizeof ph);
            return ntohl(ph.packet_id);
        }
        off += NLA_ALIGN(a->nla_len);
    }
    return -1;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static double uniform(void) /* xorshift64*: reproducible with --seed */
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (double)((g_rng * 2685821657736338717u) >> 11) / 9007199254740992.0;
}

/* Reads every packet message waiting on fd; gives each a deadline. */
static int take_packets(int fd, uint16_t queue, uint64_t delay_ns, double loss)
{
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 0;
            if (errno == ENOBUFS) { /* the kernel dropped messages: their packets are lost */
                fprintf(stderr, "nfdelay: queue %u: receive buffer overflow\n", queue);
                continue;
            }
            fprintf(stderr, "nfdelay: recv: %s\n", strerror(errno));
            return -1;
        }
        uint64_t t = now_ns();
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
                continue;
            int64_t id = packet_id(h);
            if (id < 0)
                continue;
            g_packets++;
            if (loss > 0 && uniform() * 100.0 < loss) {
                g_dropped++;
                if (verdict(fd, queue, NFQNL_MSG_VERDICT, (uint32_t)id, NF_DROP))
                    return -1;
                continue;
            }
            if (g_tail - g_head == RING) { /* cannot happen: the queue's maxlen is below */
                fprintf(stderr, "nfdelay: more than %u packets held\n", RING);
                return -1;
            }
            g_ring[g_tail++ % RING] = (held_t){(uint32_t)id, t + delay_ns};
        }
    }
}

/* Accepts, with one batch verdict, every held packet due before now +
 * early_ns (0: only those whose deadline has passed). */
static int release_due(int fd, uint16_t queue, uint64_t early_ns)
{
    uint64_t t = now_ns();
    uint32_t last = g_head;
    while (last != g_tail && g_ring[last % RING].due_ns <= t + early_ns) {
        uint64_t due = g_ring[last % RING].due_ns, late = t > due ? t - due : 0;
        if (due > t) {
            g_early++;
            g_early_sum += due - t;
        }
        if (late > g_late_max)
            g_late_max = late;
        g_late[g_nlate++ % LATE_MAX] = late;
        g_late_sum += late;
        g_released++;
        last++;
    }
    if (last == g_head)
        return 0;
    int rc = verdict(fd, queue, NFQNL_MSG_VERDICT_BATCH, g_ring[(last - 1) % RING].id, NF_ACCEPT);
    g_head = last;
    return rc;
}

/* A timed sleep ends late by the timer's and the scheduler's wake-up time
 * (several microseconds on a virtual machine, as much as the delay itself
 * for the LAN profile).  We learn how late (a moving average of the timed
 * wake-ups) and set the alarm that much earlier; with --spin we then spin
 * the rest. */
#define SPIN_NS       2000u
#define WAKE_LATE_MAX 40000u
static uint64_t g_wake_late = 5000u;

static void learn_wake_late(uint64_t asleep, const struct timespec *tp)
{
    uint64_t want = asleep + (uint64_t)tp->tv_sec * 1000000000u + (uint64_t)tp->tv_nsec;
    uint64_t t = now_ns(), late = t > want ? t - want : 0;
    if (late > WAKE_LATE_MAX)
        late = WAKE_LATE_MAX; /* a preemption, not the timer: do not learn it whole */
    g_wake_late = (g_wake_late * 7 + late) / 8;
}

/* Busy-waits until due (at most SPIN_NS plus the learned lateness),
 * taking the packets that arrive meanwhile, so that their deadlines count
 * from their arrival, not from the end of the spin. */
static int spin_until(int fd, uint16_t queue, uint64_t delay_ns, double loss, uint64_t due)
{
    while (now_ns() < due) {
        if (take_packets(fd, queue, delay_ns, loss))
            return -1;
        __builtin_ia32_pause();
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(uint16_t queue)
{
    uint32_t n = g_nlate < LATE_MAX ? g_nlate : LATE_MAX;
    qsort(g_late, n, sizeof g_late[0], cmp_u64);
    fprintf(stderr,
            "nfdelay: queue %u: %llu packets, %llu dropped, released late by median %.1f us, "
            "mean %.1f us, max %.1f us; %llu early, by %.1f us on average\n",
            queue, (unsigned long long)g_packets, (unsigned long long)g_dropped,
            n ? (double)g_late[n / 2] / 1e3 : 0.0,
            g_released ? (double)g_late_sum / (double)g_released / 1e3 : 0.0, (double)g_late_max / 1e3,
            (unsigned long long)g_early, g_early ? (double)g_early_sum / (double)g_early / 1e3 : 0.0);
}

static void usage(void)
{
    fprintf(stderr, "usage: nfdelay --delay-us D [--queue N] [--loss PCT] [--seed S] [--no-rt] [--spin]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long delay_us = -1, queue = 0;
    double loss = 0;
    int rt = 1, spin = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(a, "--delay-us") == 0 && v) {
            delay_us = strtol(v, &end, 10);
        } else if (strcmp(a, "--queue") == 0 && v) {
            queue = strtol(v, &end, 10);
        } else if (strcmp(a, "--loss") == 0 && v) {
            loss = strtod(v, &end);
        } else if (strcmp(a, "--seed") == 0 && v) {
            g_rng = strtoull(v, &end, 0) | 1;
        } else if (strcmp(a, "--no-rt") == 0) {
            rt = 0;
            continue;
        } else if (strcmp(a, "--spin") == 0) {
            spin = 1;
            continue;
        } else {
            usage();
        }
        if (!end || *end || end == v)
            usage();
        i++;
    }
    if (delay_us < 0 || delay_us > 10000000 || queue < 0 || queue > 65535 || loss < 0 || loss > 100)
        usage();

    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake-ups at the deadline, not 50 us after */
    if (rt) {
        struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO, &sp))
            fprintf(stderr, "nfdelay: SCHED_FIFO: %s (delays may stretch under load)\n", strerror(errno));
    }

    int fd = queue_open((uint16_t)queue);
    if (fd < 0)
        return 1;
    printf("nfdelay: queue %ld ready\n", queue);
    fflush(stdout);

    uint64_t delay_ns = (uint64_t)delay_us * 1000u;
    int rc = 0;
    while (!g_stop) {
        struct timespec ts, *tp = NULL;
        if (g_head != g_tail) {
            uint64_t t = now_ns(), due = g_ring[g_head % RING].due_ns;
            if (spin && due > t && due - t <= g_wake_late + SPIN_NS) {
                /* closer than a wake-up would be late */
                if (spin_until(fd, (uint16_t)queue, delay_ns, loss, due) ||
                    release_due(fd, (uint16_t)queue, 0)) {
                    rc = 1;
                    break;
                }
                continue;
            }
            if (!spin && due <= t + g_wake_late) {
                /* a wake-up from now would come after it is due */
                if (release_due(fd, (uint16_t)queue, g_wake_late)) {
                    rc = 1;
                    break;
                }
                continue;
            }
            uint64_t wait = due > t ? due - t - g_wake_late : 0;
            ts.tv_sec = (time_t)(wait / 1000000000u);
            ts.tv_nsec = (long)(wait % 1000000000u);
            tp = &ts;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        uint64_t asleep = now_ns();
        int n = ppoll(&pfd, 1, tp, NULL);
        if (n == 0 && tp)
            learn_wake_late(asleep, tp);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "nfdelay: ppoll: %s\n", strerror(errno));
            rc = 1;
            break;
        }
        if (n > 0 && take_packets(fd, (uint16_t)queue, delay_ns, loss)) {
            rc = 1;
            break;
        }
        if (release_due(fd, (uint16_t)queue, spin ? 0 : g_wake_late)) {
            rc = 1;
            break;
        }
    }
    /* Whatever is still held goes out now: the rule is removed before we are
     * stopped, so nothing new arrives. */
    if (g_head != g_tail)
        verdict(fd, (uint16_t)queue, NFQNL_MSG_VERDICT_BATCH, g_ring[(g_tail - 1) % RING].id, NF_ACCEPT);
    report((uint16_t)queue);
    close(fd);
    return rc;
}
