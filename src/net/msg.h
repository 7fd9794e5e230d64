/*
 * msg.h - the peer message types: an enum and one table (name, payload
 * bounds, handler).  Upper layers install the handlers at init; the
 * transport checks every header against this table before a handler sees a
 * byte of payload, and handlers check the payload's meaning (page numbers,
 * run bounds) before they use it.
 */
#ifndef SDSM_NET_MSG_H
#define SDSM_NET_MSG_H

#include "net/wire.h"

#include <stddef.h>
#include <stdint.h>

/* Most pages one FETCH may ask for (the faulting page and a prefetch
 * window), so the most one FETCH_RUN carries. */
#define SDSM_FETCH_RUN_MAX 33u
/* Longest description of a rank's state in a hang report. */
#define SDSM_HANG_STATE_MAX 2048u
/* FETCH flag: the asker can read the pages from the home's heap itself
 * (same host, proto/zcopy.c); the home may answer with FETCH_ZC. */
#define SDSM_FETCH_ZC 1u
/* PUBLISH_ASK's flag, to itself: a publish ended (fetches waiting for one are tried again). */
#define SDSM_PUBLISH_DONE 1u
/* Bytes of the random token that identifies a rank's heap file. */
#define SDSM_ZC_TOKEN 32u

typedef enum sdsm_msg_type {
    SDSM_MSG_NONE = 0,
    SDSM_MSG_FETCH,     /* u32 page, u32 count[, i32 stride] -> FETCH_RUN/REP/REPZ, seq echoed */
    SDSM_MSG_FETCH_REP, /* u32 page, u32 0, page bytes */
    SDSM_MSG_HOME_REQ,  /* u32 page, u32 pages to claim   -> HOME_REP (first touch) */
    SDSM_MSG_HOME_REP,  /* u32 page, i32 home, i16 homes of the next pages */
    SDSM_MSG_DIFF,      /* diff batch (mem/diff.h), flags: SDSM_DIFF_EAGER -> DIFF_ACK */
    SDSM_MSG_DIFF_ACK,  /* empty */
    SDSM_MSG_INVAL,     /* u32 pages[]                    -> INVAL_ACK */
    SDSM_MSG_INVAL_ACK, /* empty */
    SDSM_MSG_BAR_ARRIVE, /* u32 flags, sdsm_coll_t, u32 n, u32 pages[n] written, {u32 first, u32 count, i32 home}[] moves */
    SDSM_MSG_BAR_RELEASE, /* u32 n, {u32 page, i32 writer}[n] merged notices, moves[] */
    SDSM_MSG_LOCK_REQ,    /* u32 lock, u32 stamp (ibec) */
    SDSM_MSG_LOCK_GRANT,  /* u32 lock, then ibec's {u32 stamp, u32 len, diff batch}[] */
    SDSM_MSG_LOCK_REL,    /* u32 lock, u32 stamp, then ibec's diff batch */
    SDSM_MSG_COND_WAIT,   /* u32 cond, u32 wake id                     -> COND_ACK */
    SDSM_MSG_COND_ACK,    /* empty */
    SDSM_MSG_COND_SIGNAL, /* u32 cond, u32 all */
    SDSM_MSG_COND_WAKE,   /* u32 cond */
    SDSM_MSG_ALLOC_REQ,   /* sdsm_coll_t, alloc.c's req_t   -> ALLOC_REP */
    SDSM_MSG_ALLOC_REP,   /* i32 status, text */
    SDSM_MSG_STATS,       /* sdsm_stats_snap_t, at finalize */
    SDSM_MSG_BYE,         /* empty: orderly close follows */
    SDSM_MSG_FWD_DIFF,    /* diff batch forwarded by a home to a copy holder -> INVAL_ACK */
    SDSM_MSG_PUSH,        /* u32 page, u32 0, page bytes: update protocol */
    SDSM_MSG_LEAVE,       /* u32 pages[]: drop the sender from these copysets */
    SDSM_MSG_HOME_DATA,   /* u32 page, u32 0, page bytes: contents for a new home */
    SDSM_MSG_FETCH_REPZ,  /* u32 page, u32 0, runs: a mostly-zero page as a diff against zeros */
    SDSM_MSG_FETCH_RUN,   /* u32 first, u32 count (2..SDSM_FETCH_RUN_MAX), count page images */
    SDSM_MSG_COLL,        /* sdsm_coll_t: a collective call, announced to rank 0 */
    SDSM_MSG_HANG_NOTE,   /* u32 seconds: a wait of the sender's is that old (to rank 0) */
    SDSM_MSG_HANG_QUERY,  /* empty: rank 0 asks what the receiver is waiting for -> HANG_STATE */
    SDSM_MSG_HANG_STATE,  /* text (at most SDSM_HANG_STATE_MAX bytes) */
    SDSM_MSG_HEARTBEAT,   /* empty: sent on a link idle for SDSM_HEARTBEAT (heartbeat.c) */
    SDSM_MSG_FETCH_ZC,    /* u32 first, u32 count: served, read them from my heap (proto/zcopy.c) */
    SDSM_MSG_ZC_HELLO,    /* u32 pid, i32 heap fd, token: my heap may be opened (proto/zcopy.c) */
    SDSM_MSG_ATOMIC,      /* u32 page, u16 offset, u8 size, u8 op, u64 value, u64 expected -> ATOMIC_REP */
    SDSM_MSG_ATOMIC_REP,  /* u64 old, i32 status (1 done, 0 compare failed, < 0 refused) */
    SDSM_MSG_BAR_UP, /* u32 flags, sdsm_coll_t, u32 root, u32 n, {u32 page, i32 writer}[n], moves[]: a subtree arrived */
    SDSM_MSG_SOFT_PROBE, /* u32 first, u32 count: a manager asks the rank that claimed them ahead -> SOFT_REP */
    SDSM_MSG_SOFT_REP, /* u32 first, u32 count, u64 kept (bit i: page first + i touched, kept; else given up) */
    SDSM_MSG_SOFT_CONFIRM, /* u32 first, u32 count: pages the sender claimed ahead and has touched */
    SDSM_MSG_LOCK_FWD,     /* u32 lock, i32 rank: after you, pass the lock to rank (sync/lock.c) */
    SDSM_MSG_LOCK_PASSED,  /* u32 lock, i32 rank: I passed the lock to rank (to its manager) */
    SDSM_MSG_LIFT, /* u32 gen: the pages the sender's DIFF_HOLD batches of generations up to gen hold here are free */
    SDSM_MSG_PUBLISH_ASK, /* empty: a thread waits for pages the receiver's barrier arrival holds at the sender: publish
                             now; u32 page, to itself only: ask the ranks whose arrival holds it here */
    SDSM_MSG_NTYPES
} sdsm_msg_type_t;

