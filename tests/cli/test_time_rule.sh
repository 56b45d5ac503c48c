#!/bin/sh
# The time rule on every path of the tool (issue 22, item 1; spec/FORMAT.md,
# "Times a reader accepts"): a snapshot holding future.example A cached ten
# years ahead (a host whose clock was wrong: build/mkfuture) beside
# good.example A cached now. serve answers good.example and not future.example
# (dig asking it); get refuses it (exit 2, named); verify names it (exit 2);
# info counts it (exit 2); a load onto the file publishes without it, a purge
# takes it as damage (--drop-damaged: written without it); import of
# the file's export stream is refused (exit 2, nothing written); load --now
# +3650d is refused (exit 2) and writes nothing. Each held the future entry as
# good before the rule.
# Usage (from the repository root): tests/cli/test_time_rule.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
T=$tmp
fix=tests/fixtures/unbound-dump_cache.txt
[ -x "$build/mkfuture" ] || { echo "not ok - $build/mkfuture is not built"; exit 1; }
command -v dig >/dev/null ||
	{ echo "not ok - dig is missing (package bind9-dnsutils: make deps)"; exit 1; }

"$build/mkfuture" "$T/f.snap" 315360000 || { echo "not ok - mkfuture"; exit 1; }
cp "$T/f.snap" "$T/orig.snap"

# ------------------------------------------------------------------ serve
: >"$T/log"
"$bin" serve "$T/f.snap" --listen 127.0.0.1:0 2>"$T/log" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q "listening on 127.0.0.1:" "$T/log"; do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
	i=$((i + 1))
done
port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
[ -n "$port" ] || { echo "not ok - serve did not start"; cat "$T/log"; exit 1; }
status_of() { dig @127.0.0.1 -p "$port" +tries=2 +time=2 "$1" A | sed -n 's/.*status: \([A-Z]*\),.*/\1/p'; }
ans_of() { dig @127.0.0.1 -p "$port" +tries=2 +time=2 +short "$1" A; }
ok_if "serve: good.example answered from the map" [ "$(ans_of good.example)" = 192.0.2.7 ]
# no upstream: a miss is REFUSED, never the future entry's answer
ok_if "serve: future.example not answered" [ -z "$(ans_of future.example)" ]
ok_if "serve: future.example is a miss (REFUSED without an upstream)" \
	[ "$(status_of future.example)" = REFUSED ]
expect "serve: status --json" 0 "$bin" control "$T/f.snap" status --json &&
	ok_if "serve: the refusals counted (time_refused)" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["time_refused"] >= 1' "$T/out"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
cp "$T/orig.snap" "$T/f.snap" # serve's stop may have published

# -------------------------------------------------------------- get
expect "get: good.example" 0 "$bin" get "$T/f.snap" good.example
expect "get: future.example refused" 2 "$bin" get "$T/f.snap" future.example &&
	err_has "get: said why" "future.example IN A: refused by the time rule: cached 3153"

# ------------------------------------------------------------ verify, info
expect "verify: the future entry is damage" 2 "$bin" verify "$T/f.snap" &&
	err_has "verify: named" "$T/f.snap: entry 2 (future.example. A), its Inception: cached 3153" &&
	err_has "verify: counted" "$T/f.snap: 1 entry refused by the time rule"
expect "verify --json" 2 "$bin" verify "$T/f.snap" --json &&
	ok_if "verify --json: ok false, refused 1, the error named" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["ok"] is False and o["refused"] == 1 and o["damaged"] == 0, o
e = [x for x in o["errors"] if x["check"] == "time"]
assert len(e) == 1 and "future.example." in e[0]["reason"], o' "$T/out"
expect "info: counted" 2 "$bin" info "$T/f.snap" &&
	ok_if "info: 1 live, 1 refused" sh -c "grep -qx 'entries:         2 (live 1, expired 0)' '$T/out' &&
		grep -q '^refused:         1 entry cached in the future' '$T/out'"
expect "info --json" 2 "$bin" info "$T/f.snap" --json &&
	ok_if "info --json: live 1, refused 1" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["live"] == 1 and o["refused"] == 1 and o["expired"] == 0, o' "$T/out"
# a --now in the past does not make the newer entries future-dated
expect "info --now in the past: judged at the clock" 2 "$bin" info "$T/f.snap" --json --now 1700000000 &&
	ok_if "info --now past: still refused 1" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["refused"] == 1' "$T/out"

# ------------------------------------------------------ publish (load onto it)
expect "load onto it: published" 0 "$bin" load "$T/f.snap" "$fix" &&
	expect "after the load: verify good" 0 "$bin" verify "$T/f.snap" &&
	expect "after the load: future.example gone" 1 "$bin" get "$T/f.snap" future.example &&
	expect "after the load: good.example kept" 0 "$bin" get "$T/f.snap" good.example

# ------------------------------------------------------------- purge
# the rule's refusals are damage to purge as to every reader: the file is
# left as it is, and --drop-damaged writes it without them
cp "$T/orig.snap" "$T/f.snap"
expect "purge: the future entry is damage, the file unchanged" 2 "$bin" purge "$T/f.snap" \
	--name good.example && err_has "purge: the entry named" "future.example. A: cached" &&
	ok_if "purge: the file unchanged" cmp -s "$T/f.snap" "$T/orig.snap"
expect "purge --drop-damaged: published without it (exit 2: the old file held damage)" 2 \
	"$bin" purge "$T/f.snap" --name good.example --drop-damaged &&
	err_has "purge --drop-damaged: said" "1 damaged entry left out of the new file" &&
	expect "after the purge: future.example not written again" 1 "$bin" get "$T/f.snap" \
		future.example &&
	expect "after the purge: verify good" 0 "$bin" verify "$T/f.snap"

# ------------------------------------------------------------- import
cp "$T/orig.snap" "$T/f.snap"
expect "export of the file" 0 "$bin" export "$T/f.snap" -o "$T/f.dnsx"
expect "import: the stream refused" 2 "$bin" import "$T/f.dnsx" -o "$T/i.snap" &&
	err_has "import: the entry named" "(future.example. " &&
	err_has "import: why" "in the future" &&
	ok_if "import: nothing written" [ ! -e "$T/i.snap" ]

# --------------------------------------------------------- load --now ahead
expect "load --now +3650d: refused" 2 "$bin" load "$T/l.snap" "$fix" --now +3650d &&
	err_has "load --now: why" "--now +3650d: 3153" &&
	ok_if "load --now: nothing written" [ ! -e "$T/l.snap" ]
expect "load --now +4m: within the skew" 0 "$bin" load "$T/l.snap" "$fix" --now +4m
expect "load --now in the past: allowed" 0 "$bin" load "$T/p.snap" "$fix" --now -1d

[ "$fails" -eq 0 ]
