/*
 * agentin.c - the agent's side of its stdin after the key line (agent.h):
 * heartbeats, signals to pass on, and rank 0's standard input when rank 0
 * runs on this host.  The remote shell may cut the launcher's frames
 * anywhere, so they are reassembled here byte by byte.
 *
 * Rank 0 may read its input slower than it comes: up to IN_HOLD bytes wait
 * here, then the agent stops reading its stdin (agentin_paused) until rank 0
 * takes some, so the launcher's writes, and its reading of its own stdin,
 * wait too: the same backpressure a rank on the launcher's host gives.
 */
#define _GNU_SOURCE /* same feature set in every file of the launcher */
#include "launcher.h"
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_HOLD (256u * 1024)

static struct {
    int w;          /* rank 0's stdin pipe (non-blocking); -1 when none or closed */
    uint8_t hdr[3]; /* a frame's header being read */
    size_t have;    /* bytes of hdr read */
    size_t data;    /* bytes of the current data frame still to come */
    uint8_t *buf;   /* bytes waiting for rank 0 */
    size_t len, cap;
    bool eof; /* AGENT_IN_EOF came: close w once buf is out */
} in_state = {.w = -1};

void agentin_init(int rank0_w) { in_state.w = rank0_w; }

void agentin_close(void)
{
    if (in_state.w >= 0)
        close(in_state.w);
    in_state.w = -1;
    in_state.len = 0;
}

static void keep(const uint8_t *p, size_t n)
{
    if (in_state.w < 0 || n == 0)
        return; /* no rank 0 here, or it closed its input: dropped */
    if (in_state.len + n > in_state.cap) {
        size_t cap = in_state.cap ? 2 * in_state.cap : 65536;
        while (cap < in_state.len + n)
            cap *= 2;
        uint8_t *nb = realloc(in_state.buf, cap);
        if (!nb) {
            agentin_close(); /* rank 0 sees its input end rather than a hole in it */
            return;
        }
        in_state.buf = nb;
        in_state.cap = cap;
    }
    memcpy(in_state.buf + in_state.len, p, n);
    in_state.len += n;
}

/* A byte between frames. */
static void control(uint8_t b, void (*forward)(int sig))
{
    if (b == AGENT_IN_USR1 || b == AGENT_IN_USR2)
        forward(b == AGENT_IN_USR1 ? SIGUSR1 : SIGUSR2);
    else if (b == AGENT_IN_EOF)
        in_state.eof = true;
    else if (b == AGENT_IN_DATA)
        in_state.hdr[in_state.have++] = b;
    /* AGENT_IN_BEAT, or anything else: its arrival was the news */
}

void agentin_bytes(const uint8_t *p, size_t n, void (*forward)(int sig))
{
    while (n > 0) {
        if (in_state.data) {
            size_t take = n < in_state.data ? n : in_state.data;
            keep(p, take);
            in_state.data -= take;
            p += take;
            n -= take;
        } else if (in_state.have) {
            in_state.hdr[in_state.have++] = *p++;
            n--;
            if (in_state.have == 3) {
                in_state.data = (size_t)in_state.hdr[1] << 8 | in_state.hdr[2];
                in_state.have = 0;
            }
        } else {
            control(*p++, forward);
            n--;
        }
    }
    agentin_flush();
}

bool agentin_paused(void) { return in_state.len >= IN_HOLD; }

int agentin_fd(void) { return in_state.w >= 0 && in_state.len ? in_state.w : -1; }

void agentin_flush(void)
{
    while (in_state.w >= 0 && in_state.len) {
        ssize_t n = write(in_state.w, in_state.buf, in_state.len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) { /* EPIPE: rank 0 closed its input or is gone */
            agentin_close();
            return;
        }
        memmove(in_state.buf, in_state.buf + n, in_state.len - (size_t)n);
        in_state.len -= (size_t)n;
    }
    if (in_state.eof && in_state.w >= 0)
        agentin_close();
}
