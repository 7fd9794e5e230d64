divert(-1)
# parmacs_threads.m4 - the PARMACS macros for SPLASH-2/3 programs, threads
# model: CREATE starts pthreads, which share every global of the program.
#
# Use it as the program's macro file (in a SPLASH Makefile: MACROS = this
# file; `pkg-config --variable=parmacs_threads sdsm-compat` prints where it
# is installed) and build with `sdsmcc -pthread`: the threads are spread
# over the ranks (sdsmrun -n N) and the globals, the heap and the threads'
# stacks are sdsm's shared memory, so workers see what the master writes
# after CREATE, as on one machine.  The expansion is plain C and pthreads
# only, so the same file built with `cc -pthread` gives the native program
# to compare with.  parmacs.m4 is the fork model (CREATE starts ranks with a
# copy of the master's globals); docs/guide/threaded-and-legacy.md says
# which to choose.
#
# The helpers are defined once, by MAIN_ENV, and declared by every file's
# MAIN_ENV or EXTERN_ENV (a guard keeps a file that has both valid).  As in
# parmacs.m4, m4's builtins whose names C programs use are undefined at the
# end; `include' stays for SPLASH sources that read their headers with it.

define(`PMT_INCLUDES', `
#ifndef PARMACS_THREADS_DECLS
#define PARMACS_THREADS_DECLS
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define PAGE_SIZE 4096
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int set;
} parmacs_pause_t;
typedef struct {
    pthread_mutex_t lock;
    long sub, done;
} parmacs_gs_t;
void parmacs_create(void (*fn)(void), long n);
void parmacs_wait_for_end(void);
void parmacs_barinit(pthread_barrier_t *b, long n);
void parmacs_lockinit(pthread_mutex_t *l, long n);
void parmacs_condinit(pthread_cond_t *c);
void parmacs_pause_init(parmacs_pause_t *p);
void parmacs_pause_set(parmacs_pause_t *p, int set);
void parmacs_pause_wait(parmacs_pause_t *p);
void parmacs_gs_init(parmacs_gs_t *g);
long parmacs_getsub(parmacs_gs_t *g, long max, long procs);
void parmacs_fence(void);
unsigned long parmacs_clock(void);
void parmacs_roi(int end);
#endif
')
# The helpers, in the file with MAIN_ENV.  A thread table that grows: VOLREND
# creates a team per phase and waits for them all at its end.  The fence is
# a lock and unlock of one mutex: under sdsm a processor fence orders
# nothing between ranks, a mutex hand-over does.  Built by sdsmcc (its
# marker header defines SDSM_OMP_MARKER_H) the processor fence is left out:
# a fence instruction in the program turns on sdsm's support for plain
# flags, which every program pays for (home pages twinned, no home
# migration); natively it is kept.
define(`PMT_DEFINITIONS', `
#include <errno.h>
#include <time.h>
static pthread_mutex_t parmacs_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t *parmacs_tids;
static long parmacs_ntids, parmacs_maxtids;
static double parmacs_roi_start;
static void parmacs_die(const char *what, int err)
{
    fprintf(stderr, "parmacs: %s: %s\n", what, strerror(err));
    exit(1);
}
static void *parmacs_start(void *arg)
{
    void (*fn)(void) = *(void (**)(void))arg;
    free(arg);
    fn();
    return NULL;
}
static void parmacs_spawn(void (*fn)(void))
{
    void (**box)(void) = malloc(sizeof *box);
    if (!box)
        parmacs_die("`CREATE'", ENOMEM);
    *box = fn;
    pthread_mutex_lock(&parmacs_mu);
    if (parmacs_ntids == parmacs_maxtids) {
        long cap = parmacs_maxtids ? 2 * parmacs_maxtids : 64;
        pthread_t *t = realloc(parmacs_tids, (size_t)cap * sizeof *t);
        if (!t)
            parmacs_die("`CREATE'", ENOMEM);
        parmacs_tids = t;
        parmacs_maxtids = cap;
    }
    int err = pthread_create(&parmacs_tids[parmacs_ntids], NULL, parmacs_start, box);
    if (err)
        parmacs_die("`CREATE': pthread_create", err);
    parmacs_ntids++;
    pthread_mutex_unlock(&parmacs_mu);
}
void parmacs_create(void (*fn)(void), long n)
{
    if (n <= 0) {
        parmacs_spawn(fn);
        return;
    }
    for (long i = 1; i < n; i++)
        parmacs_spawn(fn);
    fn();
}
void parmacs_wait_for_end(void)
{
    for (;;) {
        pthread_t t;
        pthread_mutex_lock(&parmacs_mu);
        long left = parmacs_ntids;
        if (left) {
            t = parmacs_tids[0];
            memmove(parmacs_tids, parmacs_tids + 1, (size_t)--parmacs_ntids * sizeof t);
        }
        pthread_mutex_unlock(&parmacs_mu);
        if (!left)
            return;
        int err = pthread_join(t, NULL);
        if (err)
            parmacs_die("`WAIT_FOR_END': pthread_join", err);
    }
}
void parmacs_barinit(pthread_barrier_t *b, long n)
{
    if (n <= 0) {
        fprintf(stderr, "parmacs: `BARINIT'(b, n) needs the count of threads that meet at b (got %ld)\n", n);
        exit(1);
    }
    int err = pthread_barrier_init(b, NULL, (unsigned)n);
    if (err)
        parmacs_die("`BARINIT': pthread_barrier_init", err);
}
void parmacs_lockinit(pthread_mutex_t *l, long n)
{
    for (long i = 0; i < n; i++) {
        int err = pthread_mutex_init(&l[i], NULL);
        if (err)
            parmacs_die("`LOCKINIT': pthread_mutex_init", err);
    }
}
void parmacs_condinit(pthread_cond_t *c)
{
    int err = pthread_cond_init(c, NULL);
    if (err)
        parmacs_die("`CONDVARINIT': pthread_cond_init", err);
}
void parmacs_pause_init(parmacs_pause_t *p)
{
    parmacs_lockinit(&p->mu, 1);
    parmacs_condinit(&p->cv);
    p->set = 0;
}
void parmacs_pause_set(parmacs_pause_t *p, int set)
{
    pthread_mutex_lock(&p->mu);
    p->set = set;
    if (set)
        pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
void parmacs_pause_wait(parmacs_pause_t *p)
{
    pthread_mutex_lock(&p->mu);
    while (!p->set)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
void parmacs_gs_init(parmacs_gs_t *g)
{
    parmacs_lockinit(&g->lock, 1);
    g->sub = 0;
    g->done = 0;
}
long parmacs_getsub(parmacs_gs_t *g, long max, long procs)
{
    long s = -1;
    pthread_mutex_lock(&g->lock);
    if (g->sub <= max) {
        s = g->sub++;
    } else if (++g->done == procs) {
        g->sub = 0;
        g->done = 0;
    }
    pthread_mutex_unlock(&g->lock);
    return s;
}
void parmacs_fence(void)
{
#ifndef SDSM_OMP_MARKER_H
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
    pthread_mutex_lock(&parmacs_mu);
    pthread_mutex_unlock(&parmacs_mu);
}
static double parmacs_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
unsigned long parmacs_clock(void) { return (unsigned long)(parmacs_seconds() * 1e6); }
void parmacs_roi(int end)
{
    if (!end)
        parmacs_roi_start = parmacs_seconds();
    else
        fprintf(stderr, "parmacs: `SPLASH3_ROI_BEGIN' to `SPLASH3_ROI_END': %.6f s\n",
                parmacs_seconds() - parmacs_roi_start);
}
')
define(`MAIN_ENV', `PMT_INCLUDES PMT_DEFINITIONS')
define(`EXTERN_ENV', `PMT_INCLUDES')
define(`ENV', `')
define(`NEWPROC', `')
define(`MAIN_INITENV', `')
define(`MAIN_END', `{ fflush(stdout); exit(0); }')
# CREATE(fn): one thread (SPLASH-2); CREATE(fn, n): n-1 threads and the
# master runs the n-th before CREATE returns (SPLASH-3).  WAIT_FOR_END joins
# every thread created and not yet joined, whatever its count says.
define(`CREATE', `{ parmacs_create((void (*)(void))($1), ($2 + 0)); }')
define(`WAIT_FOR_END', `{ parmacs_wait_for_end(); }')
# The allocators end with `;' as SPLASH's own macro files do; the _F forms
# are expressions.  Under sdsmcc -pthread malloc is the shared heap.
define(`G_MALLOC', `malloc($1);')
define(`NU_MALLOC', `malloc($1);')
define(`G_MALLOC_F', `malloc($1)')
define(`NU_MALLOC_F', `malloc($1)')
define(`G_FREE', `free($1);')
define(`LOCKDEC', `pthread_mutex_t $1;')
define(`LOCKINIT', `{ parmacs_lockinit(&($1), 1); }')
define(`LOCK', `{ pthread_mutex_lock(&($1)); }')
define(`UNLOCK', `{ pthread_mutex_unlock(&($1)); }')
define(`ALOCKDEC', `pthread_mutex_t $1[$2];')
define(`ALOCKINIT', `{ parmacs_lockinit($1, $2); }')
define(`ALOCK', `{ pthread_mutex_lock(&($1)[$2]); }')
define(`AULOCK', `{ pthread_mutex_unlock(&($1)[$2]); }')
define(`AGETL', `(($1)[$2])')
define(`BARDEC', `pthread_barrier_t $1;')
define(`BARINIT', `{ parmacs_barinit(&($1), ($2 + 0)); }')
define(`BARRIER', `{ pthread_barrier_wait(&($1)); }')
define(`PAUSEDEC', `parmacs_pause_t $1;')
define(`PAUSEINIT', `{ parmacs_pause_init(&($1)); }')
define(`SETPAUSE', `{ parmacs_pause_set(&($1), 1); }')
define(`CLEARPAUSE', `{ parmacs_pause_set(&($1), 0); }')
define(`WAITPAUSE', `{ parmacs_pause_wait(&($1)); }')
define(`CONDVARDEC', `pthread_cond_t $1;')
define(`CONDVARINIT', `{ parmacs_condinit(&($1)); }')
define(`CONDVARWAIT', `{ pthread_cond_wait(&($1), &($2)); }')
define(`CONDVARSIGNAL', `{ pthread_cond_signal(&($1)); }')
define(`CONDVARBCAST', `{ pthread_cond_broadcast(&($1)); }')
define(`RELEASE_FENCE', `{ parmacs_fence(); }')
define(`ACQUIRE_FENCE', `{ parmacs_fence(); }')
define(`FULL_FENCE', `{ parmacs_fence(); }')
# GETSUB(gs, s, max, P): s gets the next subscript 0..max, then -1; once all
# P threads have got their -1 the counter starts over for the next phase.
define(`GSDEC', `parmacs_gs_t $1;')
define(`GSINIT', `{ parmacs_gs_init(&($1)); }')
define(`GETSUB', `{ ($2) = parmacs_getsub(&($1), ($3), ($4)); }')
define(`CLOCK', `{ ($1) = parmacs_clock(); }')
define(`SPLASH3_ROI_BEGIN', `{ parmacs_roi(0); }')
define(`SPLASH3_ROI_END', `{ parmacs_roi(1); }')
define(`AUG_ON', `')
define(`AUG_OFF', `')

undefine(`len')undefine(`index')undefine(`substr')undefine(`format')undefine(`eval')
undefine(`incr')undefine(`decr')undefine(`shift')undefine(`translit')
undefine(`sinclude')undefine(`syscmd')undefine(`esyscmd')undefine(`sysval')
undefine(`maketemp')undefine(`mkstemp')undefine(`regexp')undefine(`patsubst')
undefine(`unix')undefine(`__unix__')undefine(`__gnu__')undefine(`errprint')undefine(`indir')
undefine(`builtin')undefine(`traceon')undefine(`traceoff')undefine(`dumpdef')
undefine(`m4exit')undefine(`m4wrap')undefine(`changecom')undefine(`changequote')
undefine(`divnum')undefine(`undivert')undefine(`pushdef')undefine(`popdef')undefine(`ifdef')
undefine(`ifelse')undefine(`defn')undefine(`__file__')undefine(`__line__')undefine(`__program__')
undefine(`define')undefine(`undefine')
divert(0)dnl
