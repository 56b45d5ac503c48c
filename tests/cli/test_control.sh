#!/bin/sh
# dnsnap control against running servers (tests/helpers/fakeup.py the upstream,
# on loopback): every command of the channel, as text and JSON, and its exit
# status; the socket found from SNAP alone, 0600, refused to a peer of
# another uid (as root: nobody, with the socket's mode opened up, so that the
# server's own check is what refuses); two servers on one SNAP, both
# answering; a purge while serving is final (not answered from memory or the
# file with the upstream silent, not in the file after SIGTERM, not served
# after a restart); SIGUSR2 after a take-in publishes; a publish bounded by
# --max-bytes; stale entries across a restart with --serve-stale, and none
# without it.
# Usage (from the repository root): tests/cli/test_control.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
. tests/cli/serve_lib.sh
T=$tmp
chmod 755 "$T" # the nobody of the uid check must reach the socket

for need in "$bin" dig python3; do
	command -v "$need" >/dev/null || { echo "not ok - $need is missing"; exit 1; }
done

# out_has NAME TEXT: the last stdout holds TEXT
out_has() {
	if grep -qF -- "$2" "$tmp/out"; then
		echo "ok - $1"
	else
		echo "not ok - $1: stdout lacks '$2':"; sed 's/^/#   /' "$tmp/out"
		fails=$((fails + 1))
	fi
}
# fakeup answers every name with A 192.0.2.7, TTL 3600 (ttl= in its control
# file changes it; mode=silent makes it answer nothing)
python3 tests/helpers/fakeup.py serve --listen 127.0.0.1:0 --port-file "$T/up.port" \
	--log "$T/up.log" --control "$T/up.ctl" --addr 192.0.2.7 --ttl 3600 2>"$T/up.err" &
