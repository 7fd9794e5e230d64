/*
 * agent.h - what an agent (sdsmrun --agent, agent.c) tells the launcher
 * (agents.c) on its stdout: frames of a 12-byte header in network byte order
 * and a payload.
 *
 *   HELLO   rank 0, no payload: the agent has the key and can run the program;
 *           its ranks are being started
 *   PID     u32 pid of the rank on its host
 *   STDOUT, STDERR  bytes the rank wrote (at most AGENT_MAX_DATA)
 *   STOPPED u32 signal that stopped the rank
 *   EXIT    u32 the rank's wait status
 *   FAIL    u32 exit status, then text: the agent cannot go on (e.g. the
 *           program is missing on its host); it exits next
 *   BEAT    rank 0, no payload: a heartbeat, sent when nothing else was
 *           within SDSM_HEARTBEAT
 *
 * Before its first frame the agent writes AGENT_MAGIC.  A remote shell may
 * print text of its own first (a login script's "Welcome to ..."): the
 * launcher skips everything before the magic (shown with --verbose), up to
 * AGENT_MAX_BANNER bytes.  When no magic comes (more text than that, or the
 * remote shell ends or stays silent without it) the job fails with
 * "unexpected output from the remote shell on host H: '...'", quoting it.
 * The magic starts with a NUL byte, which no text banner holds.
 *
 * The other way, after the key line, the launcher writes one byte to the
 * agent's stdin every SDSM_HEARTBEAT.  Each side takes a link silent for
 * SDSM_PEER_TIMEOUT as lost: the launcher fails the job naming the host (a
 * stopped or hung agent, a cut-off host), the agent stops its ranks and
 * exits (the launcher or its connection is gone).
 */
#ifndef SDSMRUN_AGENT_H
#define SDSMRUN_AGENT_H

#include <stdint.h>

#define AGENT_MAX_DATA   (64u * 1024)
#define AGENT_MAX_TEXT   400u
#define AGENT_MAGIC      "\0sdsmrun agent 1\n"
#define AGENT_MAGIC_LEN  (sizeof AGENT_MAGIC - 1)
#define AGENT_MAX_BANNER (64u * 1024)

enum agent_type {
    AGENT_HELLO = 'H',
    AGENT_PID = 'P',
    AGENT_STDOUT = 'O',
    AGENT_STDERR = 'E',
    AGENT_STOPPED = 'S',
    AGENT_EXIT = 'X',
    AGENT_FAIL = 'F',
    AGENT_BEAT = 'B',
};

struct agent_frame {
    uint8_t type;
    uint8_t pad[3];
    uint32_t rank;
    uint32_t len;
};

#endif
