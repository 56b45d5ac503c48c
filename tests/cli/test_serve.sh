#!/bin/sh
# dnsnap serve: the server on 127.0.0.1 (and [::1] when the host has it) at a
# port serve picks, asked by dig and by tests/helpers/mkquery (which sends
# any bytes, over UDP, TCP framed, or TCP raw). Answers must equal what
# dnsnap get prints for the same query; misses, malformed queries, other
# opcodes and EDNS versions get their error replies; what cannot be answered
# is dropped and the server goes on; SIGHUP swaps in a new snapshot (and keeps
# the old one when the new file is bad); SIGUSR1 prints the counters; SIGTERM
# ends it with status 0. Nothing here sleeps blindly: it polls, with limits.
# Usage (from the repository root): tests/cli/test_serve.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
mkq=$build/mkquery
demo=$build/resolver_demo
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
NOW=1700000000
T=$tmp # shorter lines

for need in "$bin" "$mkq" "$demo"; do
	[ -x "$need" ] || { echo "not ok - $need is not built (make test builds it)"; exit 1; }
done
command -v dig >/dev/null ||
	{ echo "not ok - dig is missing (package bind9-dnsutils: make deps)"; exit 1; }

# The snapshots: the stream vector's four entries, and 2,000 of the resolver
# demo's (TXT answers of up to 4 x 224 bytes among them) for the swap.
expect "import the vector stream" 0 "$bin" import spec/vectors/valid/302-stream-four-entries.dnsx \
	-o "$T/s.snap" --now $NOW
"$demo" fill "$T/demo.snap" 2000 >"$T/demo.out" || { echo "not ok - resolver_demo"; exit 1; }

