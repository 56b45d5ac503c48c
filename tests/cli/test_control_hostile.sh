#!/bin/sh
# dnsnap control against hostile and unlucky clients (tests/helpers/fakeup.py
# the upstream, on loopback): silent clients do not delay a publish another
# client asks for, nor a SIGUSR1; clients that never read their reply are
# dropped while the server keeps answering (DNS and control); the 17th client
# is told the server is busy, and served once the silent ones are dropped; a
# request that is not the protocol is answered "e WHY" and "x 2"; a dead
# socket beside SNAP is removed at start (whatever its pid), another uid's
# kept; a socket owned by another uid is skipped by a client that is not root
# (as root: nobody, with runuser); a flush matching nothing publishes
# nothing; purge --expired with a server running (its memory flushed: the
# next publish does not write them back); purge with a cache-only server
# running (reloaded); a stopping server answers "stopping", exit 2; a
# deploy's ask of a server whose reply never ends is bounded by --deploy-wait
# in all; a socket path over sun_path's 108 bytes, bound and reached through
# /proc/self/fd; the socket moving with SNAP's link to another directory;
# serve --control PATH a socket besides the default; a flush with Redis not
# reached is exit 2 (and stops a purge); a stale
# answer counts as a miss and as stale, never as a hit; the SIGUSR1 line
# holds every counter of status --json. No timing is asserted but bounds
# many times what the work takes.
# Usage (from the repository root): tests/cli/test_control_hostile.sh BUILD
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
chmod 755 "$T"

for need in "$bin" dig python3 timeout; do
	command -v "$need" >/dev/null || { echo "not ok - $need is missing"; exit 1; }
done

# hold SOCK N SECONDS [REQUEST]: N clients connected to SOCK for SECONDS, each
# sending REQUEST (nothing: silent) and reading nothing; "held N" in $T/hold.N
# once they are all connected
hold() {
	python3 - "$@" <<'EOF' &
import socket, sys, time
path, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
req = sys.argv[4].encode().decode("unicode_escape").encode() if len(sys.argv) > 4 else b""
cs = []
for _ in range(n):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect(path)
    if req:
        c.sendall(req)
    cs.append(c)
print("held %d" % n, flush=True)
time.sleep(secs)
EOF
	hpid=$!
	pids="$pids $hpid"
}
# ask SOCK REQUEST: REQUEST (python escapes) sent raw to SOCK; the reply in $T/raw
ask() {
	python3 - "$@" >"$T/raw" <<'EOF'
import socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.settimeout(20)
c.connect(sys.argv[1])
c.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
b = b""
try:
    while True:
        k = c.recv(65536)
        if not k:
            break
        b += k
except OSError:
    pass
sys.stdout.write(b.decode(errors="replace"))
EOF
}
# elapsed COMMAND...: runs COMMAND, its exit status; the seconds it took in $secs
elapsed() {
	t0=$(date +%s.%N)
	"$@"
	_rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo "?")
	return $_rc
}

python3 tests/helpers/fakeup.py serve --listen 127.0.0.1:0 --port-file "$T/up.port" \
	--log "$T/up.log" --control "$T/up.ctl" --addr 192.0.2.7 --ttl 3600 2>"$T/up.err" &
