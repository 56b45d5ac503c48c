#!/bin/sh
# The fleet benchmark's own parts (bench/fleet/, issue 14): the two client
# options it added, zipfload -D and dnsprobe lat -n, against dnsnap serve
# (cache-only) on the stream vector's snapshot; redistool.py's reading of
# dnsnap keys and its Unbound cachedb key and TTL; report.py's tables on a
# run directory made here. (The whole benchmark needs NSD, Unbound and Redis:
# make bench-fleet.)
# Usage (from the repository root): tests/cli/test_fleet_bench.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
zl=$build/deploy_zipfload
probe=$build/peers_dnsprobe
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
T=$tmp

for need in "$bin" "$zl" "$probe"; do
	[ -x "$need" ] || { echo "not ok - $need is not built (make test builds it)"; exit 1; }
done

expect "import the vector stream" 0 "$bin" import spec/vectors/valid/302-stream-four-entries.dnsx \
	-o "$T/s.snap" --now $NOW
"$bin" serve "$T/s.snap" --listen 127.0.0.1:0 --threads 1 --now $NOW 2>"$T/log" &
pid=$!
i=0
until grep -q "listening on 127.0.0.1:" "$T/log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "not ok - serve did not start"; cat "$T/log"; exit 1; }
	sleep 0.05
