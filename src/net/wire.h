/*
 * wire.h - the frame every sdsm connection carries (peer links and the
 * launcher's control links alike).
 *
 * A frame is a fixed 16-byte header in little-endian host order (all ranks of
 * a job run the same binary on the same architecture) followed by `len` bytes
 * of payload.  Nothing in a header is trusted: the receiver checks the type
 * against its table and the length against the type's bounds before it reads
 * a single payload byte.
 */
#ifndef SDSM_NET_WIRE_H
#define SDSM_NET_WIRE_H

#include <stdint.h>

typedef struct sdsm_hdr {
    uint32_t len;   /* payload bytes after this header */
    uint16_t type;  /* sdsm_msg_type_t or sdsm_ctrl_type_t */
    uint16_t flags; /* per-type */
    uint32_t epoch; /* sender's completed-barrier count (peer links) */
    uint32_t seq;   /* request id echoed by the reply; 0 when unused */
} sdsm_hdr_t;

_Static_assert(sizeof(sdsm_hdr_t) == 16, "wire header must be 16 bytes");

/* Hard ceiling on one payload; anything larger is a protocol error. */
#define SDSM_MAX_PAYLOAD (64u << 20)

/*
 * Launcher control link (rank <-> sdsmrun), after the authentication
 * handshake of auth.h.  The rank is always the connecting side.
 */
typedef enum sdsm_ctrl_type {
    SDSM_CTRL_REGISTER = 1, /* rank -> launcher: sdsm_ctrl_register_t */
    SDSM_CTRL_TABLE = 2,    /* launcher -> rank: u32 n, then n x sdsm_ctrl_addr_t */
    SDSM_CTRL_ABORT = 3,    /* rank -> launcher: i32 code, then reason text (no NUL) */
    SDSM_CTRL_DONE = 4,     /* rank -> launcher: empty; rank finalized cleanly */
    SDSM_CTRL_QUERY = 5,    /* launcher -> rank: empty; what are you waiting for? */
    SDSM_CTRL_STATE = 6,    /* rank -> launcher: the answer, text (no NUL, <= SDSM_CTRL_MAX_REASON) */
    SDSM_CTRL_LOST = 7,     /* rank -> launcher: u32 rank whose link it lost, and u32 ms if that
                             * rank went silent that long (peer timeout); it exits as a consequence */
    SDSM_CTRL_NTYPES
} sdsm_ctrl_type_t;

typedef struct sdsm_ctrl_addr {
    uint32_t ipv4; /* network byte order */
    uint16_t port; /* network byte order */
    uint16_t cpu1; /* 1 + the lowest CPU this rank may run on (0: not told); ranks of one
                       host with the same value are taken to share their CPUs, ranks with
                       different ones to be bound to CPUs of their own (boot.c) */
} sdsm_ctrl_addr_t;

typedef struct sdsm_ctrl_register {
    uint32_t rank;
    uint32_t pid;
    sdsm_ctrl_addr_t addr; /* where this rank listens for its peers */
} sdsm_ctrl_register_t;

#define SDSM_CTRL_MAX_REASON 4096

#endif
