#!/bin/sh
# dnsnap serve as an operator meets it: the options and their refusals, the
# snapshot at start (missing: a cold start; damaged: a cold start, replaced at
# the next publish; not a snapshot: refused, untouched), publishing on
# SIGUSR2 and every --snapshot-every, the warnings about an old or mostly
# expired snapshot, --max-outstanding and --max-bytes (eviction itself:
# tests/unit/test_cache.c). The upstream is
# tests/helpers/fakeup.py on loopback.
# Usage (from the repository root): tests/cli/test_serve_ops.sh BUILD
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
. tests/cli/serve_lib.sh # poll, a_of (its own start: --json)
T=$tmp

for need in "$bin" dig python3; do
	command -v "$need" >/dev/null || { echo "not ok - $need is missing"; exit 1; }
done

# start NAME ARGS...: dnsnap serve ARGS on a port the system picks, its log in
# $T/NAME.log, its pid in $spid and its port in $sport once it is ready
start() {
	_n=$1
	shift
	"$bin" serve --listen 127.0.0.1:0 --threads 1 --json "$@" >"$T/$_n.json" \
		2>"$T/$_n.log" &
	spid=$!
	pids="$pids $spid"
	poll "$T/$_n.log" "ready: answering" ||
		{ echo "not ok - $_n: not ready"; sed 's/^/#   /' "$T/$_n.log"; return 1; }
	sport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/$_n.log")
}
quiet() { "$@" >/dev/null 2>&1; }
# counter NAME FILE: the last JSON object's member NAME
counter() {
	python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
print(json.loads(lines[-1])[sys.argv[2]])' "$2" "$1" 2>/dev/null
}

# the upstream: fakeup answers every name with A 192.0.2.7, TTL 3600
python3 tests/helpers/fakeup.py serve --listen 127.0.0.1:0 --port-file "$T/up.port" \
	--log "$T/up.log" --control "$T/up.ctl" --addr 192.0.2.7 --ttl 3600 2>"$T/up.err" &
