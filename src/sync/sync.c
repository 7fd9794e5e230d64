/* sync.c - installs the synchronization message handlers. */
#include "sync.h"
#include "watch.h"

int sdsm_barrier_init(const int *host_of);
int sdsm_lock_init(void);
int sdsm_cond_init(void);

int sdsm_sync_init(const int *host_of)
{
    int rc = sdsm_barrier_init(host_of);
    if (!rc)
        rc = sdsm_hostbar_init();
    if (!rc)
        rc = sdsm_lock_init();
    if (!rc)
        rc = sdsm_cond_init();
    if (!rc)
        rc = sdsm_watch_init();
    return rc;
}
