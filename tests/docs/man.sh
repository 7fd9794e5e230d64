#!/bin/bash
# man.sh render MAN_DIR PAGE...   each page renders with man -l, no warning
# man.sh options MAN_DIR SDSMRUN  every long option sdsmrun --help lists is
#                                 in sdsmrun(1)
# Exit 77 (skipped) when the pages were not built (no pandoc at configure
# time: MAN_DIR has no pages) or man is not installed.
set -u
mode=${1:?usage: man.sh render|options MAN_DIR ...} dir=${2:?MAN_DIR}
shift 2
skip() { echo "man: $*: skipped"; exit 77; }

case $mode in
render)
    command -v man >/dev/null || skip "no man (Debian: man-db)"
    bad=0
    for page in "$@"; do
        [ -f "$dir/$page" ] || { echo "man: $dir/$page was not built"; bad=1; continue; }
        err=$(LC_ALL=C MANWIDTH=80 man -l --warnings "$dir/$page" 2>&1 >/dev/null)
        lines=$(LC_ALL=C MANWIDTH=80 man -l "$dir/$page" 2>/dev/null | wc -l)
        if [ -n "$err" ]; then
            echo "man: $page renders with warnings:"
            echo "$err" | head -20
            bad=1
        elif [ "$lines" -lt 20 ]; then
            echo "man: $page renders to $lines lines only"
            bad=1
        fi
    done
    [ "$bad" = 0 ] || exit 1
    echo "man: $# pages render without warnings"
    ;;
options)
    sdsmrun=${1:?SDSMRUN}
    page=$dir/sdsmrun.1
    [ -f "$page" ] || { echo "man: $page was not built"; exit 1; }
    help=$("$sdsmrun" --help) || { echo "man: sdsmrun --help failed"; exit 1; }
    # The options are the lines of the Options: paragraph that start with
    # one ("  -n, --nprocs N", "      --threads T").
    opts=$(echo "$help" | sed -n '/^Options:/,/^$/p' |
           sed -nE 's/^ +(-[A-Za-z], )?(--[a-z][a-z-]*).*/\2/p' | sort -u)
    [ "$(echo "$opts" | wc -l)" -ge 10 ] || { echo "man: found only these options in sdsmrun --help: $opts"; exit 1; }
    text=$(sed 's/\\-/-/g' "$page")
    missing=0
    for o in $opts; do
        if ! grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$text"; then
            echo "man: sdsmrun --help lists $o, which sdsmrun(1) does not describe (docs/reference/sdsmrun.md)"
            missing=$((missing + 1))
        fi
    done
    [ "$missing" = 0 ] || exit 1
    echo "man: the $(echo "$opts" | wc -l) long options of sdsmrun --help are all in sdsmrun(1)"
    ;;
*) echo "usage: man.sh render|options MAN_DIR ..."; exit 2 ;;
esac