pids="$pids $!"
poll "$T/up.port" "" || { echo "not ok - fakeup did not start"; cat "$T/up.err"; exit 1; }
i=0
while [ ! -s "$T/up.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
up=$(cat "$T/up.port")

# ---------------------------------------------------------------- refusals
expect "--serve-stale without --upstream: exit 2" 2 "$bin" serve "$T/x.snap" --serve-stale 60 &&
	err_has "says what it needs" "--serve-stale needs --upstream"
expect "--allow with host bits: exit 2" 2 "$bin" serve "$T/x.snap" --upstream 127.0.0.1:$up \
	--allow 10.0.0.1/8 && err_has "names the prefix" "10.0.0.1/8 has bits set past its prefix"
expect "--allow not a prefix: exit 2" 2 "$bin" serve "$T/x.snap" --allow 10.0.0.0/33 &&
	err_has "names it" "not ADDR or ADDR/BITS (IPv4 or IPv6): 10.0.0.0/33"
expect "--tcp-max 0: exit 2" 2 "$bin" serve "$T/x.snap" --tcp-max 0 &&
	err_has "says the floor" "--tcp-max: at least 1"
expect "--tcp-per-source not a number: exit 2" 2 "$bin" serve "$T/x.snap" --tcp-per-source x &&
	err_has "names it" "--tcp-per-source"
expect "--tcp-source-prefix 33,56: exit 2" 2 "$bin" serve "$T/x.snap" \
	--tcp-source-prefix 33,56 && err_has "says the ranges" "IPv4 0-32, IPv6 0-128, not 33,56"
expect "--tcp-source-prefix 24: exit 2" 2 "$bin" serve "$T/x.snap" --tcp-source-prefix 24 &&
	err_has "says the form" "not V4,V6 (e.g. 24,56): 24"
expect "--metrics-allow without --metrics: exit 2" 2 "$bin" serve "$T/x.snap" \
	--metrics-allow 10.0.0.0/8 && err_has "says what it needs" "--metrics-allow needs --metrics"
expect "--metrics-allow not a prefix: exit 2" 2 "$bin" serve "$T/x.snap" --metrics 127.0.0.1:0 \
	--metrics-allow 10.0.0.1/8 && err_has "names it" "--metrics-allow: 10.0.0.1/8 has bits set"
expect "--max-bytes not a size: exit 2" 2 "$bin" serve "$T/x.snap" --max-bytes 12X &&
	err_has "names it" "--max-bytes: not a size"
expect "--log-level unknown: exit 2" 2 "$bin" serve "$T/x.snap" --log-level loud &&
	err_has "lists the levels" "debug, info, warning or error, not loud"
expect "--upstream on port 0: exit 2" 2 "$bin" serve "$T/x.snap" --upstream 127.0.0.1:0 &&
	err_has "names it" "--upstream: not ADDR[:PORT]"
expect "--upstream-timeout under 10 ms: exit 2" 2 "$bin" serve "$T/x.snap" \
	--upstream 127.0.0.1:$up --upstream-timeout 5 && err_has "says the floor" "at least 10"
expect "--user unknown: exit 2" 2 "$bin" serve "$T/x.snap" --upstream 127.0.0.1:$up \
	--listen 127.0.0.1:0 --user no-such-user-dnsnap && err_has "names it" \
	"--user: no such user: no-such-user-dnsnap"
# a file that is not a snapshot is never replaced
printf 'my notes\n' >"$T/notes"
expect "SNAP not a snapshot, forwarding: exit 2" 2 "$bin" serve "$T/notes" \
	--upstream 127.0.0.1:$up --listen 127.0.0.1:0 && err_has "says why" \
	"(the server would replace it)"
ok_if "... and the file is untouched" [ "$(cat "$T/notes")" = "my notes" ]
# cache-only, a missing SNAP is an error still (there is nothing to answer from)
expect "cache-only, SNAP missing: exit 2" 2 "$bin" serve "$T/missing.snap" \
	--listen 127.0.0.1:0 && err_has "names the file" "missing.snap"

# ----------------------------------------- a cold start, SIGUSR2, the timer
if start cold "$T/cold.snap" --upstream "127.0.0.1:$up"; then
	ok_if "missing SNAP: a cold start, logged" grep -q "no snapshot yet: a cold start" \
		"$T/cold.log"
	ok_if "a miss is answered from the upstream" [ "$(a_of "$sport" www.cold.test)" = "192.0.2.7 " ]
	ok_if "... and again from memory" [ "$(a_of "$sport" www.cold.test)" = "192.0.2.7 " ]
	ok_if "no snapshot before SIGUSR2" [ ! -e "$T/cold.snap" ]
	kill -USR2 "$spid"
	ok_if "SIGUSR2: published, logged" poll "$T/cold.log" "published (SIGUSR2): 1 entry"
	ok_if "... the file holds the name" quiet "$bin" get "$T/cold.snap" www.cold.test A
	ok_if "... and the server maps it" poll "$T/cold.log" "published (SIGUSR2)"
	kill -USR1 "$spid"
	poll "$T/cold.json" '"event":"counters"' 30
	ok_if "counters: 1 upstream answer, 1 memory hit" [ "$(counter upstream_answers \
		"$T/cold.json")/$(counter hits_memory "$T/cold.json")" = "1/1" ]
	# nothing new since: SIGUSR2 again leaves the file as it is
	ino=$(ls -i "$T/cold.snap")
	kill -USR2 "$spid"
	kill -USR1 "$spid"
	poll "$T/cold.json" '"event":"counters"' 30
	ok_if "nothing new: SIGUSR2 does not rewrite the file" [ "$(ls -i "$T/cold.snap")" = "$ino" ]
	a_of "$sport" www2.cold.test >/dev/null
	stop "$spid"
	ok_if "SIGTERM: exit 0" [ $? -eq 0 ]
	ok_if "stopping: published while still answering, with the new name" \
		grep -q "published (stopping): 2 entries" "$T/cold.log"
	ok_if "... and not again at the exit (nothing came in between)" \
		not grep -q ": published (exit)" "$T/cold.log"
fi
# restart: the name comes from the map, the upstream is not asked
before=$(wc -l <"$T/up.log")
if start warm "$T/cold.snap" --upstream "127.0.0.1:$up"; then
	ok_if "restart: answered" [ "$(a_of "$sport" www.cold.test)" = "192.0.2.7 " ]
	ok_if "... without asking upstream" [ "$(wc -l <"$T/up.log")" -eq "$before" ]
	kill -USR1 "$spid"
	poll "$T/warm.json" '"event":"counters"' 30
	ok_if "... a map hit" [ "$(counter hits_map "$T/warm.json")" = 1 ]
	stop "$spid"
fi
# the timer
if start timer "$T/timer.snap" --upstream "127.0.0.1:$up" --snapshot-every 1; then
	a_of "$sport" www.timer.test >/dev/null
	ok_if "--snapshot-every 1: published by the timer" \
		poll "$T/timer.log" "published (every --snapshot-every)" 60
	stop "$spid"
fi

# ------------------------------------------------------- a damaged snapshot
"$bin" get "$T/cold.snap" www.cold.test A >/dev/null
size=$(wc -c <"$T/cold.snap")
head -c $((size / 2)) "$T/cold.snap" >"$T/cut.snap"
if start cut "$T/cut.snap" --upstream "127.0.0.1:$up"; then
	ok_if "a damaged SNAP: started cold, logged" grep -q "a cold start (the next snapshot replaces it)" \
		"$T/cut.log"
	a_of "$sport" www.cut.test >/dev/null
	stop "$spid"
	ok_if "... replaced at exit by a whole snapshot" quiet "$bin" verify "$T/cut.snap"
fi

# ------------------------------------------------ old and expired snapshots
# cache-only: the cold.snap entries live 3600 s; two days on, all expired
if start old "$T/cold.snap" --now +2d; then
	ok_if "a snapshot 2 days old: warned" grep -q "warning: .*cold.snap: the snapshot is old" \
		"$T/old.log"
	ok_if "mostly expired: warned" grep -q "warning: .*most entries are expired (2 of the 2 looked at" \
		"$T/old.log"
	stop "$spid"
fi
if start fresh "$T/cold.snap"; then
	ok_if "a fresh snapshot: no warning" not grep -q "warning:" "$T/fresh.log"
	stop "$spid"
fi

# ---------------------------------------------------------------- the limits
# --max-outstanding 1, the upstream slow: of 4 names asked at once, 3 are dropped
echo "mode=slow delay=800" >"$T/up.ctl"
if start busy "$T/busy.snap" --upstream "127.0.0.1:$up" --max-outstanding 1 \
	--upstream-timeout 3000; then
	for n in 1 2 3 4; do
		dig @127.0.0.1 -p "$sport" +tries=1 +time=2 "n$n.busy.test" A >/dev/null 2>&1 &
	done
	sleep 2.5
	kill -USR1 "$spid"
	poll "$T/busy.json" '"event":"counters"' 30
	ok_if "--max-outstanding 1: the misses beyond it dropped (overload)" \
		[ "$(counter dropped_overload "$T/busy.json")" -ge 1 ]
	stop "$spid"
fi
echo "mode=answer" >"$T/up.ctl"
# --max-bytes: at least 1M; the cache stays under it
expect "--max-bytes under 1M: exit 2" 2 "$bin" serve "$T/x.snap" --upstream 127.0.0.1:$up \
	--max-bytes 64k && err_has "says the floor" "--max-bytes: at least 1M, not 64k"
if start small "$T/small.snap" --upstream "127.0.0.1:$up" --max-bytes 1M; then
	i=0
	while [ $i -lt 400 ]; do echo "n$i.small.test A"; i=$((i + 1)); done >"$T/names"
	dig @127.0.0.1 -p "$sport" +tries=1 +time=5 -f "$T/names" >"$T/small.dig" 2>&1
	answered=$(grep -c "status: NOERROR" "$T/small.dig")
	kill -USR1 "$spid"
	poll "$T/small.json" '"event":"counters"' 30
	ok_if "--max-bytes 1M: reported" [ "$(counter cache_max_bytes "$T/small.json")" = 1048576 ]
	# each name answered is cached (a slow fakeup under load may miss a few)
	ok_if "... each of the $answered names answered cached" \
		[ "$answered" -gt 300 -a "$(counter cache_entries "$T/small.json")" = "$answered" ]
	ok_if "... within it" [ "$(counter cache_bytes "$T/small.json")" -le 1048576 ]
	stop "$spid"
fi

# ------------------------------------- --tcp-per-source, --tcp-source-prefix
# two connections held from 127.0.0.2 with --tcp-per-source 2 and
# --tcp-source-prefix 24,56: one from 127.0.0.3 (the same /24) is closed
# unanswered, a query from 127.0.1.2 (another /24) answered over TCP
if start prefix "$T/prefix.snap" --upstream "127.0.0.1:$up" --tcp-per-source 2 \
	--tcp-source-prefix 24,56; then
	python3 -c 'import socket, struct, sys, time
port = int(sys.argv[1])
def conn(src):
    s = socket.socket(); s.settimeout(5); s.bind((src, 0)); s.connect(("127.0.0.1", port))
    return s
held = [conn("127.0.0.2"), conn("127.0.0.2")]
time.sleep(0.3)
q = struct.pack(">HHHHHH", 7, 0x100, 1, 0, 0, 0) + b"\x03www\x04pfx1\x04test\x00\x00\x01\x00\x01"
s = conn("127.0.0.3")
s.sendall(struct.pack(">H", len(q)) + q)
try:
    r = s.recv(2)
    print("closed" if r == b"" else "answered", flush=True)
except socket.timeout:
    print("waiting", flush=True)
except OSError:
    print("closed", flush=True)
time.sleep(3)' "$sport" >"$T/prefix.out" &
	holder=$!
	poll "$T/prefix.out" "" 80
	r=$(cat "$T/prefix.out")
	ok_if "--tcp-source-prefix 24,56, 2 held from 127.0.0.2: 127.0.0.3 closed unanswered ($r)" \
		[ "$r" = closed ]
	r=$(dig @127.0.0.1 -p "$sport" -b 127.0.1.2 +tcp +tries=1 +time=2 +short www.pfx2.test A)
	ok_if "... 127.0.1.2, another /24, answered over TCP ($r)" [ "$r" = "192.0.2.7" ]
	wait "$holder" 2>/dev/null
	stop "$spid"
	ok_if "... counted: tcp_refused_source 1" [ "$(counter tcp_refused_source "$T/prefix.json")" = 1 ]
fi

# the idle time as the slots run short, --tcp-max 4: one silent connection
# (a quarter of them) is still open after 2.5 s (the 10 s hold); a second
# one makes it half, and the first is closed within 5 s (1 s then; the
# second then has a quarter again, and its 10 s)
if start short "$T/short.snap" --upstream "127.0.0.1:$up" --tcp-max 4; then
	python3 -c 'import socket, sys, time
port = int(sys.argv[1])
def conn():
    s = socket.socket(); s.connect(("127.0.0.1", port)); return s
def closed(s, t):
    s.settimeout(t)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True
a = conn()
time.sleep(2.5)
first = "open" if not closed(a, 0.1) else "closed"
b = conn()
print(first, "closed" if closed(a, 5) else "open", flush=True)' "$sport" \
		>"$T/short.out"
	r=$(cat "$T/short.out")
	ok_if "--tcp-max 4: one idle connection kept 2.5 s, closed within 5 s once a second one came ($r)" \
		[ "$r" = "open closed" ]
	stop "$spid"
fi

# ------------------------------------------------- TCP slots and --allow
# 140 idle TCP connections from outside --allow take at most 16 of the 128
# slots: a client inside it is still answered over TCP
if start acl "$T/acl.snap" --upstream "127.0.0.1:$up" --allow 127.0.0.2/32; then
	python3 -c 'import socket, sys, time
socks = []
for i in range(140):
    s = socket.socket(); s.settimeout(2)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1]))); socks.append(s)
    except OSError:
        pass
