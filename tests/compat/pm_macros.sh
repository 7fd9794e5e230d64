#!/usr/bin/env bash
# pm_macros.sh - a PARMACS macro file (parmacs.m4, parmacs_threads.m4)
# defines every PARMACS macro SPLASH-2 and SPLASH-3 programs use (the list
# below), and leaves m4's include in place.
#
#   pm_macros.sh path/to/parmacs.m4 [path/to/other.m4]
#
# With a second file, every macro it defines (but the files' own helpers,
# SDSM_PM_* and PMT_*) must be defined by the first too: the two models
# offer the same macros.
set -u
m4file=$1
other=${2:-}
macros="MAIN_ENV EXTERN_ENV ENV NEWPROC MAIN_INITENV MAIN_END CREATE WAIT_FOR_END
G_MALLOC NU_MALLOC G_MALLOC_F NU_MALLOC_F G_FREE
LOCKDEC LOCKINIT LOCK UNLOCK ALOCKDEC ALOCKINIT ALOCK AULOCK AGETL
BARDEC BARINIT BARRIER PAUSEDEC PAUSEINIT SETPAUSE CLEARPAUSE WAITPAUSE
CONDVARDEC CONDVARINIT CONDVARWAIT CONDVARSIGNAL CONDVARBCAST
RELEASE_FENCE ACQUIRE_FENCE FULL_FENCE GSDEC GSINIT GETSUB CLOCK
SPLASH3_ROI_BEGIN SPLASH3_ROI_END AUG_ON AUG_OFF"
missing=
for m in $macros; do
    grep -q "^define(\`$m'," "$m4file" || missing="$missing $m"
done
if [ -n "$other" ]; then
    for m in $(sed -n "s/^define(\`\([A-Z_0-9]*\)'.*/\1/p" "$other"); do
        case $m in SDSM_PM_* | PMT_*) continue ;; esac
        grep -q "^define(\`$m'," "$m4file" || missing="$missing $m"
    done
fi
if [ -n "$missing" ]; then
    echo "FAIL: $m4file does not define:$missing"
    exit 1
fi
if grep -q "undefine(\`include')" "$m4file"; then
    echo "FAIL: $m4file undefines include, which SPLASH sources use for their headers"
    exit 1
fi
# The allocators end with a semicolon, as in SPLASH's own macro files.
for m in G_MALLOC NU_MALLOC; do
    grep -q "^define(\`$m', \`[^']*;')" "$m4file" || { echo "FAIL: $m lacks its trailing ;"; exit 1; }
done
echo "PASS: $(echo $macros | wc -w) macros defined"
