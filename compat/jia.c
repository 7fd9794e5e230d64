/*
 * jia.c - JIAJIA (jia.h) on sdsm.
 *
 * Placement: sdsm places a block at one home at allocation time, and the
 * cyclic layouts of jia_alloc2/3/4 are made with sdsm_set_home, effective
 * at the next barrier (JIAJIA programs synchronize before sharing data).
 * Condition flags live in a small shared table allocated by jia_init, under
 * one reserved lock and a condition variable per flag; the reserved ids sit
 * at the top of sdsm's id space, far above JIAJIA's lock ids.
 */
#include "jia.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sdsm.h>

#define CV_LOCK  0x7fff0000
#define CV_COND0 0x7fff0001

int jiapid;
int jiahosts = 1;

static volatile int *cvflags;
static double t0;
static int next_home;

void jia_init(int argc, char **argv)
{
    if (sdsm_init(&argc, &argv))
        exit(1);
    jiapid = sdsm_rank();
    jiahosts = sdsm_nprocs();
    cvflags = sdsm_calloc(JIA_MAX_CVS, sizeof(int), 0);
    t0 = sdsm_wtime();
}

void jia_exit(void)
{
    sdsm_finalize();
    exit(0);
}

void jia_error(char *msg, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, msg);
    vsnprintf(text, sizeof text, msg ? msg : "", ap);
    va_end(ap);
    sdsm_abort(1, "jia_error: %s", text);
}

static void *alloc_at(int size, int home, const char *call)
{
    if (size <= 0)
        sdsm_abort(1, "%s: size %d is not positive", call, size);
    if (home < 0 || home >= jiahosts)
        sdsm_abort(1, "%s: host %d is not in [0, %d)", call, home, jiahosts);
    return sdsm_alloc((size_t)size, home);
}

unsigned long jia_alloc(int size)
{
    int home = next_home;
    next_home = (next_home + 1) % jiahosts;
    return (unsigned long)(uintptr_t)alloc_at(size, home, "jia_alloc");
}

unsigned long jia_alloc2p(int size, int host)
{
    return (unsigned long)(uintptr_t)alloc_at(size, host, "jia_alloc2p");
}

/* Blocks of blocks[k % n] bytes at hosts start, start+1, ... cyclically (a page
 * two blocks share goes with the later one). */
static unsigned long alloc_cyclic(int size, const int *blocks, int n, int start, const char *call)
{
    for (int i = 0; i < n; i++)
        if (blocks[i] <= 0)
            sdsm_abort(1, "%s: block size %d is not positive", call, blocks[i]);
    char *p = alloc_at(size, start, call);
    size_t off = 0, total = (size_t)size;
    for (int k = 0, host = start; off < total; k++, host = (host + 1) % jiahosts) {
        size_t len = (size_t)blocks[k % n];
        if (len > total - off)
            len = total - off;
        if (host != start)
            sdsm_set_home(p + off, len, host);
        off += len;
    }
    return (unsigned long)(uintptr_t)p;
}

unsigned long jia_alloc3(int size, int block, int starthost)
{
    return alloc_cyclic(size, &block, 1, starthost, "jia_alloc3");
}

unsigned long jia_alloc2(int size, int block) { return alloc_cyclic(size, &block, 1, 0, "jia_alloc2"); }

unsigned long jia_alloc4(int size, int *blocks, int n, int starthost)
{
    if (!blocks || n <= 0)
        sdsm_abort(1, "jia_alloc4: %d block sizes given", blocks ? n : 0);
    return alloc_cyclic(size, blocks, n, starthost, "jia_alloc4");
}

void jia_lock(int lockid) { sdsm_lock(lockid); }
void jia_unlock(int lockid) { sdsm_unlock(lockid); }
void jia_barrier(void) { sdsm_barrier(); }
void jia_wait(void) { sdsm_barrier(); }

static void check_cv(int cv, const char *call)
{
    if (cv < 0 || cv >= JIA_MAX_CVS)
        sdsm_abort(1, "%s: condition %d is not in [0, %d)", call, cv, JIA_MAX_CVS);
}

void jia_setcv(int cv)
{
    check_cv(cv, "jia_setcv");
    sdsm_lock(CV_LOCK);
    cvflags[cv] = 1;
    sdsm_cond_broadcast(CV_COND0 + cv);
    sdsm_unlock(CV_LOCK);
}

void jia_resetcv(int cv)
{
    check_cv(cv, "jia_resetcv");
    sdsm_lock(CV_LOCK);
    cvflags[cv] = 0;
    sdsm_unlock(CV_LOCK);
}

void jia_waitcv(int cv)
{
    check_cv(cv, "jia_waitcv");
    sdsm_lock(CV_LOCK);
    while (!cvflags[cv])
        sdsm_cond_wait(CV_COND0 + cv, CV_LOCK);
    sdsm_unlock(CV_LOCK);
}

float jia_clock(void) { return (float)(sdsm_wtime() - t0); }

unsigned long jia_alloc1(int size) { return jia_alloc(size); }
unsigned int jia_startstat(void) { return 0; }
unsigned int jia_stopstat(void) { return 0; }
void jia_config(int what, int on) { (void)what, (void)on; }
int jia_lock_index;
