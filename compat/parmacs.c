/*
 * parmacs.c - run-time support of the PARMACS macros (parmacs.m4) on sdsm.
 * See parmacs.h for the model: rank 0 is the master, the k-th CREATE starts
 * the function on rank k with a copy of the master's globals.
 *
 * Hand-off: a control block allocated collectively in MAIN_INITENV holds
 * one slot per rank; the master fills rank k's slot (function, snapshot of
 * its globals) under the control lock, copying the snapshot inside the
 * critical section so that even lock-bound protocols carry it, and signals
 * rank k's condition.  A worker whose process returns counts itself under
 * the same lock and waits for the next CREATE, or for MAIN_END.
 */
#include "parmacs.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sdsm.h>

/* Reserved sdsm ids, below jia.h's and far above the objects' ids. */
#define PM_LOCK     0x7ff00000
#define PM_END_COND 0x7ff00001
#define PM_GO_COND0 0x7ff00002 /* + rank, up to MAX_RANKS */
#define PM_FENCE    0x7ff10000
/* Object ids: OBJ_BASE + rank * OBJ_PER_RANK + the rank's counter. */
#define OBJ_BASE     0x40000000
#define OBJ_PER_RANK (1 << 17)
#define MAX_RANKS    4096

typedef struct slot {
    void (*fn)(void);
    void *snap;
    size_t len;
    int go;   /* started by the master, not yet taken up by the rank */
    int done; /* its process returned: the rank waits for the next CREATE */
} slot_t;

typedef struct ctl {
    int finished, end;
    slot_t slot[];
} ctl_t;

static ctl_t *ctl;
static int me, nprocs;
static unsigned nobj;
static double roi_t0 = -1;
static int saved_stdout = -1;

/*
 * The master's own record of the ranks: what each was last given (never,
 * CREATE(fn), CREATE(fn, n)), the processes started and those WAIT_FOR_END
 * has counted, whether a CREATE(fn, n) came since, and its snapshots of the
 * globals that a rank may not have read yet.
 */
enum { NEVER, BY_CREATE1, BY_CREATEN };
static unsigned char *given;
static int nstarted, waited, createn;
static void **snaps;
static int nsnaps;

/* ---- the program's globals: writable segments of the main program ---- */

typedef struct range {
    uintptr_t lo, hi;
} range_t;

#define MAX_RANGES 64
static range_t segs[MAX_RANGES], skip[MAX_RANGES];
static int nsegs, nskip;

#if defined(__x86_64__)
#define COPY_RELOC R_X86_64_COPY
#elif defined(__aarch64__)
#define COPY_RELOC R_AARCH64_COPY
#endif

/* d_ptr values are absolute once the dynamic linker has adjusted them, else offsets. */
static uintptr_t dyn_addr(uintptr_t base, uintptr_t v) { return v < base ? base + v : v; }

/*
 * Objects the program copies from shared libraries (copy relocations:
 * stdout, environ, optind...) sit in its bss but belong to the library's
 * state in this process; they keep this rank's values.
 */
static void find_copy_relocs(const struct dl_phdr_info *info, const ElfW(Dyn) * dyn)
{
#ifdef COPY_RELOC
    uintptr_t base = info->dlpi_addr, rela = 0, relasz = 0, symtab = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_RELA)
            rela = dyn_addr(base, d->d_un.d_ptr);
        else if (d->d_tag == DT_RELASZ)
            relasz = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB)
            symtab = dyn_addr(base, d->d_un.d_ptr);
    }
    if (!rela || !symtab)
        return;
    const ElfW(Rela) *r = (const ElfW(Rela) *)rela;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
    for (size_t i = 0; i < relasz / sizeof *r && nskip < MAX_RANGES; i++)
        if (ELF64_R_TYPE(r[i].r_info) == COPY_RELOC) {
            uintptr_t lo = base + r[i].r_offset;
            skip[nskip++] = (range_t){lo, lo + syms[ELF64_R_SYM(r[i].r_info)].st_size};
        }
#else
    (void)info;
    (void)dyn;
#endif
}

