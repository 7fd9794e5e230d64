#!/usr/bin/env bash
# layers.sh SRC_DIR - the folders of src/ are layers: a file may include
# headers of its own layer and of the layers below it, never above.
#   core < net < boot < mem < proto < sync < thread < api < omp
# (omp is libsdsm-omp, a separate library above the public API.)
# (boot authenticates peers over net; mem's collective allocation talks over
# net; sync's barrier carries protocol data and hang reports through boot.)
set -u
src=${1:?usage: layers.sh SRC_DIR}
order=(core net boot mem proto sync thread api omp)
rank_of() { local i; for i in "${!order[@]}"; do [ "${order[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0 files=0
while IFS= read -r f; do
    files=$((files + 1))
    layer=${f#"$src"/}; layer=${layer%%/*}
    me=$(rank_of "$layer")
    if [ "$me" -lt 0 ]; then echo "layers: $f: folder '$layer' is not a known layer"; bad=1; continue; fi
    while IFS= read -r inc; do
        dep=${inc%%/*}
        r=$(rank_of "$dep")
        [ "$r" -lt 0 ] && continue # a system or same-folder header
        if [ "$r" -gt "$me" ]; then
            echo "layers: $f ($layer) includes $inc: '$dep' is a higher layer"
            bad=1
        fi
    done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_]*\.h\)".*/\1/p' "$f")
done < <(find "$src" -name '*.[ch]' | sort)
if [ "$files" -eq 0 ]; then echo "layers: no source files under $src"; exit 1; fi
[ "$bad" -eq 0 ] && echo "layers: $files files, dependencies point down only"
exit "$bad"
