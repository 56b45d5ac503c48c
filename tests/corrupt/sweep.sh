#!/bin/sh
# shellcheck disable=SC2094,SC2238 # the reference outputs are named after the commands
# The damage sweep (make test-corrupt): copies of one snapshot, each damaged
# once, through every command that reads a snapshot. Every byte of a snapshot
# is untrusted: no command may crash or hang, none may print or answer damaged
# data as good, and verify must fail every damaged copy.
#
# The snapshot (tests/helpers/mksweep): entries of the realistic mix
# (bench/realmix.c) and 24 large TXT and DNSKEY RRsets of 3 KB to 62 KB, which
# LMDB keeps in overflow pages. The copies, from a seeded PRNG (the seed is
# printed; the same seed gives the same copies): one bit flipped, a run of 1
# to 64 bytes overwritten, and every truncation at a multiple of 4096 bytes
# plus a few odd lengths; and the undamaged file itself, which must come
# through every command exactly as the reference run did (the sweep's check
# of itself).
#
# Each copy goes through info, stats, get (the large entries' names, and some
# of the mix's in turn), export, verify, purge --dry-run and load; dump and
# dump --json (0.3 s of CPU each, the whole file printed) and serve (the whole sample
# over TCP) run on every Nth copy, N printed. --full runs everything on every
# copy (an hour or so); CI (.ci/run) halves the flips and runs (--flips 500
# --runs 100). Pass: no crash (exit status >= 128, or a sanitizer
# report), no hang, no exit 0 with output other than the undamaged file's, and
# verify exits 2 on every damaged copy. The failing copies are kept (the first
# --keep-max, default 50, with every output; of the rest, the damage). The
# table counts runs: one a copy, but for get, one a name asked.
#
# Usage: tests/corrupt/sweep.sh BUILD [--seed S] [--flips N] [--runs N]
#        [--entries N] [--gets N] [--dump-every N] [--serve-every N]
#        [--jobs N] [--timeout S] [--keep DIR] [--keep-max N] [--full]
# Exit status: 0 all passed, 1 a failure (listed), 2 the sweep itself failed.
set -u
usage() {
	sed -n 's/^# Usage: //p; s/^#        \(.*\)/    \1/p' "$0" >&2
	exit 2
}
[ $# -ge 1 ] || usage
build=$1
shift
seed=1 flips=1000 runs=200 entries=2000 gets=1 dump_every=20 serve_every=10 jobs=2 to=30 keep_max=50
keep=$build/corrupt-failures
full=0
while [ $# -gt 0 ]; do
	case $1 in
	--seed) seed=$2 ;;
	--flips) flips=$2 ;;
	--runs) runs=$2 ;;
	--entries) entries=$2 ;;
	--gets) gets=$2 ;;
	--dump-every) dump_every=$2 ;;
	--serve-every) serve_every=$2 ;;
	--jobs) jobs=$2 ;;
	--timeout) to=$2 ;;
	--keep) keep=$2 ;;
	--keep-max) keep_max=$2 ;;
	--full) full=1; shift; continue ;;
	*) usage ;;
	esac
	[ $# -ge 2 ] || usage
	shift 2
done
[ $full -eq 1 ] && gets=1000 dump_every=1 serve_every=1
for need in "$build/dnsnap" "$build/mksweep" "$build/mkquery"; do
	[ -x "$need" ] || { echo "sweep: $need is not built (make test-corrupt builds it)" >&2; exit 2; }
done
here=$(pwd)
case $build in /*) ;; *) build=$here/$build ;; esac
case $keep in /*) ;; *) keep=$here/$keep ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/dnsnap-sweep.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 2' INT TERM HUP
t0=$(date +%s)
# Leak checks are off: they double the start of each of some 30,000 runs, and
# the sweep looks for crashes, hangs and wrong data (make asan checks leaks).
# The quarantine of freed memory is 8 MB, not ASan's 256: the printers open a
# memstream per record, whose 8 KB buffer (glibc's calloc of BUFSIZ) a full
# quarantine never lets the next one reuse, so dump faulted in ~180 MB of new
# pages (46,000 faults, 1.3 s a run; 8 MB: 5,800, 0.28 s). A use after free is
# still caught while the block is among the last 8 MB freed; make asan keeps
# the default quarantine.
ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=8
export ASAN_OPTIONS
now=$((1700000000 + 10)) # the mix's time: every entry is live

"$build/mksweep" make "$work" "$entries" || { echo "sweep: mksweep failed" >&2; exit 2; }
size=$(wc -c <"$work/base.snap")
rm -rf "$keep" && mkdir -p "$keep" "$work/ref" "$work/res" "$work/c" || exit 2
small=$(grep -vc '\.overflow\.example\. ' "$work/names.txt")
[ "$gets" -le "$small" ] || gets=$small

# ------------------------------------------- the undamaged file's outputs
cd "$work/ref" || exit 2
bin=$build/dnsnap
cp "$work/base.snap" c.snap
refail() { echo "sweep: the undamaged snapshot: $* failed" >&2; exit 2; }
"$bin" info c.snap --now $now >info || refail info
"$bin" stats c.snap --now $now >stats || refail stats
"$bin" dump c.snap --now $now >dump || refail dump
"$bin" dump c.snap --json --now $now >dumpjson || refail dump --json
k=0
: >"$work/queries.hex"
while read -r name type; do
	k=$((k + 1))
	# get's message ID is random, as dig's: copy.sh blanks it the same way
	"$bin" get c.snap "$name" "$type" --now $now >"get$k" || refail get "$name" "$type"
	sed -i 's/, id: [0-9]*$/, id: -/' "get$k"
	"$build/mkquery" hex "$name" "$type" --id "$k" >>"$work/queries.hex" || refail mkquery
done <"$work/names.txt"
"$bin" export c.snap -o - >export || refail export
"$bin" verify c.snap >verify || refail verify
"$bin" purge c.snap --type TXT --dry-run --now $now >purge || refail purge
cp c.snap l.snap
"$bin" load l.snap "$work/load.dns" --now $now >load 2>/dev/null || refail load
"$bin" verify l.snap >loadverify || refail verify of the loaded snapshot
# serve: the sample's replies over TCP, one hex line each
( sh -c 'echo $$ >serve.pid; exec "$@"' sh "$bin" serve c.snap --listen 127.0.0.1:0 --threads 1 \
	--now $now 2>serve.log; echo $? >serve.rc ) &
i=0 port=
while [ $i -lt 600 ] && [ -z "$port" ] && [ ! -e serve.rc ]; do
	sleep 0.05
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' serve.log)
	i=$((i + 1))
done
[ -n "$port" ] || refail serve
# shellcheck disable=SC2046
"$build/mkquery" tcp "$port" --wait 3000 $(cat "$work/queries.hex") | sed '$d' >serve
kill -TERM "$(cat serve.pid)"
wait
[ "$(cat serve.rc)" = 0 ] || refail "serve (exit $(cat serve.rc))"
{ [ "$(grep -c . serve)" -eq "$k" ] && ! grep -q none serve; } ||
	refail "serve (not every query answered)"
cd "$work" || exit 2

# ----------------------------------------------------------------- copies
"$build/mksweep" plan "$size" "$seed" "$flips" "$runs" >plan.body || exit 2
{ echo "orig-0000 none"; cat plan.body; } | awk '{ print NR - 1, $0 }' >plan
ncopies=$(($(wc -l <plan) - 1))
echo "sweep: seed $seed; $ncopies damaged copies ($flips bit flips, $runs runs," \
	"$((ncopies - flips - runs)) truncations), $jobs at a time"
echo "sweep: every copy: info, stats, get of $((k - small)) large names and $gets of the $small" \
	"others in turn, export, verify, purge --dry-run, load; dump and dump --json: 1 copy" \
	"in $dump_every each; serve: 1 copy in $serve_every"
SW_BIN=$bin SW_MKSWEEP=$build/mksweep SW_MKQUERY=$build/mkquery SW_WORK=$work SW_KEEP=$keep
SW_KEEP_MAX=$keep_max SW_NOW=$now SW_TIMEOUT=$to SW_GETS=$gets SW_DUMP_EVERY=$dump_every
SW_SERVE_EVERY=$serve_every
export SW_BIN SW_MKSWEEP SW_MKQUERY SW_WORK SW_KEEP SW_KEEP_MAX SW_NOW SW_TIMEOUT SW_GETS \
	SW_DUMP_EVERY SW_SERVE_EVERY
xargs -P "$jobs" -L 1 sh "$here/tests/corrupt/copy.sh" <plan
cat res/* >results
t1=$(date +%s)

# ------------------------------------------------------------------ report
fails=0
if ! awk '$2 == "none" && $4 != "equal" { bad = 1 } END { exit bad }' results ||
   [ "$(awk '$2 == "none"' results | wc -l)" -ne $((k + 9)) ]; then
	echo "sweep: the undamaged copy did not come through every command equal:" >&2
	awk '$2 == "none"' results >&2
	fails=1
fi
awk '
	$2 == "none" { next }
	{
		kind = $2 == "flip" ? "bit flip" : $2 == "run" ? "run overwrite" : "truncation"
		if (!(kind in seen)) { seen[kind] = 1; kinds[++nk] = kind }
		if (!($3 in seenc)) { seenc[$3] = 1; cmds[++nc] = $3 }
		n[kind, $3]++; c[kind, $3, $4]++
	}
	END {
		printf "%-14s %-14s %7s %7s %7s %7s %7s %7s\n", "damage", "command", "runs",
		       "exit0eq", "exit2/1", "crash", "hang", "wrong"
		for (i = 1; i <= nk; i++)
			for (j = 1; j <= nc; j++) {
				k = kinds[i] SUBSEP cmds[j]
				if (!(k in n)) continue
				printf "%-14s %-14s %7d %7d %7d %7d %7d %7d\n", kinds[i], cmds[j], n[k],
				       c[k, "equal"], c[k, "refused"], c[k, "crash"], c[k, "hang"],
				       c[k, "wrong"]
			}
	}' results
bad=$(awk '$4 == "crash" || $4 == "hang" || $4 == "wrong"' results | sort)
if [ -n "$bad" ]; then
	fails=1
	echo
	echo "$bad" | while read -r cid kind cmd cls det; do
		echo "  $cid $(cat "$keep/$cid/damage" 2>/dev/null || echo "$kind"): $cmd $cls: $det"
	done >"$keep/failures.txt"
	n=$(wc -l <"$keep/failures.txt")
	echo "failures (copy damage: command class detail), the first 100 of $n; all in" \
		"$keep/failures.txt, the copies (with each command's output) in $keep:"
	head -100 "$keep/failures.txt"
	echo "  (the undamaged file is $keep/base.snap: $build/mksweep apply $keep/base.snap OUT" \
		"DAMAGE makes a copy again)"
	cp base.snap "$keep/base.snap" 2>/dev/null
fi
echo
echo "sweep: seed $seed, $ncopies copies in $((t1 - t0)) s: $(echo "$bad" | grep -c .) failures" \
	"in $(echo "$bad" | awk 'NF { print $1 }' | sort -u | wc -l) copies"
[ $fails -eq 0 ] && rmdir "$keep" 2>/dev/null
[ $fails -eq 0 ]