/* Handler for a validated frame.  Returns 0, or a negative code when the
 * payload's meaning is invalid (the transport logs and counts the rejection). */
typedef int (*sdsm_msg_handler_t)(int src, const sdsm_hdr_t *h, const uint8_t *payload);

typedef struct sdsm_msg_info {
    const char *name;
    uint32_t min_len;
    uint32_t max_len;  /* SDSM_MAX_PAYLOAD for arrays; 0 for empty messages */
    uint32_t multiple; /* payload length must be min_len + k * multiple (0: any) */
    sdsm_msg_handler_t handler;
} sdsm_msg_info_t;

extern sdsm_msg_info_t sdsm_msg_table[SDSM_MSG_NTYPES];

void sdsm_msg_set_handler(sdsm_msg_type_t t, sdsm_msg_handler_t h);
const char *sdsm_msg_name(unsigned type);

/*
 * Validate a header from a peer.  0 if acceptable; SDSM_EPROTO if the type
 * or length is wrong but the frame can be skipped; SDSM_EPEER if the length
 * (above SDSM_MAX_PAYLOAD) cannot be trusted to find the next frame: the
 * peer's stream is lost.  `page_size` bounds FETCH_REP
 * and FETCH_RUN (a whole number of pages, 2 to SDSM_FETCH_RUN_MAX).
 */
int sdsm_msg_check(const sdsm_hdr_t *h, size_t page_size);

#endif
