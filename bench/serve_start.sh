#!/bin/sh
# serve_start.sh: exec to first answer of `dnsnap serve` on a snapshot of
# ENTRIES entries (issue 13: at most 5 ms at 10M), as build/serve_start
# measures it (bench/serve_start.c), for the tool and any other builds of it
# given (a before and an after, interleaved run by run).
# Usage: bench/serve_start.sh BUILD [ENTRIES [RUNS [DIR]]] [-- DNSNAP...]
#   ENTRIES default 10000000; RUNS 20; DIR (where the snapshot is written once,
#   by bench_snap --keep, and kept: 1.6 GB at 10M) /tmp/dnsnap-serve-start.
# The query is the first entry in key order, at its own inception time (--now).
# On a busy machine the wall times are mostly the wait for a CPU: as root,
# `chrt -f 10 bench/serve_start.sh ...` takes that wait out (the children
# inherit the policy); /bin/true's line is the exec floor either way.
set -eu
build=$1
shift
entries=10000000 runs=20 dir=/tmp/dnsnap-serve-start
[ $# -gt 0 ] && [ "$1" != -- ] && { entries=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { runs=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { dir=$1; shift; }
[ $# -gt 0 ] && [ "$1" = -- ] && shift
[ $# -gt 0 ] || set -- "$build/dnsnap"
for need in "$build/bench_snap" "$build/serve_start" "$@"; do
	[ -x "$need" ] || { echo "serve_start.sh: $need is not built" >&2; exit 2; }
done

mkdir -p "$dir"
snap=$dir/$entries.snap
if [ ! -f "$snap" ]; then
	echo "serve_start.sh: writing $snap (once; minutes at 10M)" >&2
	"$build/bench_snap" --entries "$entries" --rounds 1 --lookups 1000 --opens 1 --keep \
		--dir "$dir" >"$dir/bench_snap.log"
	mv "$(ls -t "$dir"/bench_snap.*.mdb | head -1)" "$snap"
fi
# "; NAME IN TYPE tag - ... inception ISO expiry ISO"
first=$("$1" dump --expired "$snap" 2>/dev/null | head -1 || true)
name=$(echo "$first" | cut -d' ' -f2)
type=$(echo "$first" | cut -d' ' -f4)
now=$(echo "$first" | sed -n 's/.* inception \([^ ]*\) .*/\1/p')
[ -n "$name" ] && [ -n "$now" ] || { echo "serve_start.sh: no entry in $snap" >&2; exit 2; }

cmds=
for b in "$@"; do
	cmds="$cmds -- $b --now $now"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # $cmds is words on purpose (paths without spaces)
"$build/serve_start" --runs "$runs" "$snap" "$name" "$type" $cmds
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
