#!/bin/bash
# getenv.sh SRC_DIR - every environment variable the sources read is in
# docs/reference/variables.md.  The names are the ones a C file that calls
# getenv quotes whole (getenv("X"), or a name kept in a table and looked up
# later) with a prefix of sdsm's or of a launcher's, any other getenv("X")
# but PATH, and the ${SDSM_...} of the sdsmcc and sdsm-report scripts.
set -u
src=${1:?usage: getenv.sh SRC_DIR}
page=$src/docs/reference/variables.md
[ -f "$page" ] || { echo "getenv: no $page"; exit 1; }
files=$(grep -rlE 'getenv' "$src/src" "$src/tools" "$src/compat" --include='*.c' --include='*.h')
names=$( {
    grep -ohE '"(SDSM|OMP|OMPI|PMIX|PMI|SLURM)_[A-Z0-9_]+"' $files | tr -d '"'
    grep -ohE 'getenv\("[A-Za-z0-9_]+"\)' $files | sed -E 's/getenv\("(.*)"\)/\1/'
    grep -ohE '\$\{?SDSM_[A-Z0-9_]+' "$src/tools/sdsmcc/sdsmcc.in" "$src/tools/sdsm-report" | tr -d '${'
} | grep -vx PATH | sort -u)
[ -n "$names" ] || { echo "getenv: found no variable names in the sources"; exit 1; }
missing=0
for n in $names; do
    if ! grep -qE "(^### $n\$|\`$n\`|\`$n,| $n,| $n\`)" "$page"; then
        echo "getenv: $n is read by the sources but not described in docs/reference/variables.md"
        missing=$((missing + 1))
    fi
done
[ "$missing" = 0 ] || exit 1
echo "getenv: all $(echo "$names" | wc -l) variables the sources read are documented"
