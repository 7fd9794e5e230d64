/*
 * parmacs.c - run-time support of the PARMACS macros (parmacs.m4) on sdsm.
 * See parmacs.h for the model: rank 0 is the master, the k-th CREATE starts
 * the function on rank k with a copy of the master's globals.
 *
 * Hand-off: a control block allocated collectively in MAIN_INITENV holds
 * one slot per rank; the master fills rank k's slot (function, snapshot of
 * its globals) under the control lock, copying the snapshot inside the
 * critical section so that even lock-bound protocols carry it, and signals
 * rank k's condition.  A finished worker counts itself under the same lock
 * and waits in sdsm_finalize (its pages stay served) until MAIN_END.
 */
#include "parmacs.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sdsm.h>

/* Reserved sdsm ids, below jia.h's and far above the objects' ids. */
#define PM_LOCK     0x7ff00000
#define PM_END_COND 0x7ff00001
#define PM_GO_COND0 0x7ff00002
/* Object ids: OBJ_BASE + rank * OBJ_PER_RANK + the rank's counter. */
#define OBJ_BASE     0x40000000
#define OBJ_PER_RANK (1 << 17)
#define MAX_RANKS    4096

typedef struct slot {
    void (*fn)(void);
    void *snap;
    size_t len;
    int go;
} slot_t;

typedef struct ctl {
    int finished, end;
    slot_t slot[];
} ctl_t;

static ctl_t *ctl;
static int me, nprocs, ncreated, owed;
static unsigned nobj;
static void (*owed_fn)(void);
static double t0;
static int saved_stdout = -1;

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

static void worker(void)
{
    sdsm_lock(PM_LOCK);
    while (!ctl->slot[me].go && !ctl->end)
        sdsm_cond_wait(PM_GO_COND0 + me, PM_LOCK);
    slot_t s = ctl->slot[me];
    if (s.go && s.len == globals_size())
        globals_restore(s.snap);
    sdsm_unlock(PM_LOCK);
    if (s.go && s.len != globals_size())
        sdsm_abort(1, "CREATE: the master's globals are %zu bytes, rank %d's %zu: not the same program",
                   s.len, me, globals_size());
    if (saved_stdout >= 0) {
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
    }
    if (s.go) {
        s.fn();
        fflush(stdout);
        sdsm_lock(PM_LOCK);
        ctl->finished++;
        sdsm_cond_broadcast(PM_END_COND);
        sdsm_unlock(PM_LOCK);
    }
    sdsm_finalize();
    exit(0);
}

void sdsm_pm_init(int argc, char **argv)
{
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
    t0 = sdsm_wtime();
    if (!ctl)
        exit(1);
    if (me != 0)
        worker();
}

static void start_one(void (*fn)(void))
{
    int k = ++ncreated;
    if (k >= nprocs)
        sdsm_abort(1,
                   "CREATE: process %d created, but the job has %d ranks (one per PARMACS "
                   "process, the master included): start it with sdsmrun -n %d or more",
                   k + 1, nprocs, k + 1);
    size_t len = globals_size();
    void *snap = sdsm_alloc_local(len ? len : 1);
    sdsm_lock(PM_LOCK);
    globals_save(snap); /* inside the critical section: ibec carries it with the lock */
    ctl->slot[k] = (slot_t){.fn = fn, .snap = snap, .len = len, .go = 1};
    sdsm_cond_signal(PM_GO_COND0 + k);
    sdsm_unlock(PM_LOCK);
}

/*
 * count 0: SPLASH-2's CREATE(fn), one process.  count n: SPLASH-3's
 * CREATE(fn, n), n processes of which the master is the last: it runs fn
 * itself in WAIT_FOR_END, so n ranks run n processes.
 */
void sdsm_pm_create(void (*fn)(void), int count)
{
    if (me != 0)
        sdsm_abort(1, "CREATE: called by rank %d; only the master (rank 0) creates processes", me);
    if (count <= 0) {
        start_one(fn);
        return;
    }
    for (int i = 0; i < count - 1; i++)
        start_one(fn);
    owed = 1;
    owed_fn = fn;
}

void sdsm_pm_wait_for_end(int n)
{
    int expect = n;
    if (owed) { /* SPLASH-3: n counts the master's own run */
        owed = 0;
        owed_fn();
        expect = n - 1;
    }
    if (expect > ncreated)
        sdsm_abort(1, "WAIT_FOR_END(%d): only %d processes were created", n, ncreated);
    sdsm_lock(PM_LOCK);
    while (ctl->finished < expect)
        sdsm_cond_wait(PM_END_COND, PM_LOCK);
    sdsm_unlock(PM_LOCK);
}

void sdsm_pm_main_end(int status)
{
    if (me == 0) { /* ranks never created are still waiting for a CREATE */
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
    void *p = sdsm_alloc_local(size ? size : 1);
    if (!p)
        sdsm_abort(1, "G_MALLOC(%zu) failed on rank %d: %s", size, me, sdsm_strerror(sdsm_last_error()));
    return p;
}

void sdsm_pm_free(void *p) { sdsm_free_local(p); }

static int next_id(const char *call)
{
    if (nobj >= OBJ_PER_RANK)
        sdsm_abort(1, "%s: rank %d initialized more than %d locks and pauses", call, me, OBJ_PER_RANK);
    return OBJ_BASE + me * OBJ_PER_RANK + (int)nobj++;
}

void sdsm_pm_lock_init(sdsm_pm_lock_t *l, int n)
{
    for (int i = 0; i < n; i++)
        l[i].id = next_id("LOCKINIT");
}

static int lock_id(const sdsm_pm_lock_t *l, const char *call)
{
    if (l->id < OBJ_BASE || l->id >= OBJ_BASE + MAX_RANKS * OBJ_PER_RANK)
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
    p->id = next_id("PAUSEINIT");
    p->cond = p->id;
    p->flag = 0;
}

static int pause_id(const sdsm_pm_pause_t *p, const char *call)
{
    if (p->id < OBJ_BASE || p->id >= OBJ_BASE + MAX_RANKS * OBJ_PER_RANK)
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

unsigned long sdsm_pm_clock(void) { return (unsigned long)((sdsm_wtime() - t0) * 1e6); }
