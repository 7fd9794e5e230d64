#!/usr/bin/env bash
# format.sh SRC_DIR - the C sources are laid out as .clang-format says.
# Runs clang-format 14 (clang-format-14, or a clang-format that says it is
# version 14: other versions lay some lines out differently) in check mode
# over every .c and .h file of the tree, build folders left out, and lists
# the files it would change.  Exit 77 (skipped) without clang-format 14.
# To lay a file out: clang-format-14 -i FILE.
set -u
src=${1:?usage: format.sh SRC_DIR}
cf=
for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null && "$c" --version | grep -q 'version 14\.'; then cf=$c; break; fi
done
[ -n "$cf" ] || { echo "format: no clang-format 14 (Debian: apt-get install clang-format-14): skipped"; exit 77; }
[ -f "$src/.clang-format" ] || { echo "format: no $src/.clang-format"; exit 1; }
bad=0 n=0
while IFS= read -r f; do
    n=$((n + 1))
    if ! "$cf" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "format: ${f#"$src"/} is not laid out as .clang-format says (clang-format-14 -i ${f#"$src"/})"
        bad=1
    fi
done < <(find "$src" -type d \( -name 'build*' -o -name '.git' \) -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print | sort)
[ "$n" -gt 0 ] || { echo "format: no C sources under $src"; exit 1; }
[ "$bad" -eq 0 ] && echo "format: $n files laid out as .clang-format says"
exit "$bad"