pids="$pids $!"
i=0
while [ ! -s "$T/up.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
up=$(cat "$T/up.port")
[ -n "$up" ] || { echo "not ok - fakeup did not start"; cat "$T/up.err"; exit 1; }
upstream() { echo "$1" >"$T/up.ctl"; }

S=$T/c.snap
fast="--upstream-timeout 300 --upstream-tries 1"
# shellcheck disable=SC2086 # $fast: words
start a "$S" --upstream "127.0.0.1:$up" --snapshot-every 0 $fast || exit 1
a=$sport
apid=$spid
for n in one two three four; do a_of "$a" "$n.ctl.test" >/dev/null; done

# ------------------------------------------------------------- the socket
sock=$(ls "$T"/c.snap.ctl.* 2>/dev/null)
ok_if "the control socket is beside SNAP, named after it, the pid and 8 hex ($sock)" \
	sh -c "echo '$sock' | grep -qx '$S\.ctl\.$apid\.[0-9a-f]\{8\}'"
ok_if "... mode 0600" [ "$(stat -c %a "$sock" 2>/dev/null)" = 600 ]
ok_if "... a socket" [ -S "$sock" ]

# ------------------------------------------------------------- status
expect "status: exit 0" 0 "$bin" control "$S" status &&
	out_has "status: the pid" "pid $apid" && out_has "status: the cache" "cache: 4 entries" &&
	out_has "status: the upstream, up" "upstream 1: 127.0.0.1:$up up"
expect "status --json: exit 0" 0 "$bin" control "$S" status --json
ok_if "status --json: one object with the pid and the cache's entries" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
sys.exit(not (o["pid"] == int(sys.argv[2]) and o["cache_entries"] == 4 and o["misses"] == 4))' \
	"$T/out" "$apid"
expect "status by --control PATH: exit 0" 0 "$bin" control --control "$sock" status
expect "a snapshot no server serves: exit 1" 1 "$bin" control "$T/none.snap" status &&
	err_has "says so" "no dnsnap serve answers for it"
expect "an unknown command: exit 2" 2 "$bin" control "$S" frobnicate &&
	err_has "names the commands" "unknown command 'frobnicate'"
expect "status with an argument: exit 2" 2 "$bin" control "$S" status --verbose

# ------------------------------------------------------------- publish
expect "publish: exit 0" 0 "$bin" control "$S" publish &&
	out_has "says what it wrote" "published 4 entries (4 from memory"
expect "publish again: nothing new, said" 0 "$bin" control "$S" publish &&
	out_has "says so" "nothing new since the last publish"
expect "publish --json" 0 "$bin" control "$S" publish --json
ok_if "... published false" grep -q '"published":false' "$T/out"
expect "info: the file holds the 4" 0 "$bin" info "$S" && out_has "4 entries" "entries:         4"

# ------------------------------------------------------------- dump
expect "dump: the live cache" 0 "$bin" control "$S" dump --json
ok_if "dump --json: 4 entries" [ "$(grep -c '"key"\|"name"' "$T/out")" -ge 4 ]
expect "dump --name: one" 0 "$bin" control "$S" dump --name two.ctl.test &&
	out_has "the entry" "two.ctl.test."
expect "dump --name of nothing: exit 1" 1 "$bin" control "$S" dump --name nothing.ctl.test
expect "dump --name with a bad name: exit 2, the server's message" 2 "$bin" control "$S" \
	dump --name 'a..b' && err_has "names the value" "a..b"

# ------------------------------------------------------------- log-level, reload
expect "log-level debug" 0 "$bin" control "$S" log-level debug
expect "log-level noise: exit 2" 2 "$bin" control "$S" log-level noise
expect "reload" 0 "$bin" control "$S" reload
"$bin" control "$S" log-level info >/dev/null 2>&1

# ------------------------------------------------------------- uid
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	su -s /bin/sh nobody -c "'$bin' control --control '$sock' status" >"$T/nob.out" \
		2>"$T/nob.err"
	ok_if "nobody: refused by the socket's mode (exit 2)" [ $? = 2 ]
	chmod 666 "$sock"
	su -s /bin/sh nobody -c "'$bin' control --control '$sock' status" >"$T/nob.out" \
		2>"$T/nob.err"
	rc=$?
	ok_if "nobody, the socket opened up: refused by the server (exit $rc)" [ "$rc" = 2 ]
	ok_if "... saying who may" grep -q "may not control this server (root, uid" "$T/nob.err" ||
		sed 's/^/#   /' "$T/nob.err"
	ok_if "... and it ran nothing" not grep -q "pid" "$T/nob.out"
	chmod 600 "$sock"
else
	echo "ok - # skip the uid checks (not root, or no user nobody)"
fi

# ------------------------------------------------------------- two servers
# shellcheck disable=SC2086
start b "$S" --upstream "127.0.0.1:$up" --snapshot-every 0 $fast || exit 1
b=$sport
bpid=$spid
ok_if "B asked A to publish before it started (a deploy)" poll "$T/b.log" "deploy: "
expect "status reaches both servers of SNAP" 0 "$bin" control "$S" status &&
	out_has "A" "pid $apid" && out_has "B" "pid $bpid"
ok_if "B answers A's names from the file A published (upstream silent)" sh -c "
	echo mode=silent >'$T/up.ctl'; [ \"\$(dig @127.0.0.1 -p $b +short +tries=1 +time=2 \
	one.ctl.test)\" = 192.0.2.7 ]"
upstream mode=answer

# ------------------------------------------------------------- purge, final
a_of "$a" five.ctl.test >/dev/null
a_of "$b" five.ctl.test >/dev/null
expect "purge --name with two servers running: exit 0" 0 "$bin" purge "$S" --name five.ctl.test &&
	err_has "A flushed it" "flushed 1 entry from memory"
upstream mode=silent
ok_if "A: five.ctl.test is not answered from cache (SERVFAIL, upstream silent)" \
	[ "$(rcode_of "$a" five.ctl.test)" = SERVFAIL ]
ok_if "B: nor from its" [ "$(rcode_of "$b" five.ctl.test)" = SERVFAIL ]
ok_if "... and the others still are" [ "$(a_of "$a" two.ctl.test)" = "192.0.2.7 " ]
stop "$bpid"
stop "$apid"
expect "dump of the file after SIGTERM: five.ctl.test is not there" 1 "$bin" dump "$S" \
	--name five.ctl.test
# shellcheck disable=SC2086
start a2 "$S" --upstream "127.0.0.1:$up" $fast || exit 1
ok_if "after a restart: five.ctl.test is not served (SERVFAIL)" \
	[ "$(rcode_of "$sport" five.ctl.test)" = SERVFAIL ]
ok_if "... two.ctl.test is, from the snapshot" [ "$(a_of "$sport" two.ctl.test)" = "192.0.2.7 " ]
stop "$spid"
upstream mode=answer

# ------------------------------------------------------------- take-in, SIGUSR2
S2=$T/t.snap
start t "$S2" --upstream "127.0.0.1:$up" --snapshot-every 0 || exit 1
tpid=$spid
a_of "$sport" mine.ctl.test >/dev/null
"$bin" export "$S" -o "$T/other.dnsx" && "$bin" import "$T/other.dnsx" -o "$S2.new" &&
	mv "$S2.new" "$S2" # another process's file renamed over SNAP
ok_if "the file another process published is taken in" poll "$T/t.log" "taken in" 30
kill -USR2 "$tpid"
ok_if "SIGUSR2 after a take-in publishes what memory holds" poll "$T/t.log" "published (SIGUSR2)"
expect "... mine.ctl.test is in the file" 0 "$bin" dump "$S2" --name mine.ctl.test
kill -USR2 "$tpid"
ok_if "a second SIGUSR2: nothing new, said at info" poll "$T/t.log" "not published (SIGUSR2)"
stop "$tpid"

# ------------------------------------------------------------- bounded file
S3=$T/b.snap
start bound "$S3" --upstream "127.0.0.1:$up" --max-bytes 1M --snapshot-every 1 || exit 1
bp=$spid
flood "$sport" 30000 flood.test
sleep 2
"$bin" control "$S3" status --json >"$T/bound.json" 2>/dev/null
mem=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cache_entries"])' \
	"$T/bound.json")
"$bin" control "$S3" publish >/dev/null 2>&1
stop "$bp"
"$bin" info --json "$S3" >"$T/binfo.json"
file=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["entries"])' \
	"$T/binfo.json")
ok_if "--max-bytes 1M: the file holds at most what memory does (+10%): $file <= $mem" \
	[ "$file" -gt 0 -a "$file" -le $((mem + mem / 10)) ]

# ------------------------------------------------------------- stale across a restart
upstream "mode=answer ttl=2"
S4=$T/s.snap
start st "$S4" --upstream "127.0.0.1:$up" --serve-stale 3600 --upstream-timeout 200 \
	--upstream-tries 1 || exit 1
a_of "$sport" old.ctl.test >/dev/null
sleep 3 # expired
stop "$spid"
upstream mode=silent
start st2 "$S4" --upstream "127.0.0.1:$up" --serve-stale 3600 --upstream-timeout 200 \
	--upstream-tries 1 || exit 1
ok_if "--serve-stale: an entry expired before the restart is served stale, upstream silent" \
	sh -c "dig @127.0.0.1 -p $sport +tries=1 +time=3 old.ctl.test A | grep -q 'EDE: 3'"
stop "$spid"
expect "info: the stale entry counted as such" 0 "$bin" info "$S4" &&
	out_has "stale" "stale:           1 of the expired"
expect "dump --expired: marked stale" 0 "$bin" dump --expired "$S4" &&
	out_has "the mark" "(stale)"
expect "dump --json --expired: state stale" 0 "$bin" dump --json --expired "$S4" &&
	out_has "the state" '"state":"stale"'
expect "stats: stale among the expired" 0 "$bin" stats "$S4" &&
	out_has "the count" "1 of them stale"
S5=$T/n.snap
upstream "mode=answer ttl=2"
start st3 "$S5" --upstream "127.0.0.1:$up" --upstream-timeout 200 --upstream-tries 1 || exit 1
a_of "$sport" old.ctl.test >/dev/null
sleep 3
stop "$spid"
ok_if "without --serve-stale nothing expired is written" sh -c \
	"'$bin' info --json '$S5' | grep -q '\"entries\":0'"
start st4 "$S5" --upstream "127.0.0.1:$up" --serve-stale 3600 --upstream-timeout 200 \
	--upstream-tries 1 || exit 1
upstream mode=silent
ok_if "... and so nothing stale after the restart (SERVFAIL)" \
	[ "$(rcode_of "$sport" old.ctl.test)" = SERVFAIL ]
stop "$spid"

[ "$fails" -eq 0 ]
