#!/bin/sh
# shellcheck disable=SC2046 # judge prints three numbers: set -- splits them
# dnsnap serve while the file it maps is changed under it (issue 10): cut
# short with truncate -s, and overwritten in place by cp of another snapshot,
# each under a stream of queries. The server must stay up and answer every
# query with some rcode; each answer must be the one the first file gave, or
# (after cp) the one the second file gives, or a miss (REFUSED): never any
# other data. It logs one line with "changed in place". Then a third
# snapshot published properly (written elsewhere, mv over the path) and
# SIGHUP: its answers. The snapshots (tests/helpers/mksweep) hold the same
# names at different ages, so the answers differ in their TTLs, and large
# TXT and DNSKEY RRsets in LMDB's overflow pages.
# Usage (from the repository root): tests/cli/test_serve_replace.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
mkq=$build/mkquery
mks=$build/mksweep
tmp=$(mktemp -d)
T=$tmp
pid='' qpid=''
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
NOW=1700000010 # the mix's time (mksweep), 10 s on: every entry of A is live

for need in "$bin" "$mkq" "$mks"; do
	[ -x "$need" ] || { echo "not ok - $need is not built (make test builds it)"; exit 1; }
done

# A: served; B: copied over A in place (more entries, a larger file, 20 s older); C: published
# by rename (40 s older). The names asked: A's sample, the large ones among them.
mkdir "$T/a" "$T/b" "$T/c"
"$mks" make "$T/a" 2000 >/dev/null && "$mks" make "$T/b" 3000 20 >/dev/null &&
	"$mks" make "$T/c" 1200 40 >/dev/null || { echo "not ok - mksweep make"; exit 1; }
k=0
: >"$T/queries"
while read -r n t; do
	k=$((k + 1))
	"$mkq" hex "$n" "$t" --id "$k" >>"$T/queries"
done <"$T/a/names.txt"
nq=$k

