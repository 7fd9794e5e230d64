/* proto.c - protocol selection. */
#include "proto.h"

#include "core/config.h"
#include "core/log.h"
#include "core/status.h"
#include "mem/page.h"

const sdsm_proto_ops_t *sdsm_proto;

static const sdsm_proto_ops_t *const table[SDSM_PROTO_COUNT] = {
    [SDSM_PROTO_HLRC] = &sdsm_proto_hlrc,
    [SDSM_PROTO_UPDATE] = &sdsm_proto_update,
    [SDSM_PROTO_IBEC] = &sdsm_proto_ibec,
};

int sdsm_proto_select(int id)
{
    if (id < 0 || id >= SDSM_PROTO_COUNT || !table[id])
        return SDSM_EINVAL;
    sdsm_proto = sdsm_region.host_shared ? &sdsm_proto_host : table[id];
    if (sdsm_cfg.ibec_check && id != SDSM_PROTO_IBEC && sdsm_log_rank == 0)
        sdsm_warn("SDSM_IBEC_CHECK=1 has no effect under %s: it checks programs run under ibec",
                  sdsm_proto->name);
    return sdsm_proto->init();
}