static int scan_program(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size;
    (void)unused;
    uintptr_t base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && nsegs < MAX_RANGES)
            segs[nsegs++] = (range_t){lo, hi};
        else if (ph->p_type == PT_GNU_RELRO && nskip < MAX_RANGES) /* read-only after start-up */
            skip[nskip++] = (range_t){lo, hi};
        else if (ph->p_type == PT_DYNAMIC)
            find_copy_relocs(info, (const ElfW(Dyn) *)lo);
    }
    return 1; /* the main program only */
}

static int in_ranges(const range_t *v, int n, uintptr_t a)
{
    for (int i = 0; i < n; i++)
        if (a >= v[i].lo && a < v[i].hi)
            return 1;
    return 0;
}

/* Bytes of globals: the writable segments; skipped bytes are copied but not restored. */
static size_t globals_size(void)
{
    size_t n = 0;
    for (int i = 0; i < nsegs; i++)
        n += segs[i].hi - segs[i].lo;
    return n;
}

/*
 * Byte loops through volatile pointers, not memcpy: the segments hold the
 * sanitizers' poisoned red zones between globals, which a checked copy
 * would report, and the copy must not be turned back into memcpy.
 */
#define NO_SANITIZE __attribute__((no_sanitize_address))

static NO_SANITIZE void globals_save(uint8_t *out)
{
    volatile uint8_t *o = out;
    for (int i = 0; i < nsegs; i++)
        for (uintptr_t a = segs[i].lo; a < segs[i].hi; a++)
            *o++ = *(volatile const uint8_t *)a;
}

/* Around the skipped objects; runs once per worker. */
static NO_SANITIZE void globals_restore(const uint8_t *in)
{
    volatile const uint8_t *p = in;
    for (int i = 0; i < nsegs; i++)
        for (uintptr_t a = segs[i].lo; a < segs[i].hi; a++, p++)
            if (!in_ranges(skip, nskip, a))
                *(volatile uint8_t *)a = *p;
}

/* ---- start, create, end ---- */

/* Before main (MAIN_ENV's constructor): the workers' copies of the master's
 * sequential start are silent; their stdout comes back when CREATE starts them. */
void sdsm_pm_quiet(void)
{
    const char *r = getenv("SDSM_RANK");
    if (!r || strcmp(r, "0") == 0 || atoi(r) <= 0)
        return;
    int null = open("/dev/null", O_WRONLY);
    fflush(stdout);
    if (null < 0 || (saved_stdout = dup(STDOUT_FILENO)) < 0)
        return;
    dup2(null, STDOUT_FILENO);
    close(null);
}

/* What the rank's start buffered is dropped into /dev/null, not printed after. */
static void restore_stdout(void)
{
    if (saved_stdout >= 0) {
        fflush(stdout);
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
        saved_stdout = -1;
    }
}

/*
 * A worker runs each process the master gives it, from a fresh copy of the
 * master's globals, and waits for the next until MAIN_END; its pages stay
 * served meanwhile.
 */
static void worker(void)
{
    for (;;) {
        sdsm_lock(PM_LOCK);
        while (!ctl->slot[me].go && !ctl->end)
            sdsm_cond_wait(PM_GO_COND0 + me, PM_LOCK);
        slot_t s = ctl->slot[me];
        if (s.go && s.len == globals_size())
            globals_restore(s.snap);
        ctl->slot[me].go = 0;
        sdsm_unlock(PM_LOCK);
        if (!s.go)
            break;
        if (s.len != globals_size())
            sdsm_abort(1, "CREATE: the master's globals are %zu bytes, rank %d's %zu: not the same program",
                       s.len, me, globals_size());
        restore_stdout();
        s.fn();
        fflush(stdout);
        sdsm_lock(PM_LOCK);
        ctl->slot[me].done = 1;
        ctl->finished++;
        sdsm_cond_broadcast(PM_END_COND);
        sdsm_unlock(PM_LOCK);
    }
    sdsm_finalize();
    exit(0);
}

