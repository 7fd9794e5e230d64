#!/bin/sh
# bind_rank.sh PROGRAM [ARGS...] - run as sdsmrun's program: execs PROGRAM
# bound to one CPU of its own, the (SDSM_RANK + 1)-th of the CPUs it may use
# ("0-3,8": rank 0 on 0, rank 1 on 1 ...), as a launcher that binds each
# rank to a CPU would.  Fails if there are fewer CPUs than that.
c=$(taskset -pc $$ 2>/dev/null | sed 's/.*: *//' | tr ',' '\n' |
    awk -F- -v want=$((${SDSM_RANK:-0} + 1)) \
        '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) if (++n == want) { print c; exit } }')
[ -n "$c" ] || { echo "bind_rank.sh: no CPU of its own for rank ${SDSM_RANK:-0}" >&2; exit 1; }
exec taskset -c "$c" "$@"
