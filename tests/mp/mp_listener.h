/*
 * mp_listener.h - find a process's listening TCP socket from outside the
 * runtime, the way a stranger on the same host could: the socket inodes in
 * /proc/PID/fd matched against the LISTEN entries of /proc/net/tcp.
 */
#ifndef SDSM_TESTS_MP_LISTENER_H
#define SDSM_TESTS_MP_LISTENER_H

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct mp_endpoint {
    uint32_t ip; /* network order; 0 = none found */
    uint32_t port;
} mp_endpoint_t;

/* First listening IPv4 TCP socket of process pid (0: this one), or ip = port = 0. */
static inline mp_endpoint_t mp_listener(pid_t pid)
{
    mp_endpoint_t e = {0, 0};
    unsigned long inodes[256];
    int ni = 0;
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", pid ? (int)pid : (int)getpid());
    DIR *d = opendir(dir);
    if (!d)
        return e;
    struct dirent *de;
    while ((de = readdir(d)) && ni < 256) {
        char path[320], target[128];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        ssize_t l = readlink(path, target, sizeof target - 1);
        if (l <= 0)
            continue;
        target[l] = '\0';
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) == 1)
            inodes[ni++] = ino;
    }
    closedir(d);
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return e;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned ip, port, st;
        unsigned long ino;
        if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &ip, &port, &st, &ino) !=
                4 ||
            st != 0x0A)
            continue;
        for (int i = 0; i < ni; i++)
            if (inodes[i] == ino) {
                /* /proc shows the address as the kernel stores it: network order in a u32. */
                e.ip = ip ? ip : htonl(INADDR_LOOPBACK);
                e.port = port;
                fclose(f);
                return e;
            }
    }
    fclose(f);
    return e;
}

#endif
