/*
 * fault.c - one cell of the fault matrix: rank 1 fails in a given way at a
 * given phase of a 3-rank job, and the job must end on its own.
 *
 *   fault PHASE FAILURE
 *
 * PHASE (where rank 1 is when it fails; the other ranks are blocked waiting
 * for it, or about to be):
 *   preinit   before sdsm_init (the others are inside sdsm_init)
 *   init      inside sdsm_init (rank 2 starts its own init late)
 *   postinit  after sdsm_init, before any allocation (the others then block
 *             in a collective sdsm_alloc)
 *   alloc     inside a collective sdsm_alloc (rank 2 joins it late)
 *   barrier   inside sdsm_barrier (rank 2 joins it late)
 *   lock      holding lock 5 while ranks 0 and 2 wait in sdsm_lock(5)
 *   fetch     home of pages the others keep fetching (sdsm_refresh, then
 *             read every page, over and over for FETCH_MS)
 *   cond      the one to set a flag and broadcast condition 3 while ranks 0
 *             and 2 wait for it in sdsm_cond_wait(3, 7)
 *   finalize  inside sdsm_finalize (rank 2 starts its own finalize late)
 *
 * FAILURE:
 *   kill9     the process is killed by SIGKILL
 *   stop      the process is stopped by SIGSTOP (and never continued)
 *   abort     sdsm_abort(7, ...)
 *   exit3     exit(3)
 *   freeze    every thread is held in a ptrace stop by a child of the process:
 *             alive and silent, like a rank whose host is cut off, and
 *             unlike a SIGSTOP its parent (sdsmrun) is not told: only the
 *             other ranks' heartbeats can notice it
 *   return    leaves with status 0 without sdsm_finalize: a return from
 *             main where rank 1's main thread is free; inside a call (init,
 *             alloc, barrier, finalize) a second thread calls exit(0), which
 *             is what returning from main comes to.
 *
 * Inside a call, rank 1's failure comes from a second thread FAIL_AFTER_MS
 * after the main thread entered the call; the late rank waits LATE_MS, long
 * enough that the call cannot have completed.  Ranks other than 1 never see
 * a failure of their own: whatever they print after the blocking call
 * ("passed ...") means the job went on without rank 1.  The wrapper
 * (tests/mp/mp_expect.sh) checks the status, the launcher's message naming
 * rank 1, the time taken and that no process is left.
 */
#define _GNU_SOURCE
#include <sdsm.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL_AFTER_MS 300
#define LATE_MS       5000
#define FETCH_MS      8000
#define FETCH_PAGES   64

enum phase { PREINIT, INIT, POSTINIT, ALLOC, BARRIER, LOCK, FETCH, COND, FINALIZE, NPHASES };
enum failure { KILL9, STOP, ABORT, EXIT3, RETURN, FREEZE, NFAILURES };

static const char *const phase_names[NPHASES] = {"preinit", "init",  "postinit", "alloc",   "barrier",
                                                 "lock",    "fetch", "cond",     "finalize"};
static const char *const failure_names[NFAILURES] = {"kill9", "stop", "abort", "exit3", "return", "freeze"};

static enum phase phase;
static enum failure failure;
static int me = -1;
static int VICTIM = 1, LATE_RANK = 2; /* FAULT_RANK=R makes R the victim */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/*
 * A child seizes every thread of this process and interrupts it, then waits
 * until the process is gone (killed by the launcher) or the child itself is
 * killed (the threads then run again, into the signal that stopped the job).
 */
static __attribute__((noreturn)) void freeze(void)
{
    pid_t target = getpid();
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* Yama: a child may trace us */
    pid_t c = fork();
    if (c == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int)target);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (e->d_name[0] != '.') {
                pid_t t = (pid_t)atoi(e->d_name);
                if (ptrace(PTRACE_SEIZE, t, 0, 0) == 0)
                    ptrace(PTRACE_INTERRUPT, t, 0, 0);
                else
                    fprintf(stderr, "fault: cannot freeze thread %d: %s\n", (int)t, strerror(errno));
            }
        if (d)
            closedir(d);
        for (;;) {
            int st;
            pid_t w = waitpid(-1, &st, __WALL);
            if ((w < 0 && errno == ECHILD) || (w == target && (WIFEXITED(st) || WIFSIGNALED(st))))
                _exit(0);
        }
    }
    for (;;)
        pause();
}

/* Rank 1 fails now.  `in_call`: the main thread is inside an sdsm call. */
static void fail_now(int in_call)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    fprintf(stderr, "fault: rank %d fails now: %s during %s, mp-mark-ms=%lld\n", VICTIM,
            failure_names[failure], phase_names[phase],
            (long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000);
    fflush(stderr);
    switch (failure) {
    case KILL9: kill(getpid(), SIGKILL); break;
    case STOP:
        kill(getpid(), SIGSTOP);
        /* Continued only by the launcher stopping the job: wait for its SIGTERM. */
        for (;;)
            pause();
    case ABORT: sdsm_abort(7, "fault: rank %d aborts during %s", VICTIM, phase_names[phase]);
    case EXIT3: exit(3);
    case RETURN:
        if (in_call)
            exit(0);
        return;
    case FREEZE: freeze();
    default: break;
    }
    abort(); /* SIGKILL returned */
}

