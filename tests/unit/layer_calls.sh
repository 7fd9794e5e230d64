#!/usr/bin/env bash
# layer_calls.sh SRC_DIR OBJ_DIR... - the layers of src/ (layers.sh) checked by the
# calls the compiled objects make, not by their includes: every undefined
# symbol of an object (nm -u) that another object of the given directories
# defines maps to that object's folder, and a call into a higher layer
# fails.  (A declaration written by hand, without the header, is caught
# here; so is a call into omp through a name the C library also has, which
# omp/override.c alone may define.)  Objects are found as <layer>/<file>.c.o
# anywhere below each OBJ_DIR (CMake's object folders); one whose source is
# no longer in SRC_DIR (left by an earlier build) is skipped.
set -u
[ $# -ge 2 ] || { echo "usage: layer_calls.sh SRC_DIR OBJ_DIR..."; exit 2; }
src=$1
shift
order=(core net boot mem proto sync thread api omp)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
# (A lookup, not a function: $(...) per symbol forked thousands of subshells.)
command -v nm >/dev/null || { echo "layer_calls: nm not found (binutils)"; exit 1; }
objs=$(find "$@" -name '*.c.o' -path '*/src/*' | sort | while read -r o; do
    c=$(basename "$o" .o)
    [ -f "$src/$(basename "$(dirname "$o")")/$c" ] && echo "$o"
done)
[ -n "$objs" ] || { echo "layer_calls: no objects under $*"; exit 1; }
# The C library's names: defined by omp/override.c alone, and not calls
# into omp when other layers use them.
declare -A libc
libc_so=$(${CC:-cc} -print-file-name=libc.so.6 2>/dev/null)
[ -f "$libc_so" ] || libc_so=$(ldconfig -p 2>/dev/null | awk '/libc\.so\.6 /{print $NF; exit}')
[ -f "$libc_so" ] || { echo "layer_calls: cannot find libc.so.6"; exit 1; }
while read -r sym; do libc[$sym]=1; done < <(nm -D --defined-only "$libc_so" | awk '{sub(/@.*/, "", $3); print $3}')
declare -A def_layer
n=0 bad=0
for o in $objs; do
    layer=$(basename "$(dirname "$o")")
    [ -n "${rank[$layer]:-}" ] || continue
    n=$((n + 1))
    while read -r sym; do
        if [ -n "${libc[$sym]:-}" ]; then
            if [ "$layer/$(basename "$o")" != omp/override.c.o ]; then
                echo "layer_calls: $layer/$(basename "$o" .o) defines $sym, a C library function (only omp/override.c replaces those)"
                bad=1
            fi
            continue
        fi
        def_layer[$sym]=$layer
    done < <(nm --defined-only -g "$o" 2>/dev/null | awk '$2 ~ /[TDBRVWui]/ {print $3}')
done
for o in $objs; do
    layer=$(basename "$(dirname "$o")")
    me=${rank[$layer]:-}
    [ -n "$me" ] || continue
    while read -r sym; do
        dl=${def_layer[$sym]:-}
        [ -n "$dl" ] || continue
        if [ "${rank[$dl]:--1}" -gt "$me" ]; then
            echo "layer_calls: $layer/$(basename "$o" .o) calls $sym, defined in $dl (a higher layer)"
            bad=1
        fi
    done < <(nm -u "$o" 2>/dev/null | awk '{print $2}')
done
[ "$bad" -eq 0 ] && echo "layer_calls: $n objects, calls point down only"
exit "$bad"