print(len(socks), flush=True); time.sleep(4)' "$sport" >"$T/held.n" &
	holder=$!
	poll "$T/held.n" "" 30
	i=0
	while [ ! -s "$T/held.n" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	r=$(dig @127.0.0.1 -p "$sport" -b 127.0.0.2 +tcp +tries=1 +time=2 +short www.acl.test A)
	ok_if "140 connections from outside --allow held: an allowed client answered over TCP ($r)" \
		[ "$r" = "192.0.2.7" ]
	r=$(dig @127.0.0.1 -p "$sport" -b 127.0.0.1 +tries=1 +time=2 www.acl.test A |
		sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
	ok_if "... and a query from outside it REFUSED over UDP ($r)" [ "$r" = REFUSED ]
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	stop "$spid"
fi

# an IPv4-mapped prefix is the IPv4 prefix it maps
if start mapped "$T/mapped.snap" --upstream "127.0.0.1:$up" --allow ::ffff:127.0.0.2/128; then
	r=$(dig @127.0.0.1 -p "$sport" -b 127.0.0.2 +tries=1 +time=2 +short www.mapped.test A)
	ok_if "--allow ::ffff:127.0.0.2/128: 127.0.0.2 answered ($r)" [ "$r" = "192.0.2.7" ]
	r=$(dig @127.0.0.1 -p "$sport" -b 127.0.0.1 +tries=1 +time=2 www.mapped.test A |
		sed -n 's/.*status: \([A-Z]*\),.*/\1/p')
	ok_if "... 127.0.0.1 REFUSED ($r)" [ "$r" = REFUSED ]
	stop "$spid"
fi
expect "--now with --upstream: exit 2" 2 "$bin" serve "$T/x.snap" --upstream 127.0.0.1:$up \
	--now +1h && err_has "says why" "--now needs a server without --upstream"
# as root: a snapshot --user cannot read (root's, 0600, as a root `dnsnap load`
# leaves it) is refused at start, not found out at the first publish
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod o+x "$T" && mkdir "$T/nb" && chown nobody "$T/nb"
	cp "$T/cold.snap" "$T/nb/s.snap" && chmod 600 "$T/nb/s.snap"
	expect "--user nobody, SNAP root's 0600: exit 2" 2 "$bin" serve "$T/nb/s.snap" \
		--upstream 127.0.0.1:$up --listen 127.0.0.1:0 --user nobody &&
		err_has "says what to do" "the file there cannot be read (Permission denied)"
fi

[ "$fails" -eq 0 ] || { echo "# $fails failed"; exit 1; }