static void *fail_later(void *arg)
{
    (void)arg;
    sleep_ms(FAIL_AFTER_MS);
    fail_now(1);
    return NULL;
}

/* Rank 1, about to enter a blocking call: a thread fails it from inside. */
static void arm(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fail_later, NULL)) {
        perror("fault: pthread_create");
        exit(2);
    }
    pthread_detach(t);
}

static int victim_at(enum phase p) { return me == VICTIM && phase == p; }

static void late_at(enum phase p)
{
    if (me == LATE_RANK && phase == p)
        sleep_ms(LATE_MS);
}

static void passed(const char *what)
{
    fprintf(stderr, "fault: rank %d passed %s although rank %d failed\n", me, what, VICTIM);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The others fetch pages homed at the victim for FETCH_MS; it fails meanwhile. */
static void fetch_loop(void)
{
    size_t len = (size_t)FETCH_PAGES * 4096;
    volatile long *pages = sdsm_alloc(len, VICTIM);
    if (!pages)
        sdsm_abort(1, "fault: rank %d: sdsm_alloc of the fetched pages returned NULL", me);
    if (me == VICTIM)
        for (size_t i = 0; i < len / sizeof(long); i += 512)
            pages[i] = (long)i;
    sdsm_barrier();
    if (me == VICTIM)
        arm();
    long sum = 0, until = now_ms() + FETCH_MS;
    while (now_ms() < until) {
        sdsm_refresh((void *)pages, len);
        for (size_t i = 0; i < len / sizeof(long); i += 512)
            sum += pages[i];
    }
    if (sum < 0)
        fprintf(stderr, "fault: impossible sum\n");
    passed("its fetch loop");
}

int main(int argc, char **argv)
{
    int p = argc == 3 ? lookup(argv[1], phase_names, NPHASES) : -1;
    int f = argc == 3 ? lookup(argv[2], failure_names, NFAILURES) : -1;
    if (p < 0 || f < 0) {
        fprintf(stderr, "usage: fault PHASE FAILURE\n"
                        "  PHASE: preinit init postinit alloc barrier lock fetch cond finalize\n"
                        "  FAILURE: kill9 stop abort exit3 return freeze\n");
        return 2;
    }
    phase = (enum phase)p;
    failure = (enum failure)f;
    /* Known before sdsm_init: set by sdsmrun, a PMIx launcher (mpirun) or
     * a PMI-2 one (srun --mpi=pmi2, mpiexec.hydra). */
    const char *r = getenv("SDSM_RANK") ? getenv("SDSM_RANK") : getenv("PMIX_RANK");
    if (!r)
        r = getenv("PMI_RANK");
    me = r ? atoi(r) : -1;
    const char *fr = getenv("FAULT_RANK");
    if (fr) {
        VICTIM = atoi(fr);
        LATE_RANK = VICTIM == 2 ? 0 : 2;
    }

    if (victim_at(PREINIT)) {
        fail_now(0);
        return 0;
    }
    if (victim_at(INIT))
        arm();
    late_at(INIT);
    int rc = sdsm_init(&argc, &argv);
    if (rc) {
        fprintf(stderr, "fault: rank %d: sdsm_init: %s\n", me, sdsm_strerror(rc));
        return 1;
    }
    if (phase <= INIT)
        passed("sdsm_init");

    if (victim_at(POSTINIT)) {
        fail_now(0);
        return 0;
    }
    if (victim_at(ALLOC))
        arm();
    late_at(ALLOC);
    volatile long *v = sdsm_alloc(4096, 0);
    if (!v)
        sdsm_abort(1, "fault: rank %d: sdsm_alloc returned NULL", me);
    if (phase <= ALLOC)
        passed("sdsm_alloc");

    if (victim_at(BARRIER))
        arm();
    late_at(BARRIER);
    sdsm_barrier();
    if (phase <= BARRIER)
        passed("sdsm_barrier");

    if (phase == LOCK) {
        if (me == VICTIM)
            sdsm_lock(5);
        sdsm_barrier(); /* now everyone knows rank 1 holds lock 5 */
        if (me == VICTIM) {
            *v = 1;
            sleep_ms(FAIL_AFTER_MS);
            fail_now(0);
            return 0;
        }
        sdsm_lock(5);
        passed("sdsm_lock(5)");
        sdsm_unlock(5);
    }

    if (phase == FETCH)
        fetch_loop();
    if (phase == COND && me == VICTIM) {
        arm();
        sleep_ms(LATE_MS);
        sdsm_lock(7);
        v[8] = 1;
        sdsm_cond_broadcast(3);
        sdsm_unlock(7);
    } else if (phase == COND) {
        sdsm_lock(7);
        while (!v[8])
            sdsm_cond_wait(3, 7);
        sdsm_unlock(7);
        passed("sdsm_cond_wait");
    }

    if (victim_at(FINALIZE))
        arm();
    late_at(FINALIZE);
    sdsm_finalize();
    if (phase == FINALIZE && me != VICTIM)
        passed("sdsm_finalize");
    return 0;
}