pids="$pids $!"
i=0
while [ ! -s "$T/up.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
up=$(cat "$T/up.port")
[ -n "$up" ] || { echo "not ok - fakeup did not start"; cat "$T/up.err"; exit 1; }
upstream() { echo "$1" >"$T/up.ctl"; }
fast="--upstream-timeout 300 --upstream-tries 1"

# ------------------------------------------------------------- a dead socket
S=$T/h.snap
python3 - "$S.ctl.$$.0badc0de" "$S.ctl.$$.0badc0df" <<'EOF'
import os, socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(p)
    s.close() # the file stays, nobody listens: a killed server's
EOF
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chown nobody "$S.ctl.$$.0badc0df"
fi
# shellcheck disable=SC2086 # $fast: words
start a "$S" --upstream "127.0.0.1:$up" --snapshot-every 0 $fast || exit 1
a=$sport
apid=$spid
ok_if "a dead socket of ours beside SNAP (its pid alive) is removed at start" \
	not test -e "$S.ctl.$$.0badc0de"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	ok_if "... a dead one of another uid is left" test -S "$S.ctl.$$.0badc0df"
	rm -f "$S.ctl.$$.0badc0df"
fi
sock=$(ls "$S".ctl."$apid".* 2>/dev/null)
for n in one two three; do a_of "$a" "$n.h.test" >/dev/null; done

# ------------------------------------------------------------- silent clients
hold "$sock" 10 30 >"$T/hold.silent"
ok_if "10 silent clients connected" poll "$T/hold.silent" "held 10" 100
elapsed timeout 20 "$bin" control "$S" publish >"$T/out" 2>"$T/err"
rc=$?
echo "# a publish with 10 silent clients: ${secs} s"
ok_if "a publish asked beside 10 silent clients is answered (exit $rc), not after them" \
	[ "$rc" = 0 ]
out_has() { ok_if "$1" grep -qF -- "$2" "$T/out"; }
out_has "... it published" "published 3 entries"
kill -USR1 "$apid"
ok_if "... and SIGUSR1 is handled meanwhile" poll "$T/a.log" "counters: " 100
ok_if "... and DNS is answered" [ "$(a_of "$a" one.h.test)" = "192.0.2.7 " ]
kill "$hpid" 2>/dev/null

# ------------------------------------------------------------- 17 clients
hold "$sock" 16 30 >"$T/hold.16"
ok_if "16 silent clients connected" poll "$T/hold.16" "held 16" 100
expect "the 17th: exit 2" 2 timeout 20 "$bin" control "$S" status &&
	err_has "told the server is busy" "serves 16 control clients already"
i=0
while [ $i -lt 150 ] && ! "$bin" control "$S" status >/dev/null 2>&1; do
	sleep 0.1
	i=$((i + 1))
done
ok_if "... served once the silent ones are dropped (their 5 s)" [ $i -lt 150 ]
ok_if "... their drop logged" poll "$T/a.log" "no whole request within"
kill "$hpid" 2>/dev/null

# ------------------------------------------------------------- bad requests
ask "$sock" 'HELLO\n\n'
ok_if "a request that is not the protocol: 'e WHY'" grep -q '^e .*not a control request' \
	"$T/raw"
ok_if "... then 'x 2', last" [ "$(tail -1 "$T/raw")" = "x 2" ]
ask "$sock" 'DNSNAP-CONTROL 1\nstatus\n\n'
ok_if "an argument line without 'a ': 'e WHY', 'x 2'" sh -c \
	"grep -q '^e .*not a line' '$T/raw' && [ \"\$(tail -1 '$T/raw')\" = 'x 2' ]"
ask "$sock" 'DNSNAP-CONTROL 1\na status\na --json\n\n'
ok_if "a good request: 'o' lines, then 'x 0'" sh -c \
	"grep -q '^o {' '$T/raw' && [ \"\$(tail -1 '$T/raw')\" = 'x 0' ]"

# ------------------------------------------------------------- never reading
flood "$a" 6000 flood.h.test
sleep 1
hold "$sock" 4 45 'DNSNAP-CONTROL 1\na dump\n\n' >"$T/hold.dump"
ok_if "4 clients asked for a dump of thousands of entries and read nothing" \
	poll "$T/hold.dump" "held 4" 100
sleep 1
elapsed timeout 10 "$bin" control "$S" status >"$T/out" 2>"$T/err"
rc=$?
echo "# status beside 4 clients that do not read: ${secs} s"
ok_if "... status is answered meanwhile (exit $rc)" [ "$rc" = 0 ]
expect "... and publish" 0 timeout 10 "$bin" control "$S" publish
ok_if "... and DNS" [ "$(a_of "$a" two.h.test)" = "192.0.2.7 " ]
ok_if "... they are dropped (30 s unread), logged" poll "$T/a.log" \
	"read nothing of its reply" 450
kill "$hpid" 2>/dev/null
expect "... the server serves on" 0 "$bin" control "$S" status

# ------------------------------------------------------------- flush of nothing
"$bin" control "$S" status --json >"$T/st1.json"
expect "a flush matching nothing: exit 1" 1 "$bin" control "$S" flush --name none.h.test
"$bin" control "$S" status --json >"$T/st2.json"
ok_if "... it published nothing (snapshot_writes unchanged)" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(a["snapshot_writes"] != b["snapshot_writes"])' "$T/st1.json" "$T/st2.json"
expect "reload --json: the pid" 0 "$bin" control "$S" reload --json
ok_if "... in its object" python3 -c '
import json, sys
o = json.load(open(sys.argv[1])); sys.exit(o["pid"] != int(sys.argv[2]) or not o["mapped"])' \
	"$T/out" "$apid"
expect "log-level --json: the pid" 0 "$bin" control "$S" log-level info --json
ok_if "... in its object" grep -q "\"pid\":$apid" "$T/out"
expect "flush --json: the pid" 0 "$bin" control "$S" flush --name three.h.test --json
ok_if "... in its object" grep -q "\"pid\":$apid" "$T/out"
expect "publish --json: the pid" 0 "$bin" control "$S" publish --json
ok_if "... in its object" grep -q "\"pid\":$apid" "$T/out"
expect "a bad option: exit 2" 2 "$bin" control "$S" reload --now
err_has "... 'dnsnap control reload:', pointing to the help" \
	"dnsnap control reload: takes --json alone (dnsnap help control)"
expect "--timeout 0: exit 2" 2 "$bin" control --timeout 0 "$S" status
expect "--timeout 30: exit 0" 0 "$bin" control --timeout 30 "$S" status
stop "$apid"

# ------------------------------------------------------------- purge --expired
upstream "mode=answer ttl=2"
S2=$T/e.snap
# shellcheck disable=SC2086 # $fast: words
start e "$S2" --upstream "127.0.0.1:$up" --serve-stale 3600 --snapshot-every 0 $fast ||
	exit 1
epid=$spid
a_of "$sport" old.h.test >/dev/null
upstream "mode=answer ttl=3600"
a_of "$sport" fresh.h.test >/dev/null
sleep 3 # old.h.test expired (stale, kept with --serve-stale)
expect "publish: the stale entry in the file" 0 "$bin" control "$S2" publish
expect "... dump --expired shows it" 0 "$bin" dump --expired "$S2" --name old.h.test
expect "purge --expired with the server running: exit 0" 0 "$bin" purge --expired "$S2" &&
	err_has "the server flushed it" "flushed 1 entry from memory"
expect "... the server's next publish does not write it back" 0 "$bin" control "$S2" publish
expect "... so it is not in the file" 1 "$bin" dump --expired "$S2" --name old.h.test
expect "... the fresh one is" 0 "$bin" dump "$S2" --name fresh.h.test

# ------------------------------------------------------------- stale: a miss
upstream mode=silent
a_of "$sport" fresh.h.test >/dev/null # a hit, to tell the two apart
upstream "mode=answer ttl=2"
a_of "$sport" late.h.test >/dev/null
sleep 3
upstream mode=silent
"$bin" control "$S2" status --json >"$T/s1.json"
"$bin" control "$S2" status >"$T/s1.txt"
ok_if "a stale answer with the upstream silent (EDE 3)" sh -c \
	"dig @127.0.0.1 -p $sport +tries=1 +time=3 late.h.test A | grep -q 'EDE: 3'"
"$bin" control "$S2" status --json >"$T/s2.json"
"$bin" control "$S2" status >"$T/s2.txt"
ok_if "... counted as a miss and as stale, not as a hit (status, its JSON and its line)" \
	python3 -c '
import json, re, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
d = {k: b[k] - a[k] for k in ("misses", "stale", "hits_memory", "hits_map")}
h = [int(re.search(r"counters: .*?, hits (\d+)", open(f).read()).group(1))
     for f in sys.argv[3:5]]
d["hits (the line)"] = h[1] - h[0]
print("# deltas:", d)
sys.exit(d != {"misses": 1, "stale": 1, "hits_memory": 0, "hits_map": 0,
               "hits (the line)": 0})' "$T/s1.json" "$T/s2.json" "$T/s1.txt" "$T/s2.txt"
kill -USR1 "$epid"
ok_if "SIGUSR1: the counters line" poll "$T/e.log" "counters: "
ok_if "... holds every counter of status --json" python3 -c '
import json, re, sys
o = json.load(open(sys.argv[1]))
line = [l for l in open(sys.argv[2]) if "counters: " in l][-1]
words = set(re.findall(r"[a-z0-9_]+", line))
skip = {"version", "pid", "uptime_seconds", "file", "control", "forwarding", "map_open",
        "map_age_seconds", "upstreams", "l2_url", "now"}
miss = [k for k, v in o.items() if k not in skip and not isinstance(v, (dict, list))
        and k not in words]
miss += ["upstreams." + k for u in o["upstreams"] for k, v in u.items()
         if not isinstance(v, (dict, list)) and k != "name" and k not in words]
print("# missing:", miss)
sys.exit(bool(miss))' "$T/s2.json" "$T/e.log"

# ------------------------------------------------------------- stopping
upstream mode=silent
stop "$epid"
S3=$T/p.snap
start p "$S3" --upstream "127.0.0.1:$up" --snapshot-every 0 --upstream-timeout 4000 \
	--upstream-tries 1 || exit 1
ppid=$spid
psock=$(ls "$S3".ctl.* 2>/dev/null)
dig @127.0.0.1 -p "$sport" +tries=1 +time=8 inflight.h.test A >/dev/null 2>&1 &
sleep 0.5
kill -TERM "$ppid"
poll "$T/p.log" "stopping" 30
expect "a stopping server: publish refused, exit 2" 2 "$bin" control --control "$psock" \
	publish && err_has "says so" "stopping"
expect "... status too (nothing of what the stop frees is read)" 2 "$bin" control \
	--control "$psock" status && err_has "says so" "stopping"
wait "$ppid"
upstream mode=answer

# ------------------------------------------------------------- cache-only
"$bin" dump "$S2" >/dev/null 2>&1 # S2: a snapshot with fresh.h.test
start c "$S2" || exit 1
cpid=$spid
expect "purge with a cache-only server running: exit 0" 0 "$bin" purge "$S2" \
	--name fresh.h.test
ok_if "... the server reloaded the purged file" poll "$T/c.log" "reloaded (dnsnap control)"
ok_if "... and no longer answers it (REFUSED)" sh -c "dig @127.0.0.1 -p $sport +tries=1 \
	+time=3 fresh.h.test A | grep -q 'status: REFUSED'"
stop "$cpid"

# ------------------------------------------------------------- a long path
L=$T/a-directory-name-long-enough-to-pass/the-108-bytes-of-a-unix-socket-path/beside-the-snapshot
mkdir -p "$L"
# shellcheck disable=SC2086 # $fast: words
start long "$L/l.snap" --upstream "127.0.0.1:$up" --snapshot-every 0 $fast || exit 1
lsock=$(ls "$L"/l.snap.ctl.* 2>/dev/null)
ok_if "a SNAP whose socket path is over 108 bytes (${#lsock}): the socket beside it" \
	[ "${#lsock}" -gt 108 -a -S "$lsock" ]
expect "... dnsnap control SNAP reaches it" 0 "$bin" control "$L/l.snap" status
expect "... and --control PATH" 0 "$bin" control --control "$lsock" status
stop "$spid"
ok_if "... removed at exit" not test -e "$lsock"

# ------------------------------------------------------------- SNAP moves
mkdir -p "$T/d1" "$T/d2"
ln -s d1/m.snap "$T/m.snap"
# shellcheck disable=SC2086 # $fast: words
start move "$T/m.snap" --upstream "127.0.0.1:$up" --snapshot-every 0 $fast || exit 1
mpid=$spid
ok_if "SNAP a link to d1/m.snap: the socket in d1" sh -c "ls '$T'/d1/m.snap.ctl.$mpid.* >/dev/null"
ln -sfn d2/m.snap "$T/m.snap"
ok_if "the link moved to d2/m.snap: the socket follows within seconds" \
	poll "$T/move.log" "the control socket moves" 50
expect "... dnsnap control SNAP reaches it there" 0 "$bin" control "$T/m.snap" status
ok_if "... none left in d1" not sh -c "ls '$T'/d1/m.snap.ctl.* >/dev/null 2>&1"
stop "$mpid"

# ------------------------------------------------------------- --control PATH as well
# shellcheck disable=SC2086 # $fast: words
start extra "$T/x.snap" --upstream "127.0.0.1:$up" --snapshot-every 0 --control "$T/extra.sock" \
	$fast || exit 1
expect "serve --control PATH: reached at PATH" 0 "$bin" control --control "$T/extra.sock" status
expect "... and by SNAP, beside it, as well" 0 "$bin" control "$T/x.snap" status
stop "$spid"
ok_if "... both removed at exit" sh -c "! test -e '$T/extra.sock' && ! ls '$T'/x.snap.ctl.* \
	>/dev/null 2>&1"

# ------------------------------------------------------------- Redis not reached
# shellcheck disable=SC2086 # $fast: words
start r "$T/r.snap" --upstream "127.0.0.1:$up" --snapshot-every 0 --l2 redis://127.0.0.1:1 \
	--l2-wait 5 $fast || exit 1
a_of "$sport" gone.h.test >/dev/null
a_of "$sport" kept.h.test >/dev/null
expect "flush with --l2 and Redis not reached: exit 2" 2 "$bin" control "$T/r.snap" flush \
	--name gone.h.test && err_has "says Redis" "dnsnap control flush: Redis: not reached"
ok_if "... memory flushed all the same" grep -q "flushed 1 entry from memory" "$T/out"
expect "purge with that server running: exit 2 (the flush failed)" 2 "$bin" purge \
	"$T/r.snap" --name kept.h.test &&
	err_has "... saying why" "Redis: not reached"
expect "... the server's memory and file flushed before Redis failed" 1 "$bin" control \
	"$T/r.snap" dump --name kept.h.test
stop "$spid"

# ------------------------------------------------------------- a deploy's ask, bounded
S5=$T/d.snap
python3 - "$S5.ctl.$$.0000beef" "$T/drip.log" 2>/dev/null <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
open(sys.argv[2], "w").write("listening\n")
c, _ = s.accept()
open(sys.argv[2], "a").write("accepted\n")
while True: # a reply that never ends: a line every 0.3 s, never its "x"
    c.sendall(b"o still going\n")
    time.sleep(0.3)
EOF
pids="$pids $!"
poll "$T/drip.log" listening
t0=$(date +%s)
# shellcheck disable=SC2086 # $fast: words
start d "$S5" --upstream "127.0.0.1:$up" --deploy-wait 2 $fast || exit 1
t1=$(date +%s)
ok_if "a deploy's ask of a server whose reply never ends: ready after $((t1 - t0)) s (--deploy-wait 2, in all)" \
	[ $((t1 - t0)) -lt 15 ]
ok_if "... it did ask" grep -q accepted "$T/drip.log"
ok_if "... and logged why it starts with the file as it is" grep -q "deploy: .*starting with the file" \
	"$T/d.log"
stop "$spid"

# ------------------------------------------------------------- another uid's socket
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null &&
	id daemon >/dev/null 2>&1; then
	S4=$T/u.snap
	cp "$S2" "$S4"
	chmod 644 "$S4"
	python3 - "$S4.ctl.$$.00c0ffee" "$T/squat.log" <<'EOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chown(sys.argv[1], int(os.popen("id -u daemon").read()), -1)
os.chmod(sys.argv[1], 0o666)
s.listen(4)
open(sys.argv[2], "w").write("listening\n")
while True:
    c, _ = s.accept()
    open(sys.argv[2], "a").write("accepted\n")
    c.sendall(b"o squatted\nx 0\n")
    c.close()
EOF
	pids="$pids $!"
	poll "$T/squat.log" listening
	runuser -u nobody -- "$bin" control "$S4" status >"$T/out" 2>"$T/err"
	rc=$?
	ok_if "nobody: a socket owned by daemon beside SNAP is skipped (exit $rc: no server)" \
		[ "$rc" = 1 ]
	ok_if "... with a note" grep -q "skipped: owned by uid" "$T/err" ||
		sed 's/^/#   /' "$T/err"
	ok_if "... never connected to" not grep -q accepted "$T/squat.log"
else
	echo "ok - # skip the other uid's socket (not root, or no nobody, daemon or runuser)"
fi

[ "$fails" -eq 0 ]