# start SNAP: serve SNAP on 127.0.0.1, a port the kernel picks; sets pid, port
start() {
	"$bin" serve "$1" --listen 127.0.0.1:0 --threads 2 --now $NOW 2>"$T/log" &
	pid=$!
	i=0 port=
	while [ $i -lt 200 ] && [ -z "$port" ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
		i=$((i + 1))
	done
	[ -n "$port" ]
}
# alive: the server runs (not gone, not a zombie not yet waited for)
alive() { [ -r "/proc/$pid/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$pid/stat"; }
# stop: SIGTERM, and the exit status must be 0
stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	pid=
	return $rc
}
# ask: every query of the sample over one TCP connection; a reply line
# (hex) each, in order, or "none"
ask() {
	# shellcheck disable=SC2046 # one argument per query
	"$mkq" tcp "$port" --wait 2000 $(cat "$T/queries") | grep -v '^open$\|^closed$'
}
# answers SNAP OUT: the replies a server of its own gives from SNAP
answers() {
	cp "$1" "$T/ref.snap"
	start "$T/ref.snap" || { echo "not ok - serve $1 did not start"; cat "$T/log"; exit 1; }
	ask >"$2"
	stop || { echo "not ok - serve $1: exit $rc"; exit 1; }
	[ "$(grep -c '^[0-9a-f]\{24,\}$' "$2")" -eq "$nq" ] ||
		{ echo "not ok - serve $1 did not answer every query"; exit 1; }
}
answers "$T/a/base.snap" "$T/ans.a"
answers "$T/b/base.snap" "$T/ans.b"
answers "$T/c/base.snap" "$T/ans.c"
ok_if "the three snapshots answer the same names differently" \
	sh -c "! cmp -s '$T/ans.a' '$T/ans.b' && ! cmp -s '$T/ans.a' '$T/ans.c'"
ok_if "most of the sample is answered from A (not REFUSED)" \
	[ "$(cut -c8 "$T/ans.a" | grep -vc 5)" -ge $((nq - 2)) ]

# judge FILE ALLOWED...: every reply line in FILE is one of the ALLOWED
# files' replies to its query (told by its ID), or REFUSED; prints the count
# of replies, misses and others
judge() {
	f=$1
	shift
	awk -v n="$nq" '
		FNR == 1 { file++ }
		file < ARGC - 1 { ok[FNR, $0] = 1; next }
		{
			id = ("0x" substr($0, 1, 4)) + 0
			if (id == 0) id = -1
			all++
			if ((id, $0) in ok) next
			if (length($0) >= 24 && substr($0, 8, 1) == "5") { miss++; next }
			bad++
			if (bad <= 3) print "#   reply to query " id ": " substr($0, 1, 60) > "/dev/stderr"
		}
		END { printf "%d %d %d\n", all, miss, bad }' "$@" "$f"
}
# under CMD...: queries in a loop (in the background) while CMD changes the
# file, and for 20 rounds after; every round's replies go to $T/during
under() {
	: >"$T/during"
	rm -f "$T/stop"
	(
		while [ ! -e "$T/stop" ]; do
			ask >>"$T/during" 2>/dev/null || echo "mkquery failed" >>"$T/during"
		done
	) &
	qpid=$!
	sleep 0.2
	"$@"
	i=0
	while [ $i -lt 20 ]; do
		ask >>"$T/after" 2>/dev/null || echo "mkquery failed" >>"$T/after"
		i=$((i + 1))
	done
	touch "$T/stop"
	wait "$qpid"
	qpid=
	cat "$T/after" >>"$T/during"
	rm -f "$T/after"
}
# wait_changed: poll the log for "changed in place" while asking, 10 s at most
wait_changed() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "changed in place" "$T/log" && return 0
		alive || return 1
		ask >/dev/null 2>&1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# ------------------------------------------------- cut short: truncate -s
cp "$T/a/base.snap" "$T/s.snap"
start "$T/s.snap" || { echo "not ok - serve did not start"; cat "$T/log"; exit 1; }
ask >"$T/r"
ok_if "truncate: before, the server answers as A" cmp -s "$T/r" "$T/ans.a"
size=$(wc -c <"$T/s.snap")
under truncate -s $((size / 2)) "$T/s.snap"
ok_if "truncate: the server is up" alive
set -- $(judge "$T/during" "$T/ans.a")
ok_if "truncate: every query answered ($1 replies, $((${1:-0} / nq)) rounds)" \
	[ "${1:-0}" -ge $((20 * nq)) ] && ! grep -q "none\|mkquery failed" "$T/during"
ok_if "truncate: every reply is A's or REFUSED ($2 misses, $3 other)" [ "${3:-1}" -eq 0 ]
truncate -s 0 "$T/s.snap"
under true
ok_if "truncate to 0 bytes: the server is up" alive
set -- $(judge "$T/during" "$T/ans.a")
ok_if "truncate to 0: every reply is A's or REFUSED ($2 misses, $3 other)" \
	[ "${1:-0}" -ge $((20 * nq)) ] && [ "${3:-1}" -eq 0 ]
wait_changed
ok_if "truncate: logged \"changed in place\" once" \
	[ "$(grep -c "changed in place" "$T/log")" -eq 1 ]
stop
ok_if "truncate: SIGTERM, exit 0 (got $rc)" [ "$rc" -eq 0 ]
ok_if "truncate: no sanitizer report" sh -c "! grep -q 'Sanitizer\|runtime error:' '$T/log'"
[ "$fails" -eq 0 ] || { echo "# the server's log:"; sed 's/^/#   /' "$T/log" | head -20; }
f0=$fails

# -------------------------------------------- overwritten in place: cp B
cp "$T/a/base.snap" "$T/s.snap"
start "$T/s.snap" || { echo "not ok - serve did not start"; cat "$T/log"; exit 1; }
ask >"$T/r"
ok_if "cp: before, the server answers as A" cmp -s "$T/r" "$T/ans.a"
under cp "$T/b/base.snap" "$T/s.snap"
ok_if "cp: the server is up" alive
set -- $(judge "$T/during" "$T/ans.a" "$T/ans.b")
ok_if "cp: every query answered ($1 replies, $((${1:-0} / nq)) rounds)" \
	[ "${1:-0}" -ge $((20 * nq)) ] && ! grep -q "none\|mkquery failed" "$T/during"
ok_if "cp: every reply is A's, B's or REFUSED ($2 misses, $3 other)" [ "${3:-1}" -eq 0 ]
wait_changed
ok_if "cp: logged \"changed in place\" once" [ "$(grep -c "changed in place" "$T/log")" -eq 1 ]
ask >"$T/r"
set -- $(judge "$T/r" "$T/ans.a" "$T/ans.b")
ok_if "cp: still answering A's, B's or REFUSED ($2 misses, $3 other)" \
	[ "${1:-0}" -eq "$nq" ] && [ "${3:-1}" -eq 0 ]

# ------------------------------------ published properly: mv C over, SIGHUP
cp "$T/c/base.snap" "$T/new.snap" && mv "$T/new.snap" "$T/s.snap"
kill -HUP "$pid"
i=0
while [ $i -lt 100 ] && ! grep -q "s.snap: reloaded" "$T/log"; do sleep 0.05; i=$((i + 1)); done
ok_if "publish + SIGHUP: reloaded" grep -q "s.snap: reloaded: " "$T/log"
ask >"$T/r"
ok_if "publish + SIGHUP: C's answers" cmp -s "$T/r" "$T/ans.c"
ok_if "publish + SIGHUP: no more \"changed in place\"" \
	[ "$(grep -c "changed in place" "$T/log")" -eq 1 ]
stop
ok_if "cp: SIGTERM, exit 0 (got $rc)" [ "$rc" -eq 0 ]
ok_if "cp: no sanitizer report" sh -c "! grep -q 'Sanitizer\|runtime error:' '$T/log'"
[ "$fails" -eq "$f0" ] || { echo "# the server's log:"; sed 's/^/#   /' "$T/log" | head -20; }
[ "$fails" -eq 0 ]