done
port=$(sed -n 's/.* listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
[ -n "$port" ] || { echo "not ok - no port in serve's log"; cat "$T/log"; exit 1; }
printf 'www.example.com A\n' >"$T/hit"
printf 'www.example.com A\nnothere.example.net A\n' >"$T/two"

# zipfload -D: draws of their own, the ranking of -S kept. Two names, s = 1,
# the second refused: its share is near 1/3 or 2/3, which one is the ranking
# (-S). The draws are a fixed sequence per seed: these cannot flake.
errors() { python3 -c "import json, sys
print(sum(json.loads(x)['errors'] for x in open(sys.argv[1])))" "$tmp/out"; }
expect "zipfload -S 42 -D 1" 0 "$zl" 127.0.0.1 "$port" "$T/two" -r 500 -l 2 -t 1000 -S 42 -D 1
e1=$(errors)
expect "zipfload -S 42 -D 2" 0 "$zl" 127.0.0.1 "$port" "$T/two" -r 500 -l 2 -t 1000 -S 42 -D 2
e2=$(errors)
expect "zipfload -S 42 -D 1 again" 0 "$zl" 127.0.0.1 "$port" "$T/two" -r 500 -l 2 -t 1000 \
	-S 42 -D 1
e3=$(errors)
ok_if "-D 1 twice: the same draws ($e1, $e3 refused)" [ "$e1" = "$e3" ]
ok_if "-D 1 and -D 2: other draws ($e1, $e2 refused)" [ "$e1" != "$e2" ]
ok_if "-D 1 and -D 2: one ranking (both shares on one side of a half)" \
	[ $((e1 > 500)) = $((e2 > 500)) ]
expect "zipfload -D without a value" 2 "$zl" 127.0.0.1 "$port" "$T/two" -r 10 -l 1 -D

# dnsprobe lat -n: each line once, then the end (without -n it would cycle
# for the whole -l 30 s)
expect "dnsprobe lat -n 2: a hit and a refusal, so not all hits" 1 \
	"$probe" lat 127.0.0.1 "$port" "$T/two" -c 1 -n 2 -l 30
ok_if "-n 2: 2 sent, 2 answered, 1 hit, 1 refused" \
	grep -q 'sent=2 answered=2 lost=0 .*hits=1 .*refused=1 ' "$tmp/out"
expect "dnsprobe lat -n 1: one hit" 0 "$probe" lat 127.0.0.1 "$port" "$T/two" -c 4 -n 1 -l 30
ok_if "-n 1 with 4 in flight: 1 sent" grep -q 'sent=1 answered=1 lost=0 .*hits=1 ' "$tmp/out"
expect "dnsprobe lat -n larger than the file: each line once" 1 \
	"$probe" lat 127.0.0.1 "$port" "$T/two" -c 1 -n 50 -l 30
ok_if "-n 50 over 2 lines: 2 sent" grep -q 'sent=2 answered=2 ' "$tmp/out"
kill -TERM "$pid"
wait "$pid"
pid=

# redistool.py: dnsnap keys back to questions (spec/FORMAT.md's worked key),
# Unbound's cachedb key and the smallest TTL of a reply
expect "redistool: keys, Unbound's key, TTLs" 0 env PYTHONDONTWRITEBYTECODE=1 python3 - <<'EOF'
import hashlib, struct, sys
sys.path.insert(0, "bench/fleet")
import redistool as r
k = bytes.fromhex("03636f6d076578616d706c650377777700" "0001" "0001" "00" "00")
assert r.key_to_question(k) == ("www.example.com.", 1), r.key_to_question(k)
assert r.key_to_question(k[:-6] + bytes.fromhex("001c00010000")) == ("www.example.com.", 28)
assert r.key_to_question(k[:-1] + b"\x01t") is None        # a tag
assert r.key_to_question(k[:-2] + b"\x01\x00") is None     # CD
assert r.key_to_question(k[:-4] + b"\x00\x03\x00\x00") is None  # class CH
assert r.key_to_question(k[:-3]) is None                   # cut
assert r.key_to_question(b"\x05ab") is None                # a label past the end
assert r.key_to_question(b"\x41" + b"a" * 65 + b"\x00" + k[-6:]) is None  # label over 63
w = r.name_wire("www.Example.com.")
assert w == b"\x03www\x07Example\x03com\x00", w
key = hashlib.sha256(r.name_wire("www.example.com.") + struct.pack("!HH", 1, 1) +
                     b"default").hexdigest().upper()
assert len(key) == 64 and key == key.upper()
# a reply: www.example.com A, two answers (TTL 300, 60; the second's owner a
# pointer), an OPT (its TTL field holds flags: not a TTL)
q = r.query_msg(7, "www.example.com.", 1)
m = (struct.pack("!HHHHHH", 7, 0x8180, 1, 2, 0, 1) + r.name_wire("www.example.com.") +
     struct.pack("!HH", 1, 1) +
     r.name_wire("www.example.com.") + struct.pack("!HHIH", 1, 1, 300, 4) + b"\x01\x02\x03\x04" +
     b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + b"\x05\x06\x07\x08" +
     b"\x00" + struct.pack("!HHIH", 41, 1232, 0x8000, 0))
assert r.min_ttl(m) == 60, r.min_ttl(m)
assert q[-11:] == b"\x00" + struct.pack("!HHIH", 41, 1232, 0x8000, 0)  # DO=1
assert r.glob_escape("a*b?[c]\\") == b"a\\*b\\?\\[c\\]\\\\"
EOF

# report.py on a run made here: three hosts 30 queries each; without the
# tier 20 hits each, with it 20 memory + 5 L2; Unbound saw 30, then 15
R=$T/run
mkdir -p "$R/raw"
cat >"$R/raw/meta.env" <<EOF
date=2026-12-01T00:00:00Z
names=100
rate=10
secs=3
newsecs=2
nproc=2
cpu=test
load_start=0 0 0
v_dnsnap=x
v_unbound=x
v_redis=x
has_l2=yes
has_from=no
l2_args=--l2 redis://127.0.0.1:5 --l2-wait 50
redis_port=5
local_upstream=30
redis_used_empty=1000
shared_upstream=15
redis_used_full=3000
redis_keys_full=10
ub_redis_used_empty=1000
ub_redis_used_full=5000
ub_redis_keys_full=10
new-cold_upstream=12
lat_names=5
load_end=0 0 0
elapsed_s=1
EOF
H='{"le_us":[25,50,100,250],"counts":[0,1,8,1,0],"sum_us":900,"count":10}'
for h in 1 2 3; do
	# the counters line is the figure; the exit line after it is not
	printf '%s\n%s\n' \
		'{"event":"counters","queries":30,"hits_memory":20,"hits_map":0,"stale":0,"misses":10,"upstreams":[{"queries":10}]}' \
		'{"event":"exit","queries":999,"hits_memory":0,"upstreams":[]}' >"$R/raw/local-$h.jsonl"
	printf '%s\n' \
		"{\"event\":\"counters\",\"queries\":30,\"hits_memory\":20,\"hits_l2\":5,\"misses\":10,\"upstreams\":[{\"queries\":5}],\"l2\":{\"hits\":5,\"misses\":5,\"timeouts\":1,\"refused\":2,\"writes\":5,\"write_drops\":2},\"answer_latency_l2\":$H}" \
		>"$R/raw/shared-$h.jsonl"
done
printf '%s\n' '{"event":"counters","queries":20,"hits_memory":8,"misses":12,"upstreams":[{"queries":12}]}' \
	>"$R/raw/new-cold.jsonl"
echo 'sent=5 answered=5 lost=0 hits=5 p50_us=80.0 p99_us=300.0 p999_us=300.0 max_us=300.0' \
	>"$R/raw/lat-l2.txt"
printf '%s\n' "{\"event\":\"counters\",\"queries\":5,\"hits_l2\":5,\"answer_latency_l2\":$H}" \
	>"$R/raw/lat-l2.jsonl"
echo '{"keys": 10, "sample": 10, "memory_usage_mean": 150.0, "memory_usage_median": 150}' \
	>"$R/raw/mem-dnsnap.json"
echo '{"keys": 10, "sample": 10, "memory_usage_mean": 300.0, "memory_usage_median": 300}' \
	>"$R/raw/mem-unbound.json"
echo 'stored 10 of 10' >"$R/raw/unbound-store.txt"
expect "report.py on a made run" 0 python3 bench/fleet/report.py "$R"
ok_if "the markdown says what was not run" grep -q 'not measured' "$R/results.md"
ok_if "the tier's options, Redis's address left out" \
	grep -qF '`--l2 redis://... --l2-wait 50`' "$R/results.md"
ok_if "L2 refusals in the fleet's table" grep -q '^| L2 refused | 2 | 2 | 2 | 6 |' "$R/results.md"
json_ok() { # json_ok NAME FILE PYTHON-ASSERTION (the JSON as r)
	if python3 -c "import json, sys
r = json.load(open(sys.argv[1]))
assert $3" "$2" 2>"$tmp/py"; then
		echo "ok - $1"
	else
		echo "not ok - $1"; sed 's/^/#   /' "$tmp/py" | tail -3; fails=$((fails + 1))
	fi
}
json_ok "results.json: hit ratios, the upstream ratio, memory per key, what was not run" \
	"$R/results.json" "r['fleet']['local']['hit_ratio'] == 0.6667 and \
	 r['fleet']['shared']['hit_ratio'] == 0.8333 and \
	 r['fleet']['local']['upstream_hosts'] == 30 and \
	 r['fleet_upstream_ratio_shared_over_local'] == 0.5 and \
	 r['new_host']['new-cold']['hit_ratio'] == 0.4 and \
	 r['new_host']['new-cold']['upstream_unbound'] == 12 and \
	 r['new_host']['new-imported'] is None and r['import']['ms'] is None and \
	 r['latency']['kinds']['l2']['server_count'] == 5 and \
	 r['latency']['kinds']['l2']['server_p50_us_bound'] == 100 and \
	 r['latency']['kinds']['l2']['server_p99_us_bound'] == 250 and \
	 r['latency']['kinds']['map'] is None and \
	 r['redis_memory']['dnsnap']['used_memory_per_key'] == 200.0 and \
	 r['redis_memory']['unbound_cachedb']['used_memory_per_key'] == 400.0 and \
	 r['redis_memory']['ratio_memory_usage_mean'] == 0.5"

[ $fails -eq 0 ]
