divert(-1)
# parmacs.m4 - the PARMACS macros for SPLASH-2/3 programs on sdsm.
#
# Use it as the program's macro file: m4 parmacs.m4 prog.C > prog.c (in a
# SPLASH Makefile: MACROS = this file; `pkg-config --variable=parmacs
# sdsm-compat` prints where it is installed), then compile with
# `pkg-config --cflags --libs sdsm-compat` and run with sdsmrun -n P, one
# rank per PARMACS process.  The run-time side and the model (ranks as
# processes, the master's globals copied at CREATE, lock ids stored in the
# lock objects) are described in parmacs.h.
#
# The m4 builtins whose names C programs use (index, len, substr, eval...)
# are undefined at the end of this file, so only the macros below expand.
# `include' stays: SPLASH sources include their own .H files through it
# (include(radiosity.h)), and m4 takes it as the builtin only with an
# argument list, so a C word `include' is left alone.

# PAGE_SIZE: SPLASH programs pad shared structures with it and several define
# it again themselves as 4096; an identical definition is what lets both be.
define(`SDSM_PM_INCLUDES', `
#include <parmacs.h>
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define PAGE_SIZE 4096
')
define(`MAIN_ENV', `SDSM_PM_INCLUDES
static void __attribute__((constructor)) sdsm_pm_quiet_start(void) { sdsm_pm_quiet(); }
')
define(`EXTERN_ENV', `SDSM_PM_INCLUDES')
define(`ENV', `')
define(`NEWPROC', `')
define(`MAIN_INITENV', `{ sdsm_pm_init(0, 0); }')
define(`MAIN_END', `{ sdsm_pm_main_end(0); }')
# CREATE(fn): one process (SPLASH-2); CREATE(fn, n): n processes, n-1 on
# other ranks and the last run by the master itself before CREATE returns
# (SPLASH-3), so a program that never waits still computes.
define(`CREATE', `{ sdsm_pm_create($1, ($2 + 0)); }')
define(`WAIT_FOR_END', `{ sdsm_pm_wait_for_end($1); }')
# The allocators end with `;' as SPLASH's own macro files do: programs write
# `p = G_MALLOC(n)' with no semicolon; the _F forms are expressions.
define(`G_MALLOC', `sdsm_pm_malloc($1);')
define(`NU_MALLOC', `sdsm_pm_malloc($1);')
define(`G_MALLOC_F', `sdsm_pm_malloc($1)')
define(`NU_MALLOC_F', `sdsm_pm_malloc($1)')
define(`G_FREE', `sdsm_pm_free($1);')
define(`LOCKDEC', `sdsm_pm_lock_t $1;')
define(`LOCKINIT', `{ sdsm_pm_lock_init(&($1), 1); }')
define(`LOCK', `{ sdsm_pm_lock(&($1)); }')
define(`UNLOCK', `{ sdsm_pm_unlock(&($1)); }')
define(`ALOCKDEC', `sdsm_pm_lock_t $1[$2];')
define(`ALOCKINIT', `{ sdsm_pm_lock_init($1, $2); }')
define(`ALOCK', `{ sdsm_pm_lock(&($1)[$2]); }')
define(`AULOCK', `{ sdsm_pm_unlock(&($1)[$2]); }')
# AGETL(a, i): the i-th lock of an array, as CONDVARWAIT's lock.
define(`AGETL', `(($1)[$2])')
define(`BARDEC', `sdsm_pm_bar_t $1;')
define(`BARINIT', `{ (void)&($1); }')
define(`BARRIER', `{ sdsm_pm_barrier(&($1), $2); }')
define(`PAUSEDEC', `sdsm_pm_pause_t $1;')
define(`PAUSEINIT', `{ sdsm_pm_pause_init(&($1)); }')
define(`SETPAUSE', `{ sdsm_pm_pause_set(&($1)); }')
define(`CLEARPAUSE', `{ sdsm_pm_pause_clear(&($1)); }')
define(`WAITPAUSE', `{ sdsm_pm_pause_wait(&($1)); }')
# Condition variables, keyed by their object like locks; CONDVARWAIT(c, l)
# needs l held, as pthread_cond_wait does.  The type is sdsm_pm_cond_t
# spelled out, as headers declare conditions before any include.
define(`CONDVARDEC', `unsigned long long $1;')
define(`CONDVARINIT', `{ sdsm_pm_cond_init(&($1)); }')
define(`CONDVARWAIT', `{ sdsm_pm_cond_wait(&($1), &($2)); }')
define(`CONDVARSIGNAL', `{ sdsm_pm_cond_signal(&($1), 0); }')
define(`CONDVARBCAST', `{ sdsm_pm_cond_signal(&($1), 1); }')
# Fences order this rank's shared writes against every rank's (parmacs.h).
define(`RELEASE_FENCE', `{ sdsm_pm_fence(); }')
define(`ACQUIRE_FENCE', `{ sdsm_pm_fence(); }')
define(`FULL_FENCE', `{ sdsm_pm_fence(); }')
# GETSUB(gs, s, max, P): s gets the next subscript 0..max, then -1; once all
# P processes have got their -1 the counter starts over for the next phase.
define(`GSDEC', `sdsm_pm_gs_t $1;')
define(`GSINIT', `{ sdsm_pm_lock_init(&($1).lock, 1); ($1).sub = 0; ($1).done = 0; }')
define(`GETSUB', `{ sdsm_pm_lock(&($1).lock); if (($1).sub <= ($3)) ($2) = ($1).sub++; else { ($2) = -1; if (++($1).done == ($4)) { ($1).sub = 0; ($1).done = 0; } } sdsm_pm_unlock(&($1).lock); }')
define(`CLOCK', `{ ($1) = sdsm_pm_clock(); }')
# The region of interest SPLASH-3 marks for simulators: its time on stderr.
define(`SPLASH3_ROI_BEGIN', `{ sdsm_pm_roi(0); }')
define(`SPLASH3_ROI_END', `{ sdsm_pm_roi(1); }')
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
