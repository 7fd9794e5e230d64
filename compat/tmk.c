/*
 * tmk.c - TreadMarks (Tmk.h) on sdsm.
 *
 * Tmk_distribute is called by one process (usually 0, right after it
 * allocates), and the bytes must be in every other process by the next
 * barrier.  The caller copies them into a block of its own shared memory
 * and appends (address, length, copy) to a log that Tmk_startup allocated
 * collectively; after each barrier every process copies the entries made
 * by the others since it last looked into its own memory, at the same
 * address (the addresses agree: Tmk_startup checks it).
 * Errors stop the job with sdsm's message naming the call and the rank.
 */
#include "Tmk.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sdsm.h>

#define LOG_LOCK 0x7ffe0000 /* reserved, far above the programs' lock ids */
#define LOG_CAP  4096

typedef struct entry {
    void *ptr, *copy;
    size_t len;
    int from;
} entry_t;

typedef struct dlog {
    long count;
    entry_t e[LOG_CAP];
} dlog_t;

unsigned Tmk_proc_id;
unsigned Tmk_nprocs = 1;

static dlog_t *dlog;
static long seen;

void Tmk_startup(int argc, char **argv)
{
    if (sdsm_init(&argc, &argv))
        exit(1);
    /* Tmk_distribute hands pointers to globals around: the addresses must agree. */
    if (sdsm_check_addresses())
        exit(1);
    Tmk_proc_id = (unsigned)sdsm_rank();
    Tmk_nprocs = (unsigned)sdsm_nprocs();
    if (!(dlog = sdsm_calloc(1, sizeof *dlog, 0)))
        exit(1);
}

void Tmk_exit(int status)
{
    sdsm_finalize();
    exit(status);
}

void *Tmk_malloc(size_t size) { return sdsm_alloc_local(size); }
void Tmk_free(void *ptr) { sdsm_free_local(ptr); }

void Tmk_distribute(const void *ptr, size_t size)
{
    if (!ptr || !size)
        sdsm_abort(1, "Tmk_distribute(%p, %zu): nothing to distribute", ptr, size);
    void *copy = sdsm_alloc_local(size);
    if (!copy)
        exit(1);
    sdsm_lock(LOG_LOCK);
    if (dlog->count == LOG_CAP)
        sdsm_abort(1, "Tmk_distribute: more than %d distributions in the run", LOG_CAP);
    memcpy(copy, ptr, size); /* inside the critical section: ibec carries it with the lock */
    dlog->e[dlog->count++] =
        (entry_t){.ptr = (void *)ptr, .copy = copy, .len = size, .from = (int)Tmk_proc_id};
    sdsm_unlock(LOG_LOCK);
}

/* After a barrier: take in what the others distributed before it. */
static void take_distributions(void)
{
    sdsm_lock(LOG_LOCK);
    for (; seen < dlog->count; seen++) {
        entry_t e = dlog->e[seen];
        if (e.from != (int)Tmk_proc_id)
            memcpy(e.ptr, e.copy, e.len);
    }
    sdsm_unlock(LOG_LOCK);
}

void Tmk_barrier(unsigned id)
{
    (void)id;
    sdsm_barrier();
    take_distributions();
}

void Tmk_lock_acquire(unsigned id) { sdsm_lock((int)id); }
void Tmk_lock_release(unsigned id) { sdsm_unlock((int)id); }
