/*
 * msg.c - the message type table and header validation.
 */
#include "msg.h"

#include "core/status.h"

#define FIXED(n, len)       [SDSM_MSG_##n] = {#n, len, len, 0, NULL}
#define ARRAY(n, min, elem) [SDSM_MSG_##n] = {#n, min, SDSM_MAX_PAYLOAD, elem, NULL}

sdsm_msg_info_t sdsm_msg_table[SDSM_MSG_NTYPES] = {
    [SDSM_MSG_FETCH] = {"FETCH", 8, 12, 0, NULL}, /* 8 or 12 (a stride): the handler checks */
    ARRAY(FETCH_REP, 8, 0),                       /* exact size checked against the page size */
    FIXED(HOME_REQ, 8),
    ARRAY(HOME_REP, 8, 2), /* homes of the pages after it: the handler checks */
    ARRAY(DIFF, 0, 0),     /* self-describing; decoded by mem/diff.c */
    FIXED(DIFF_ACK, 0),
    ARRAY(INVAL, 4, 4),
    FIXED(INVAL_ACK, 0),
    ARRAY(BAR_ARRIVE, 40, 4), /* flags, sdsm_coll_t, count */
    ARRAY(BAR_RELEASE, 8, 4),
    FIXED(LOCK_REQ, 8),
    ARRAY(LOCK_GRANT, 4, 0), /* diffL chain checked by the lock code */
    ARRAY(LOCK_REL, 8, 0),
    FIXED(COND_WAIT, 8),
    FIXED(COND_ACK, 0),
    FIXED(COND_SIGNAL, 8),
    FIXED(COND_WAKE, 4),
    FIXED(ALLOC_REQ, 64),
    [SDSM_MSG_ALLOC_REP] = {"ALLOC_REP", 4, 4 + 512, 0, NULL},
    [SDSM_MSG_STATS] = {"STATS", 0, SDSM_MAX_PAYLOAD, 8, NULL},
    FIXED(BYE, 0),
    ARRAY(FWD_DIFF, 0, 0),
    ARRAY(PUSH, 8, 0),
    ARRAY(LEAVE, 4, 4),
    ARRAY(HOME_DATA, 8, 0),
    ARRAY(FETCH_REPZ, 8, 0), /* runs checked by the receiver */
    ARRAY(FETCH_RUN, 8, 0),  /* whole pages, checked against the page size */
    FIXED(COLL, 32),
    FIXED(HANG_NOTE, 4),
    FIXED(HANG_QUERY, 0),
    [SDSM_MSG_HANG_STATE] = {"HANG_STATE", 0, SDSM_HANG_STATE_MAX, 0, NULL},
    FIXED(HEARTBEAT, 0),
    FIXED(FETCH_ZC, 8),
    FIXED(ZC_HELLO, 8 + SDSM_ZC_TOKEN),
    FIXED(ATOMIC, 24),
    FIXED(ATOMIC_REP, 12),
    ARRAY(BAR_UP, 44, 4), /* flags, sdsm_coll_t, root, count */
    FIXED(SOFT_PROBE, 8),
    FIXED(SOFT_REP, 16),
    FIXED(SOFT_CONFIRM, 8),
    FIXED(LOCK_FWD, 8),
    FIXED(LOCK_PASSED, 8),
    FIXED(LIFT, 4),
    ARRAY(PUBLISH_ASK, 0, 4), /* empty, or one page to itself: the handler checks */
};

void sdsm_msg_set_handler(sdsm_msg_type_t t, sdsm_msg_handler_t h) { sdsm_msg_table[t].handler = h; }

const char *sdsm_msg_name(unsigned type)
{
    if (type == 0 || type >= SDSM_MSG_NTYPES)
        return NULL;
    return sdsm_msg_table[type].name;
}

int sdsm_msg_check(const sdsm_hdr_t *h, size_t page_size)
{
    if (h->len > SDSM_MAX_PAYLOAD)
        return SDSM_EPEER;
    if (h->type == 0 || h->type >= SDSM_MSG_NTYPES)
        return SDSM_EPROTO;
    const sdsm_msg_info_t *m = &sdsm_msg_table[h->type];
    if (h->len < m->min_len || h->len > m->max_len)
        return SDSM_EPROTO;
    if (m->multiple && (h->len - m->min_len) % m->multiple)
        return SDSM_EPROTO;
    if ((h->type == SDSM_MSG_FETCH_REP || h->type == SDSM_MSG_PUSH || h->type == SDSM_MSG_HOME_DATA) &&
        h->len != 8 + page_size)
        return SDSM_EPROTO;
    if (h->type == SDSM_MSG_FETCH_RUN &&
        (page_size == 0 || (h->len - 8) % page_size || (h->len - 8) / page_size < 2 ||
         (h->len - 8) / page_size > SDSM_FETCH_RUN_MAX))
        return SDSM_EPROTO;
    return 0;
}