/* MAIN_INITENV, or the first call that needs the runtime (G_MALLOC before it). */
void sdsm_pm_init(int argc, char **argv)
{
    if (ctl)
        return;
    if (sdsm_init(argc ? &argc : NULL, argv ? &argv : NULL) || sdsm_check_addresses())
        exit(1);
    me = sdsm_rank();
    nprocs = sdsm_nprocs();
    if (nprocs > MAX_RANKS)
        sdsm_abort(1, "MAIN_INITENV: %d ranks; PARMACS programs run on at most %d", nprocs, MAX_RANKS);
    /* The globals are copied into this process: the runtime must not live among them. */
    dl_iterate_phdr(scan_program, NULL);
    if (in_ranges(segs, nsegs, (uintptr_t)&ctl))
        sdsm_abort(1, "MAIN_INITENV: libsdsm_compat is linked into the program statically; PARMACS "
                      "programs need the shared libsdsm_compat and libsdsm");
    ctl = sdsm_calloc(1, sizeof(ctl_t) + (size_t)nprocs * sizeof(slot_t), 0);
    if (!ctl)
        exit(1);
    if (me != 0)
        worker();
    given = calloc((size_t)nprocs, 1);
    snaps = calloc((size_t)nprocs, sizeof *snaps);
    if (!given || !snaps)
        sdsm_abort(1, "MAIN_INITENV: no memory for the master's table of %d ranks", nprocs);
}

static void need_init(void)
{
    if (!ctl)
        sdsm_pm_init(0, 0);
}

/* Snapshots no rank still has to read are freed (PM_LOCK held). */
static void drop_snapshots(void)
{
    int keep = 0;
    for (int i = 0; i < nsnaps; i++) {
        int pending = 0;
        for (int k = 1; k < nprocs; k++)
            pending |= ctl->slot[k].go && ctl->slot[k].snap == snaps[i];
        if (pending)
            snaps[keep++] = snaps[i];
        else
            sdsm_free_local(snaps[i]);
    }
    nsnaps = keep;
}

/*
 * A rank for the next process (PM_LOCK held): one never given a process or
 * whose process has returned.  If none, with `wait`, one still running a
 * process of an earlier CREATE(fn, n) is waited for: the master's share of
 * that CREATE has returned, so those processes are past their last
 * barrier.  -1 if none will come.
 */
static int free_rank(int wait, int *running)
{
    for (;;) {
        int byn = 0;
        *running = 0;
        for (int k = 1; k < nprocs; k++) {
            if (given[k] == NEVER || ctl->slot[k].done)
                return k;
            byn += given[k] == BY_CREATEN;
            ++*running;
        }
        if (!wait || !byn)
            return -1;
        sdsm_cond_wait(PM_END_COND, PM_LOCK);
    }
}

static void too_few_ranks(int process)
{
    sdsm_abort(1,
               "CREATE: process %d created, but the job has %d ranks (one per PARMACS "
               "process, the master included): start it with sdsmrun -n %d or more",
               process, nprocs, process);
}

/* m processes of fn on free ranks, all from one snapshot of the globals. */
static void start(void (*fn)(void), int m, int createn_form)
{
    size_t len = globals_size();
    void *snap = sdsm_alloc_local(len ? len : 1);
    if (!snap)
        sdsm_abort(1, "CREATE: no shared memory for a %zu-byte copy of the globals on rank 0: %s", len,
                   sdsm_strerror(sdsm_last_error()));
    sdsm_lock(PM_LOCK);
    drop_snapshots();
    snaps[nsnaps++] = snap;
    globals_save(snap); /* inside the critical section: ibec carries it with the lock */
    for (int i = 0; i < m; i++) {
        int running, k = free_rank(createn_form, &running);
        if (k < 0)
            too_few_ranks(running + 1 + (m - i));
        ctl->slot[k] = (slot_t){.fn = fn, .snap = snap, .len = len, .go = 1};
        given[k] = createn_form ? BY_CREATEN : BY_CREATE1;
        nstarted++;
        sdsm_cond_signal(PM_GO_COND0 + k);
    }
    sdsm_unlock(PM_LOCK);
}

/*
 * count 0: SPLASH-2's CREATE(fn), one process.  count n: SPLASH-3's
 * CREATE(fn, n), n processes of which the master is the last and runs fn
 * before CREATE returns, as the threads of SPLASH-3's own macros do.
 */
