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

define(`MAIN_ENV', `
#include <parmacs.h>
#include <stdio.h>
#include <stdlib.h>
static void __attribute__((constructor)) sdsm_pm_quiet_start(void) { sdsm_pm_quiet(); }
')
define(`EXTERN_ENV', `
#include <parmacs.h>
#include <stdio.h>
#include <stdlib.h>
')
define(`ENV', `')
define(`MAIN_INITENV', `{ sdsm_pm_init(0, 0); }')
define(`MAIN_END', `{ sdsm_pm_main_end(0); }')
# CREATE(fn): one process (SPLASH-2); CREATE(fn, n): n processes, the master
# running the last one itself in WAIT_FOR_END (SPLASH-3).
define(`CREATE', `{ sdsm_pm_create($1, ($2 + 0)); }')
define(`WAIT_FOR_END', `{ sdsm_pm_wait_for_end($1); }')
define(`G_MALLOC', `sdsm_pm_malloc($1)')
define(`G_FREE', `sdsm_pm_free($1)')
define(`NU_MALLOC', `sdsm_pm_malloc($1)')
define(`LOCKDEC', `sdsm_pm_lock_t $1;')
define(`LOCKINIT', `{ sdsm_pm_lock_init(&($1), 1); }')
define(`LOCK', `{ sdsm_pm_lock(&($1)); }')
define(`UNLOCK', `{ sdsm_pm_unlock(&($1)); }')
define(`ALOCKDEC', `sdsm_pm_lock_t $1[$2];')
define(`ALOCKINIT', `{ sdsm_pm_lock_init($1, $2); }')
define(`ALOCK', `{ sdsm_pm_lock(&($1)[$2]); }')
define(`AULOCK', `{ sdsm_pm_unlock(&($1)[$2]); }')
define(`BARDEC', `sdsm_pm_bar_t $1;')
define(`BARINIT', `{ (void)&($1); }')
define(`BARRIER', `{ sdsm_pm_barrier(&($1), $2); }')
define(`PAUSEDEC', `sdsm_pm_pause_t $1;')
define(`PAUSEINIT', `{ sdsm_pm_pause_init(&($1)); }')
define(`SETPAUSE', `{ sdsm_pm_pause_set(&($1)); }')
define(`CLEARPAUSE', `{ sdsm_pm_pause_clear(&($1)); }')
define(`WAITPAUSE', `{ sdsm_pm_pause_wait(&($1)); }')
# GETSUB(gs, s, max, P): s gets the next subscript 0..max, then -1; once all
# P processes have got their -1 the counter starts over for the next phase.
define(`GSDEC', `sdsm_pm_gs_t $1;')
define(`GSINIT', `{ sdsm_pm_lock_init(&($1).lock, 1); ($1).sub = 0; ($1).done = 0; }')
define(`GETSUB', `{ sdsm_pm_lock(&($1).lock); if (($1).sub <= ($3)) ($2) = ($1).sub++; else { ($2) = -1; if (++($1).done == ($4)) { ($1).sub = 0; ($1).done = 0; } } sdsm_pm_unlock(&($1).lock); }')
define(`CLOCK', `{ ($1) = sdsm_pm_clock(); }')
define(`AUG_ON', `')
define(`AUG_OFF', `')

undefine(`len')undefine(`index')undefine(`substr')undefine(`format')undefine(`eval')
undefine(`incr')undefine(`decr')undefine(`shift')undefine(`translit')undefine(`include')
undefine(`sinclude')undefine(`syscmd')undefine(`esyscmd')undefine(`sysval')
undefine(`maketemp')undefine(`mkstemp')undefine(`regexp')undefine(`patsubst')
undefine(`unix')undefine(`__unix__')undefine(`__gnu__')undefine(`errprint')undefine(`indir')
undefine(`builtin')undefine(`traceon')undefine(`traceoff')undefine(`dumpdef')
undefine(`m4exit')undefine(`m4wrap')undefine(`changecom')undefine(`changequote')
undefine(`divnum')undefine(`undivert')undefine(`pushdef')undefine(`popdef')undefine(`ifdef')
undefine(`ifelse')undefine(`defn')undefine(`__file__')undefine(`__line__')undefine(`__program__')
undefine(`define')undefine(`undefine')
divert(0)dnl