# wait_log TEXT: poll the server's log for TEXT, 5 s at most
wait_log() {
	i=0
	while [ $i -lt 100 ]; do
		grep -qF -- "$1" "$T/log" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
# log_count TEXT: how many log lines hold TEXT
log_count() { grep -cF -- "$1" "$T/log"; }
# q NAME [TYPE] [mkquery hex options]: a query in hex (ID 0xd55d, as get asks)
q() { "$mkq" hex "$@"; }
# udp|tcp HEX...: the replies in hex (tcp: then "open" or "closed")
udp() { "$mkq" udp "$port" --wait 1000 "$@"; }
tcp() { "$mkq" tcp "$port" --wait 1000 "$@"; }
# digq ARGS: dig at the server, one try
digq() { dig @127.0.0.1 -p "$port" +tries=1 +time=2 "$@"; }
# answer_of FILE: the answer records of dig's or get's output, spaces squeezed
answer_of() {
	sed -n '/^;; ANSWER SECTION:$/,/^$/p' "$1" | grep -v '^;;' | grep -v '^$' | tr -s ' \t' '  '
}
# flags_of FILE: the header flags, and the status or rcode
flags_of() {
	sed -n 's/^;; flags: \([a-z ]*\);.*/\1/p' "$1" | tr -s ' ' | sed 's/ $//'
	sed -n 's/.*\(status\|rcode\): \([A-Z]*\),.*/\2/p' "$1"
}
# rcode_of HEX: the reply's RCODE (the low 4 bits of byte 3)
rcode_of() { echo $((0x$(printf '%s' "$1" | cut -c8) & 15)); }

# ------------------------------------------------------------ usage errors
expect "serve without a snapshot" 2 "$bin" serve && err_has "no snapshot" "needs a snapshot"
expect "serve: a snapshot that is not there" 2 "$bin" serve "$T/none.snap" &&
	err_has "missing snapshot" "none.snap"
expect "serve --listen: not an address" 2 "$bin" serve "$T/s.snap" --listen localhost:53 &&
	err_has "bad listen" "--listen: not ADDR:PORT"
expect "serve --threads 0" 2 "$bin" serve "$T/s.snap" --threads 0
expect "serve --threads 65" 2 "$bin" serve "$T/s.snap" --threads 65

# ------------------------------------------------------------------ start
listen="--listen 127.0.0.1:0"
v6=0
if [ -r /proc/net/if_inet6 ] && grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6; then
	listen="$listen --listen [::1]:0"
	v6=1
fi
# shellcheck disable=SC2086 # $listen is two options on purpose
"$bin" serve "$T/s.snap" $listen --threads 2 --now $NOW 2>"$T/log" &
pid=$!
wait_log "listening on 127.0.0.1:" ||
	{ echo "not ok - serve did not start"; cat "$T/log"; exit 1; }
[ $v6 -eq 0 ] || wait_log "listening on [::1]:" || { echo "not ok - no [::1]"; cat "$T/log"; }
port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
ok_if "serve logs the snapshot's entries" grep -q "s.snap: 4 entries, digest " "$T/log"
ok_if "serve logs its address: 127.0.0.1:$port" [ -n "$port" ]
# port 0 is drawn below the kernel's ephemeral range (the man page says why)
lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
ok_if "port 0: $port is from 10000 to below the ephemeral range ($lo)" \
	[ "${port:-0}" -ge 10000 -a "${port:-0}" -lt "$lo" ]
# bound before that line was written, but poll the first answer all the same
i=0
while [ $i -lt 50 ] && [ "$(udp --wait 100 "$(q www.example.com)")" = none ]; do i=$((i + 1)); done

# --------------------------------------------- hits: what dnsnap get prints
for qt in "www.example.com A" "example.com MX" "www.example.com AAAA" "www.example.org A --do" \
	  "WwW.ExAmPle.CoM A"; do
	# shellcheck disable=SC2086
	"$bin" get "$T/s.snap" $qt --now $NOW 2>&1 | noid >"$T/get"
	# shellcheck disable=SC2086
	hex=$(q $qt)
	udp --print --now $NOW "$hex" | noid >"$T/udp"
	ok_if "UDP $qt: the reply prints as dnsnap get prints it" cmp -s "$T/udp" "$T/get" ||
		diff "$T/get" "$T/udp" | head -10
	tcp --print --now $NOW "$hex" | sed '$d' | noid >"$T/tcp"
	ok_if "TCP $qt: the reply prints as dnsnap get prints it" cmp -s "$T/tcp" "$T/get" ||
		diff "$T/get" "$T/tcp" | head -10
done
# dig over UDP and TCP: the same records, flags and rcode as get
for qt in "www.example.com A" "example.com MX" "www.example.com AAAA"; do
	# shellcheck disable=SC2086
	"$bin" get "$T/s.snap" $qt --now $NOW >"$T/get"
	for tr in +notcp +tcp; do
		# shellcheck disable=SC2086
		digq $tr +noadflag $qt >"$T/dig"
		ok_if "dig $tr $qt: the records of get" [ "$(answer_of "$T/dig")" = "$(answer_of "$T/get")" ]
		ok_if "dig $tr $qt: the flags and rcode of get" \
			[ "$(flags_of "$T/dig")" = "$(flags_of "$T/get")" ]
	done
done
"$bin" get "$T/s.snap" www.example.com A --now $NOW >"$T/get"
ok_if "the records compared are there: www.example.com A 192.0.2.1" \
	[ "$(answer_of "$T/get")" = "www.example.com. 300 IN A 192.0.2.1" ]

# ------------------------------------------------------------------ errors
digq nothere.example A >"$T/dig"
ok_if "a miss: REFUSED" grep -q "status: REFUSED" "$T/dig"
ok_if "a miss with EDNS: EDE 20 (Not Authoritative), not in cache" \
	grep -q "EDE: 20 (Not Authoritative): (not in cache)" "$T/dig"
digq +noedns nothere.example A >"$T/dig"
ok_if "a miss without EDNS: REFUSED, no OPT" \
	sh -c "grep -q 'status: REFUSED' '$T/dig' && ! grep -q 'OPT PSEUDOSECTION' '$T/dig'"
digq +opcode=notify www.example.com SOA >"$T/dig"
ok_if "opcode NOTIFY: NOTIMP" grep -q "opcode: NOTIFY, status: NOTIMP" "$T/dig"
digq +edns=1 +noednsneg www.example.com A >"$T/dig"
ok_if "EDNS version 1: BADVERS" grep -q "status: BADVERS" "$T/dig"
ok_if "BADVERS: our OPT says version 0" grep -q "EDNS: version: 0," "$T/dig"

good=$(q www.example.com)
body=${good#????????????????????????} # after the 12-byte header
qhex=$(q www.example.com --noedns)
qhex=${qhex#????????????????????????}
r=$(udp "d55d01000002000000000000$qhex")
ok_if "QDCOUNT 2: FORMERR with the ID" [ "$(rcode_of "$r")" = 1 ] && ok_if "FORMERR: ID d55d" \
	[ "${r%"${r#????}"}" = d55d ]
r=$(udp "d55d0100000100000000000003777777")
ok_if "a question cut short: FORMERR, header only" [ "$r" = d55d81810000000000000000 ]
r=$(udp "d55d0100000100000000000003777777c00c00010001")
ok_if "a pointer in the question: FORMERR" [ "$(rcode_of "$r")" = 1 ]
r=$(udp "d55d01000001000000000002$body")
ok_if "two additional records: FORMERR" [ "$(rcode_of "$r")" = 1 ]
r=$(udp "d55d21000001000000000001$body") # opcode 4 by hand
ok_if "NOTIFY by hand: NOTIMP with the opcode" [ "${r%"${r#????????}"}" = d55da184 ]

# dropped, and the server goes on: short, a response, garbage (QR set),
# longer than any query, and a good query after each
for what in "11 bytes:0100000100000000000000" "a response:d55d81800001000000000000" \
	    "600 bytes of ff:$(printf 'ff%.0s' $(seq 600))" \
	    "5000 bytes:$(printf '0001%.0s' $(seq 2500))"; do
	r=$(udp --wait 150 "${what#*:}" "$good")
	ok_if "dropped: ${what%%:*}" [ "$(echo "$r" | head -1)" = none ]
	ok_if "answers after ${what%%:*}" [ "$(rcode_of "$(echo "$r" | tail -1)")" = 0 ]
done
r=$(udp "$(printf '%s' "$good" | cut -c1-80)")
ok_if "a query cut inside its OPT: FORMERR" [ "$(rcode_of "$r")" = 1 ]
r=$(udp "$(q www.example.com --noedns)ffffff")
ok_if "bytes after the last record are ignored: answered" [ "$(rcode_of "$r")" = 0 ]

# ---------------------------------------------------------------------- TCP
tcp "$(q www.example.com --id 1)" "$(q nothere.example --id 2)" "$(q example.com MX --id 3)" \
	>"$T/tcp"
ok_if "TCP: three pipelined queries, three replies in order" \
	[ "$(cut -c1-4 "$T/tcp" | tr '\n' ' ')" = "0001 0002 0003 open " ]
tcp --wait 150 "" 01 "$good" >"$T/tcp"
ok_if "TCP: empty and 1-byte messages dropped, the next answered" \
	[ "$(cut -c1-8 "$T/tcp" | tr '\n' ' ')" = "d55d8180 open " ]
"$mkq" raw "$port" --wait 150 "ffff$(printf '41%.0s' $(seq 300))" >"$T/tcp"
ok_if "TCP: a length longer than what came: waits, no reply" [ "$(cat "$T/tcp")" = open ]
tcp --wait 500 "$good" --junk 70000 >"$T/tcp"
ok_if "TCP: a good query then 70,000 bytes of junk: answered first" \
	[ "$(head -1 "$T/tcp" | cut -c1-8)" = d55d8180 ]
r=$(tcp "$good")
ok_if "TCP: answers a new connection after the junk" [ "$(echo "$r" | head -1 | cut -c1-8)" = d55d8180 ]
r=$("$mkq" hold "$port" 130 --wait 300)
k=${r#closed }
k=${k%% of*}
ok_if "TCP: 130 connections at once: the server closes those over 128 ($r)" \
	[ "${k:-0}" -ge 2 -a "${k:-0}" -lt 130 ]
i=0 # the server sees the 128 others close soon, not at once: poll
while [ $i -lt 20 ] && [ "$(tcp --wait 100 "$good" | head -1 | cut -c1-8)" != d55d8180 ]; do
	i=$((i + 1))
done
ok_if "TCP: answers again once they are closed" [ $i -lt 20 ]
if [ $v6 -eq 1 ]; then
	port6=$(sed -n 's/^.* info: listening on \[::1\]:\([0-9]*\) .*/\1/p' "$T/log")
	r=$("$mkq" udp "$port6" --host ::1 "$good")
	ok_if "[::1]:$port6 over UDP" [ "$(rcode_of "$r")" = 0 ]
	r=$("$mkq" tcp "$port6" --host ::1 "$good" | head -1)
	ok_if "[::1]:$port6 over TCP" [ "$(rcode_of "$r")" = 0 ]
fi
# A second dnsnap serve shares the address (SO_REUSEPORT: the deploy of README.md);
# another program holding it without SO_REUSEPORT keeps it: exit 2, named.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(20)' >"$T/held" &
holder=$!
i=0
while [ ! -s "$T/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
held=$(cat "$T/held")
expect "an address another program holds: exit 2" 2 "$bin" serve "$T/s.snap" \
	--listen "127.0.0.1:$held" && err_has "address in use" "127.0.0.1:$held: TCP: Address already in use"
kill "$holder" 2>/dev/null

# ----------------------------------------------------- SIGHUP: a new snapshot
name0=$(sed -n 's/^  query 0 (\(.*\)):.*/\1/p' "$T/demo.out")
cp "$T/demo.snap" "$T/new.snap" && mv "$T/new.snap" "$T/s.snap" # published as dnsnap does
kill -HUP "$pid"
ok_if "SIGHUP: reloaded, logged" wait_log "s.snap: reloaded: 2000 entries"
r=$(udp "$(q "$name0")")
ok_if "SIGHUP: the new snapshot answers ($name0)" [ "$(rcode_of "$r")" = 0 ]
r=$(udp "$good")
ok_if "SIGHUP: the old snapshot's name is gone (REFUSED)" [ "$(rcode_of "$r")" = 5 ]

# a TXT answer over 512 bytes: cut over UDP (TC), whole over TCP
# (candidates first by the length of their JSON line: a get takes some 40 ms)
"$bin" dump "$T/s.snap" --type TXT --json --now $NOW | awk 'length > 1800 && length < 3000' |
	sed -n 's/^{"name":"\([^"]*\)".*/\1/p' >"$T/txt"
big=
while read -r n; do
	# (the demo's entries are cached after $NOW: get's note of it is get's alone)
	"$bin" get "$T/s.snap" "$n" TXT --now $NOW | noid | grep -v '^;; not yet cached at' >"$T/get"
	size=$(sed -n 's/^;; MSG SIZE  rcvd: \([0-9]*\)/\1/p' "$T/get")
	[ "${size:-0}" -gt 600 ] && [ "$size" -lt 1200 ] && big=$n && break
done <"$T/txt"
ok_if "the demo snapshot has a TXT answer of 600 to 1200 bytes: $big" [ -n "$big" ]
digq +bufsize=512 +ignore "$big" TXT >"$T/dig"
ok_if "UDP, 512 bytes: TC set" grep -q "flags: qr tc rd ra;" "$T/dig"
ok_if "UDP, 512 bytes: the reply fits" \
	[ "$(sed -n 's/^;; MSG SIZE  rcvd: \([0-9]*\)/\1/p' "$T/dig")" -le 512 ]
digq +bufsize=512 +noadflag "$big" TXT >"$T/dig"
ok_if "dig retries over TCP after TC" grep -q "Truncated, retrying in TCP mode" "$T/dig"
# (get escapes the bytes of TXT strings as dig does: the same text)
ok_if "the TCP retry has the whole answer of get" \
	[ "$(sed -n '/^;; ANSWER SECTION:$/,/^$/p' "$T/dig")" = \
	  "$(sed -n '/^;; ANSWER SECTION:$/,/^$/p' "$T/get")" ]
tcp --print --now $NOW "$(q "$big" TXT)" | sed '$d' | noid >"$T/tcp"
ok_if "over TCP: the whole answer, as get prints it" cmp -s "$T/tcp" "$T/get" ||
	diff "$T/get" "$T/tcp" | head -10
r=$(udp "$(q "$big" TXT --noedns)")
ok_if "UDP without EDNS: TC" [ $((0x$(printf '%s' "$r" | cut -c5-6) & 2)) -eq 2 ]
r=$(udp "$(q "$big" TXT --size 1232)")
ok_if "UDP with EDNS 1232: no TC" [ $((0x$(printf '%s' "$r" | cut -c5-6) & 2)) -eq 0 ]

# a bad file published at the path: logged, the old snapshot kept
printf 'not a snapshot' >"$T/new.snap" && mv "$T/new.snap" "$T/s.snap"
kill -HUP "$pid"
ok_if "SIGHUP with a bad file: logged" wait_log "reload failed:"
ok_if "... and it says it keeps the old one" grep -q "still serving the previous snapshot (2000 entries)" \
	"$T/log"
r=$(udp "$(q "$name0")")
ok_if "SIGHUP with a bad file: the old snapshot still answers" [ "$(rcode_of "$r")" = 0 ]

# ------------------------------------------------------- counters, the end
kill -USR1 "$pid"
ok_if "SIGUSR1: counters on stderr" wait_log "info: counters: queries "
line=$(grep "counters: queries" "$T/log" | tail -1)
for c in udp tcp hits misses formerr notimp badvers dropped truncated refused; do
	n=$(printf '%s' "$line" | sed -n "s/.*[ (]$c \([0-9][0-9]*\).*/\1/p")
	ok_if "counter $c: ${n:-missing}, more than 0" [ "${n:-0}" -gt 0 ]
done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
ok_if "SIGTERM: exit 0 (got $rc)" [ "$rc" -eq 0 ]
ok_if "SIGTERM: counters at exit" grep -q "counters at exit: queries" "$T/log"
ok_if "no sanitizer report in the log" sh -c "! grep -q 'Sanitizer' '$T/log'"

[ "$fails" -eq 0 ] || { echo "# the server's log:"; sed 's/^/#   /' "$T/log"; }
[ "$fails" -eq 0 ]