void sdsm_pm_create(void (*fn)(void), int count)
{
    need_init();
    if (me != 0)
        sdsm_abort(1, "CREATE: called by rank %d; only the master (rank 0) creates processes", me);
    if (count <= 0) {
        start(fn, 1, 0);
        return;
    }
    if (count > nprocs)
        too_few_ranks(count);
    start(fn, count - 1, 1);
    createn = 1;
    fn();
}

static int running_processes(void)
{
    int n = 0;
    for (int k = 1; k < nprocs; k++)
        n += given[k] != NEVER && !ctl->slot[k].done;
    return n;
}

/*
 * After CREATE(fn, n), WAIT_FOR_END(n) counts the master's own share (which
 * has run): every process started so far is waited for.  After CREATE(fn),
 * WAIT_FOR_END(n) waits for n more processes to return.
 */
void sdsm_pm_wait_for_end(int n)
{
    need_init();
    if (me != 0)
        sdsm_abort(1, "WAIT_FOR_END: called by rank %d; only the master (rank 0) waits", me);
    if (!createn && n > nstarted - waited)
        sdsm_abort(1, "WAIT_FOR_END(%d): only %d processes were created", n, nstarted - waited);
    sdsm_lock(PM_LOCK);
    if (createn) {
        while (running_processes() > 0)
            sdsm_cond_wait(PM_END_COND, PM_LOCK);
        waited = ctl->finished;
    } else {
        while (ctl->finished - waited < n)
            sdsm_cond_wait(PM_END_COND, PM_LOCK);
        waited += n;
    }
    createn = 0;
    sdsm_unlock(PM_LOCK);
}

void sdsm_pm_main_end(int status)
{
    need_init();
    if (me == 0) { /* ranks without a process are waiting for a CREATE */
        sdsm_lock(PM_LOCK);
        ctl->end = 1;
        for (int k = 1; k < nprocs; k++)
            sdsm_cond_signal(PM_GO_COND0 + k);
        sdsm_unlock(PM_LOCK);
    }
    fflush(stdout);
    sdsm_finalize();
    exit(status);
}

/* ---- memory, synchronization objects, clock ---- */

void *sdsm_pm_malloc(size_t size)
{
    need_init(); /* SPLASH programs allocate before MAIN_INITENV too */
    void *p = sdsm_alloc_local(size ? size : 1);
    if (!p)
        sdsm_abort(1, "G_MALLOC(%zu) failed on rank %d: %s", size, me, sdsm_strerror(sdsm_last_error()));
    return p;
}

void sdsm_pm_free(void *p) { sdsm_free_local(p); }

static int next_id(const char *call)
{
    if (nobj >= OBJ_PER_RANK)
        sdsm_abort(1, "%s: rank %d initialized more than %d locks, pauses and condition variables", call, me,
                   OBJ_PER_RANK);
    return OBJ_BASE + me * OBJ_PER_RANK + (int)nobj++;
}

void sdsm_pm_lock_init(sdsm_pm_lock_t *l, int n)
{
    need_init();
    for (int i = 0; i < n; i++)
        l[i].id = next_id("LOCKINIT");
}

static int valid_id(int id) { return id >= OBJ_BASE && id < OBJ_BASE + MAX_RANKS * OBJ_PER_RANK; }

static int lock_id(const sdsm_pm_lock_t *l, const char *call)
{
    if (!valid_id(l->id))
        sdsm_abort(1,
                   "%s: the lock at %p was never initialized (LOCKINIT/ALOCKINIT), or its "
                   "initialization is not visible on rank %d yet",
                   call, (const void *)l, me);
    return l->id;
}

void sdsm_pm_lock(sdsm_pm_lock_t *l) { sdsm_lock(lock_id(l, "LOCK")); }
void sdsm_pm_unlock(sdsm_pm_lock_t *l) { sdsm_unlock(lock_id(l, "UNLOCK")); }

void sdsm_pm_barrier(sdsm_pm_bar_t *b, int n)
{
    (void)b;
    if (n != nprocs)
        sdsm_abort(1,
                   "BARRIER(.., %d) on rank %d, but the job has %d ranks: a barrier meets every "
                   "rank, so start the job with sdsmrun -n %d",
                   n, me, nprocs, n);
    sdsm_barrier();
}

void sdsm_pm_pause_init(sdsm_pm_pause_t *p)
{
    need_init();
    p->id = next_id("PAUSEINIT");
    p->cond = p->id;
    p->flag = 0;
}

