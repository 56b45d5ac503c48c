#!/bin/sh
# dnsnap serve --json: each counters dump (SIGUSR1, and at exit) is one JSON
# object on one line of standard output, counting exactly the queries sent;
# the log stays on standard error and says "1 thread"; the options in the
# forms of the one parser (--opt=VALUE, --, an ISO 8601 --now).
# Usage (from the repository root): tests/cli/test_serve_json.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
mkq=$build/mkquery
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
T=$tmp

for need in "$bin" "$mkq"; do
	[ -x "$need" ] || { echo "not ok - $need is not built"; exit 1; }
done
# the one entry: www.example.com A, live at 2023-11-14T22:13:20Z (1700000000)
# (made from its stream: the committed .snap is little-endian, and make test-cross
# runs this on s390x)
"$bin" import spec/vectors/valid/301-stream-worked-example.dnsx -o "$T/s.snap" \
	--now 1700000000 || { echo "not ok - import of the worked example's stream"; exit 1; }

# wait_for FILE TEXT: poll FILE for TEXT, 5 s at most, while the server runs
wait_for() {
	i=0
	while [ $i -lt 100 ]; do
		grep -qF -- "$2" "$1" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}
# json_line N PYTHON-ASSERTION: line N of the server's stdout is a JSON object d
json_line() {
	n=$1
	if python3 -c "import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[$n - 1])
assert $2, d" "$T/out.json" 2>"$T/py"; then
		echo "ok - json line $n: $3"
	else
		echo "not ok - json line $n: $3"; sed 's/^/#   /' "$T/py" | tail -3
		fails=$((fails + 1))
	fi
}

expect "serve --json: a bad --now" 2 "$bin" serve --json --now=sometime "$T/s.snap" &&
	err_has "bad --now" "--now: not a time: sometime"
expect "serve: --now 0 refused" 2 "$bin" serve --now 0 "$T/s.snap" &&
	err_has "now 0" "--now: the time 0"
expect "serve: two snapshots" 2 "$bin" serve "$T/s.snap" "$T/s.snap" &&
	err_has "two" "unexpected argument"

"$bin" serve --json --listen=127.0.0.1:0 --threads=1 --now 2023-11-14T22:14:20Z -- "$T/s.snap" \
	>"$T/out.json" 2>"$T/log" &
pid=$!
wait_for "$T/log" "listening on 127.0.0.1:" ||
	{ echo "not ok - serve did not start"; sed 's/^/#   /' "$T/log"; exit 1; }
port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
ok_if "the log: 1 thread, singular" \
	grep -qx "[0-9T:.-]*Z info: listening on 127.0.0.1:$port (UDP: 1 thread; TCP)" "$T/log"
ok_if "the log: the fixed clock in ISO 8601" \
	grep -qx "[0-9T:.-]*Z info: the clock is fixed at 2023-11-14T22:14:20Z (1700000060, --now)" \
	"$T/log"

# 2 hits and 1 miss over UDP, 1 hit over TCP
"$mkq" udp "$port" --wait 2000 "$("$mkq" hex www.example.com A --id 1)" \
	"$("$mkq" hex www.example.com A --id 2)" "$("$mkq" hex nothere.example A --id 3)" >"$T/udp"
"$mkq" tcp "$port" --wait 2000 "$("$mkq" hex www.example.com A --id 4)" >"$T/tcp"
ok_if "3 UDP replies" [ "$(grep -c '^[0-9a-f]' "$T/udp")" -eq 3 ]

kill -USR1 "$pid"
i=0
while [ $i -lt 100 ] && [ "$(wc -l <"$T/out.json")" -lt 1 ]; do sleep 0.05; i=$((i + 1)); done
json_line 1 "d['event'] == 'counters' and d['file'] == sys.argv[1].rsplit('/', 1)[0] + '/s.snap' \
and d['queries'] == 4 and d['udp'] == 3 and d['tcp'] == 1 and d['hits'] == 3 and d['misses'] == 1 \
and d['formerr'] == 0 and d['servfail'] == 0 and d['dropped'] == 0 and d['truncated'] == 0 and \
d['tcp_connections'] == 1 and d['damaged_entries'] == 0 and d['changed_in_place'] is False and \
d['time'].endswith('Z')" "SIGUSR1: the queries counted"
ok_if "no counters line on stderr with --json" not grep -q "counters" "$T/log"

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
ok_if "SIGTERM: exit 0 (got $rc)" [ "$rc" -eq 0 ]
ok_if "two JSON lines: SIGUSR1's and the exit's" [ "$(wc -l <"$T/out.json")" -eq 2 ]
json_line 2 "d['event'] == 'exit' and d['queries'] == 4 and d['hits'] == 3" "at exit"
[ "$fails" -eq 0 ] || { echo "# the server's log:"; sed 's/^/#   /' "$T/log"; }
[ "$fails" -eq 0 ]
