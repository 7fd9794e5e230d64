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
 *   OOM     text: why the rank died of SIGKILL, as its host's out-of-memory
 *           counts tell (oom.c); comes right before its EXIT
 *
 * Before its first frame the agent writes AGENT_MAGIC.  A remote shell may
 * print text of its own first (a login script's "Welcome to ..."): the
 * launcher skips everything before the magic (shown with --verbose), up to
 * AGENT_MAX_BANNER bytes.  When no magic comes (more text than that, or the
 * remote shell ends or stays silent without it) the job fails with
 * "unexpected output from the remote shell on host H: '...'", quoting it.
 * The magic starts with a NUL byte, which no text banner holds.
 *
 * The other way, after the key line, the launcher writes to the agent's
 * stdin: AGENT_IN_BEAT every SDSM_HEARTBEAT; AGENT_IN_USR1 or
 * AGENT_IN_USR2 to pass SIGUSR1 or SIGUSR2 on to the ranks; AGENT_IN_DATA,
 * a 16-bit length (network order) and that many bytes of rank 0's
 * standard input (at most AGENT_IN_MAX_DATA: a frame fits PIPE_BUF, so it
 * is written whole, never cut by a heartbeat); AGENT_IN_EOF at its end.  Each side takes a link silent for
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

enum agent_in_type {
    AGENT_IN_BEAT = '\n',
    AGENT_IN_USR1 = '1',
    AGENT_IN_USR2 = '2',
    AGENT_IN_DATA = 'I',
    AGENT_IN_EOF = 'E',
};
#define AGENT_IN_MAX_DATA (4096u - 3)

enum agent_type {
    AGENT_HELLO = 'H',
    AGENT_PID = 'P',
    AGENT_STDOUT = 'O',
    AGENT_STDERR = 'E',
    AGENT_STOPPED = 'S',
    AGENT_EXIT = 'X',
    AGENT_FAIL = 'F',
    AGENT_BEAT = 'B',
    AGENT_OOM = 'M',
};

/* agentin.c, in the agent: the launcher's bytes after the key line. */
#include <stdbool.h>
#include <stddef.h>
void agentin_init(int rank0_w); /* rank 0's stdin pipe here, or -1 */
/* Parse bytes read from stdin; forward(sig) for each signal to pass on. */
void agentin_bytes(const uint8_t *p, size_t n, void (*forward)(int sig));
bool agentin_paused(void); /* enough waits for rank 0: stop reading stdin */
int agentin_fd(void);      /* rank 0's pipe while bytes wait for it, else -1 */
void agentin_flush(void);  /* write what waits, as far as the pipe takes it */
void agentin_close(void);  /* rank 0 is gone, or the agent stops */

struct agent_frame {
    uint8_t type;
    uint8_t pad[3];
    uint32_t rank;
    uint32_t len;
};

#endif
