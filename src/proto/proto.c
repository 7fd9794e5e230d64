/* proto.c - protocol selection. */
#include "proto.h"

#include <errno.h>

#include "core/config.h"

const sdsm_proto_ops_t *sdsm_proto;

static const sdsm_proto_ops_t *const table[SDSM_PROTO_COUNT] = {
    [SDSM_PROTO_HLRC] = &sdsm_proto_hlrc,
    [SDSM_PROTO_UPDATE] = &sdsm_proto_update,
    [SDSM_PROTO_IBEC] = &sdsm_proto_ibec,
};

int sdsm_proto_select(int id)
{
    if (id < 0 || id >= SDSM_PROTO_COUNT || !table[id])
        return -EINVAL;
    sdsm_proto = table[id];
    return sdsm_proto->init();
}