static int pause_id(const sdsm_pm_pause_t *p, const char *call)
{
    if (!valid_id(p->id))
        sdsm_abort(1, "%s: the pause at %p was never initialized (PAUSEINIT)", call, (const void *)p);
    return p->id;
}

void sdsm_pm_pause_set(sdsm_pm_pause_t *p)
{
    int id = pause_id(p, "SETPAUSE");
    sdsm_lock(id);
    p->flag = 1;
    sdsm_cond_broadcast(id);
    sdsm_unlock(id);
}

void sdsm_pm_pause_clear(sdsm_pm_pause_t *p)
{
    int id = pause_id(p, "CLEARPAUSE");
    sdsm_lock(id);
    p->flag = 0;
    sdsm_unlock(id);
}

void sdsm_pm_pause_wait(sdsm_pm_pause_t *p)
{
    int id = pause_id(p, "WAITPAUSE");
    sdsm_lock(id);
    while (!p->flag)
        sdsm_cond_wait(id, id);
    sdsm_unlock(id);
}

/* The high half of a condition marks its id as set by CONDVARINIT, not left by other data. */
#define COND_CHECK 0x5a3c9e1fu

static int cond_valid(sdsm_pm_cond_t c)
{
    int id = (int)(c & 0x7fffffff);
    return valid_id(id) && (c >> 32) == ((unsigned)id ^ COND_CHECK);
}

void sdsm_pm_cond_init(sdsm_pm_cond_t *c)
{
    need_init();
    if (cond_valid(*c))
        return; /* initialized again in place (a recycled cell): no new id each time */
    int id = next_id("CONDVARINIT");
    *c = (sdsm_pm_cond_t)((unsigned)id ^ COND_CHECK) << 32 | (unsigned)id;
}

static int cond_id(const sdsm_pm_cond_t *c, const char *call)
{
    if (!cond_valid(*c))
        sdsm_abort(1,
                   "%s: the condition variable at %p was never initialized (CONDVARINIT), or its "
                   "initialization is not visible on rank %d yet",
                   call, (const void *)c, me);
    return (int)(*c & 0x7fffffff);
}

void sdsm_pm_cond_wait(sdsm_pm_cond_t *c, sdsm_pm_lock_t *l)
{
    int rc = sdsm_cond_wait(cond_id(c, "CONDVARWAIT"), lock_id(l, "CONDVARWAIT"));
    if (rc)
        sdsm_abort(1, "CONDVARWAIT on rank %d: %s (the lock must be held, as for pthread_cond_wait)", me,
                   sdsm_strerror(rc));
}

void sdsm_pm_cond_signal(sdsm_pm_cond_t *c, int all)
{
    int id = cond_id(c, all ? "CONDVARBCAST" : "CONDVARSIGNAL");
    if (all)
        sdsm_cond_broadcast(id);
    else
        sdsm_cond_signal(id);
}

/*
 * A processor fence orders one rank's accesses, but another rank sees this
 * rank's shared writes only through synchronization: an acquire and
 * release of one lock every fence takes makes the writes before a fence
 * visible to every rank after its next fence (the flag-and-data hand-offs
 * fences serve), and costs one round trip to the lock's manager.
 */
void sdsm_pm_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!ctl)
        return; /* before MAIN_INITENV there is one process */
    sdsm_lock(PM_FENCE);
    sdsm_unlock(PM_FENCE);
}

/* SPLASH3_ROI_BEGIN/END: simulators count the region between them; here its time is printed. */
void sdsm_pm_roi(int end)
{
    if (!end) {
        roi_t0 = sdsm_wtime();
        return;
    }
    if (roi_t0 < 0)
        return;
    fprintf(stderr, "sdsm: rank %d: SPLASH3_ROI_BEGIN to SPLASH3_ROI_END: %.6f s\n", me,
            sdsm_wtime() - roi_t0);
    roi_t0 = -1;
}

/* Microseconds of the monotonic clock, not since MAIN_INITENV: programs read CLOCK before it too. */
unsigned long sdsm_pm_clock(void) { return (unsigned long)(sdsm_wtime() * 1e6); }
