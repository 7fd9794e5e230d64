/*
 * aslr.c - address randomization off for a directly launched rank (see
 * aslr.h).
 *
 * The ranks of a job need the program, its globals and its libraries at the
 * same addresses: an OpenMP program's globals join the shared region where
 * they are, and programs written for TreadMarks or JIAJIA pass pointers to
 * them between ranks.  sdsmrun starts ranks with ADDR_NO_RANDOMIZE set;
 * mpirun and srun do not, and the flag only takes effect at the next exec.
 * So a rank they started sets it and executes /proc/self/exe again from a
 * constructor, before the program (or the OpenMP runtime) has run or the
 * launcher has been contacted: the launcher sees the same process id.
 */
#include "aslr.h"
#include "pmi2.h"
#include "pmix.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <unistd.h>

#include "core/config.h"

/* Set for the second start only: never a third (a set-user-id program, for
 * one, loses the flag again at exec).  Outside the SDSM_ names, so the
 * runtime never takes it for a misspelt variable. */
#define REEXEC_MARK "_SDSM_ASLR_REEXEC"

static sdsm_aslr_state_t state;

sdsm_aslr_state_t sdsm_aslr_state(void) { return state; }

/* Whether the kernel randomizes at all (randomize_va_space, 0 = never);
 * unreadable: assume it does. */
static int kernel_randomizes(void)
{
    char c = '1';
    int fd = open("/proc/sys/kernel/randomize_va_space", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &c, 1) != 1)
            c = '1';
        close(fd);
    }
    return c != '0';
}

/* A rank of mpirun or srun, not of sdsmrun (which sets SDSM_RANK), that
 * does not keep randomization (SDSM_ASLR=1).  A malformed variable: no,
 * sdsm_init will say what is wrong with it. */
static int wants_fixed_layout(void)
{
    extern char **environ;
    sdsm_config_t cfg;
    char err[256];
    if (!sdsm_pmix_present() && !sdsm_pmi2_present())
        return 0;
    if (sdsm_config_load(&cfg, environ, err, sizeof err, NULL))
        return 0;
    return cfg.rank < 0 && !cfg.aslr;
}

/* glibc passes the program's arguments to constructors. */
__attribute__((constructor)) static void fix_layout(int argc, char **argv, char **envp)
{
    (void)envp;
    if (getenv(REEXEC_MARK)) {
        unsetenv(REEXEC_MARK); /* not for the program's own children */
        int p = personality(0xffffffff);
        state = p != -1 && (p & ADDR_NO_RANDOMIZE) ? SDSM_ASLR_REEXECUTED : SDSM_ASLR_REFUSED;
        return;
    }
    int p = personality(0xffffffff);
    if (argc < 1 || !argv || !argv[0] || p == -1 || (p & ADDR_NO_RANDOMIZE) || !wants_fixed_layout() ||
        !kernel_randomizes())
        return;
    state = SDSM_ASLR_REFUSED;
    if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1) /* seccomp may forbid it */
        return;
    if (setenv(REEXEC_MARK, "1", 1) == 0)
        execv("/proc/self/exe", argv);
    /* Still the first start: leave the process as it was. */
    unsetenv(REEXEC_MARK);
    personality((unsigned long)p);
}
