/*
 * ifaddr.c - local IPv4 addresses and the choice of one (see ifaddr.h).
 */
#include "net/ifaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/status.h"

#define ITEM_MAX 64

/* One item of a spec: an interface name, or a network (mask != 0 or a /0). */
typedef struct {
    char name[IFNAMSIZ];
    uint32_t net, mask; /* host byte order */
    int is_net;
} item_t;

static int parse_item(const char *s, size_t len, item_t *it)
{
    char buf[ITEM_MAX];
    memset(it, 0, sizeof *it);
    if (len == 0 || len >= sizeof buf)
        return SDSM_EINVAL;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *slash = strchr(buf, '/');
    if (!slash) {
        if (len >= IFNAMSIZ || strpbrk(buf, " \t/:"))
            return SDSM_EINVAL;
        memcpy(it->name, buf, len + 1);
        return 0;
    }
    *slash = '\0';
    struct in_addr a;
    char *end;
    errno = 0;
    long bits = strtol(slash + 1, &end, 10);
    if (inet_pton(AF_INET, buf, &a) != 1 || errno || end == slash + 1 || *end || bits < 0 || bits > 32)
        return SDSM_EINVAL;
    it->is_net = 1;
    it->mask = bits ? ~0u << (32 - bits) : 0;
    it->net = ntohl(a.s_addr) & it->mask;
    return 0;
}

/* Call fn on each item of spec; stops at the first non-zero return. */
static int each_item(const char *spec, int (*fn)(const item_t *, void *), void *arg)
{
    for (const char *p = spec;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        item_t it;
        int rc = parse_item(p, len, &it);
        if (rc || (rc = fn ? fn(&it, arg) : 0))
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int sdsm_ifaddr_check(const char *spec, char *err, size_t errlen)
{
    if (spec && each_item(spec, NULL, NULL) == 0)
        return 0;
    snprintf(err, errlen,
             "SDSM_IFACE=%s: expected interface names or networks (a.b.c.d/n), "
             "separated by commas",
             spec ? spec : "");
    return SDSM_EINVAL;
}

typedef struct {
    const struct ifaddrs *ifa;
    uint32_t addr; /* host byte order */
} match_t;

static int item_matches(const item_t *it, void *arg)
{
    const match_t *m = arg;
    if (it->is_net)
        return (m->addr & it->mask) == it->net;
    return strcmp(it->name, m->ifa->ifa_name) == 0;
}

static int usable(const struct ifaddrs *i)
{
    return i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP);
}

static uint32_t addr_of(const struct sockaddr *sa)
{
    return ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr;
}

int sdsm_ifaddr_list(const char *spec, uint32_t *out, int max)
{
    if (spec && each_item(spec, NULL, NULL))
        return SDSM_EINVAL;
    struct ifaddrs *all;
    if (getifaddrs(&all))
        return SDSM_ESYS; /* errno says why */
    int n = 0;
    for (struct ifaddrs *i = all; i; i = i->ifa_next) {
        if (!usable(i))
            continue;
        uint32_t a = addr_of(i->ifa_addr);
        match_t m = {.ifa = i, .addr = ntohl(a)};
        if (spec ? each_item(spec, item_matches, &m) != 1 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        int dup = 0;
        for (int k = 0; k < n && k < max; k++)
            dup |= out[k] == a;
        if (dup)
            continue;
        if (n < max)
            out[n] = a;
        n++;
    }
    freeifaddrs(all);
    return n;
}

/* The source address the kernel would use toward dst (no packet is sent:
 * connecting a datagram socket only looks up the route).  0, or SDSM_ESYS
 * with errno saying why. */
static int route_source(uint32_t dst, uint32_t *src)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return SDSM_ESYS;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = dst};
    socklen_t l = sizeof a;
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &l))
        rc = SDSM_ESYS;
    else
        *src = a.sin_addr.s_addr;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int sdsm_ifaddr_pick(const uint32_t *cands, int n)
{
    struct ifaddrs *all;
    if (n > 0 && getifaddrs(&all) == 0) {
        for (int c = 0; c < n; c++)
            for (struct ifaddrs *i = all; i; i = i->ifa_next) {
                if (!usable(i) || !i->ifa_netmask || (i->ifa_flags & IFF_LOOPBACK))
                    continue;
                uint32_t mask = addr_of(i->ifa_netmask);
                if (mask && (cands[c] & mask) == (addr_of(i->ifa_addr) & mask)) {
                    freeifaddrs(all);
                    return c;
                }
            }
        freeifaddrs(all);
    }
    uint32_t src;
    for (int c = 0; c < n; c++)
        if (route_source(cands[c], &src) == 0)
            return c;
    return -1;
}

int sdsm_ifaddr_default(const char *spec, uint32_t *out)
{
    uint32_t a[1];
    int n;
    if (spec) {
        if ((n = sdsm_ifaddr_list(spec, a, 1)) < 1)
            return n < 0 ? n : SDSM_EINVAL;
        *out = a[0];
        return 0;
    }
    struct in_addr probe; /* TEST-NET-1: only its route is looked at */
    inet_pton(AF_INET, "192.0.2.1", &probe);
    uint32_t src;
    if (route_source(probe.s_addr, &src) == 0 && src != 0 && (ntohl(src) >> 24) != 127) {
        *out = src;
        return 0;
    }
    if ((n = sdsm_ifaddr_list(NULL, a, 1)) < 1)
        return n < 0 ? n : SDSM_EPEER;
    *out = a[0];
    return 0;
}

int sdsm_ifaddr_parse_list(const char *s, uint32_t *out, int max, uint16_t *port)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon)
        return SDSM_EINVAL;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
        return SDSM_EINVAL;
    *port = (uint16_t)p;
    int n = 0;
    for (const char *q = s; q < colon;) {
        const char *comma = memchr(q, ',', (size_t)(colon - q));
        const char *stop = comma ? comma : colon;
        char ip[INET_ADDRSTRLEN];
        struct in_addr a;
        if ((size_t)(stop - q) >= sizeof ip)
            return SDSM_EINVAL;
        memcpy(ip, q, (size_t)(stop - q));
        ip[stop - q] = '\0';
        if (inet_pton(AF_INET, ip, &a) != 1)
            return SDSM_EINVAL;
        if (n < max)
            out[n] = a.s_addr;
        n++;
        q = comma ? comma + 1 : colon;
        if (comma && q == colon)
            return SDSM_EINVAL;
    }
    return n > 0 ? n : SDSM_EINVAL;
}
