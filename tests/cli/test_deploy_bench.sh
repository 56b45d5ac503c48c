#!/bin/sh
# The deploy benchmark's own parts (bench/deploy/): zipfload, the load
# generator, against dnsnap serve (cache-only) on the stream vector's
# snapshot and against a port nobody answers on; report.py, the tables, on a
# run directory made here (a pcap of known packet times, known buckets).
# Usage (from the repository root): tests/cli/test_deploy_bench.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
zl=$build/deploy_zipfload
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

for need in "$bin" "$zl"; do
	[ -x "$need" ] || { echo "not ok - $need is not built (make test builds it)"; exit 1; }
done

expect "import the vector stream" 0 "$bin" import spec/vectors/valid/302-stream-four-entries.dnsx \
	-o "$T/s.snap" --now $NOW
"$bin" serve "$T/s.snap" --listen 127.0.0.1:0 --threads 2 --now $NOW 2>"$T/log" &
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

# usage
expect "zipfload without -r" 2 "$zl" 127.0.0.1 "$port" "$T/hit" -l 1
expect "zipfload: not an IPv4 address" 2 "$zl" localhost "$port" "$T/hit" -r 10 -l 1 &&
	err_has "bad address" "localhost: not an IPv4 address"
expect "zipfload: a queries file without a query" 2 "$zl" 127.0.0.1 "$port" /dev/null -r 10 -l 1 &&
	err_has "no queries" "/dev/null: no queries"

# 500 q/s for 2 s at a name the snapshot holds: 1,000 sent, every one
# answered (NOERROR), per-second lines with latencies
expect "zipfload at dnsnap serve" 0 "$zl" 127.0.0.1 "$port" "$T/hit" -r 500 -l 2 -t 1000
lines_ok "1,000 sent, 1,000 answered, none lost, no error" \
	"sum(x['sent'] for x in l) == 1000 and sum(x['answered'] for x in l) == 1000 \
	 and sum(x['lost'] for x in l) == 0 and sum(x['errors'] for x in l) == 0"
lines_ok "a line per second of send time, t from 0, with the line's fields" \
	"[x['t'] for x in l] == list(range(len(l))) and 2 <= len(l) <= 3 and \
	 all(sorted(x) == sorted(['t', 'sent', 'answered', 'lost', 'errors', 'p50_us', 'p99_us', \
	 'max_us']) for x in l)"
lines_ok "latencies: 0 < p50 <= p99 <= max where answered" \
	"all(0 < x['p50_us'] <= x['p99_us'] <= x['max_us'] for x in l if x['answered'])"
err_has "the summary line" "zipfload: 1000 sent in "

# Zipf s = 1 over two names, the second one refused (cache-only serve): the
# shares are 2/3 and 1/3; uniform (s = 0) they are half and half. The draws
# are a fixed sequence for a seed, so these cannot flake.
expect "zipfload, two names, s = 1" 0 "$zl" 127.0.0.1 "$port" "$T/two" -r 500 -l 2 -t 1000
lines_ok "s = 1: errors (REFUSED) are a third or two thirds of the answers" \
	"sum(x['answered'] for x in l) == 1000 and \
	 min(abs(sum(x['errors'] for x in l) / 1000 - f) for f in (1 / 3, 2 / 3)) < 0.05"
expect "zipfload, two names, s = 0" 0 "$zl" 127.0.0.1 "$port" "$T/two" -r 500 -l 2 -t 1000 -z 0
lines_ok "s = 0: errors are half the answers" \
	"sum(x['answered'] for x in l) == 1000 and abs(sum(x['errors'] for x in l) / 1000 - 0.5) < 0.05"

# -o ORIGIN: buckets counted from a time 1.5 s ahead: the first ones negative
origin=$(awk -v t="$(date +%s.%N)" 'BEGIN{printf "%.3f", t + 1.5}')
expect "zipfload -o, 100 ms buckets" 0 "$zl" 127.0.0.1 "$port" "$T/hit" -r 500 -l 2 -t 1000 \
	-o "$origin" -i 100
lines_ok "-o: t counted from ORIGIN, negative before it; -i 100: 100 ms apart" \
	"l[0]['t'] < -1 and l[-1]['t'] > 0 and \
	 all(abs(b['t'] - a['t'] - 0.1) < 1e-6 for a, b in zip(l, l[1:])) and \
	 sum(x['sent'] for x in l) == 1000"

kill -TERM "$pid"
wait "$pid"
pid=
# nobody answers on that port any more: everything lost, no latencies
expect "zipfload at a closed port" 0 "$zl" 127.0.0.1 "$port" "$T/hit" -r 500 -l 1 -t 300
lines_ok "a closed port: 500 sent, 0 answered, 500 lost, latencies null" \
	"sum(x['sent'] for x in l) == 500 and sum(x['lost'] for x in l) == 500 and \
	 all(x['answered'] == 0 and x['p50_us'] is None and x['p99_us'] is None for x in l)"

# report.py on a run made here. origin 1000.0; dnsnap's stream: 100 queries
# a second, t = -3..9; upstream packets: one at 997.5 (t = -3), two at
# 1000.2 and 1000.3 (t = 0), one at 1009.99 (t = 9); 10 lost at t = 0, p99
# 400 us before, 900 us at t = 0. Steady state: dnsnap 3 rounds, unbound 3.
R=$T/run
mkdir -p "$R/runs" "$R/logs"
cat >"$R/meta.env" <<EOF
date=2026-12-01T00:00:00Z
names=100
rate=100
secs=10
rounds=3
pre=5
post=11
systems=dnsnap unbound
nproc=2
cpu=test
load_start=0 0 0
v_dnsnap=x
v_unbound=x
v_kresd=x
v_dnsdist=x
v_nsd=x
v_dnsperf=x
load_end=0 0 0
elapsed_s=1
EOF
cat >"$R/runs/dnsnap.env" <<EOF
origin=1000.0
restart_begin=1000.0
restart_end=1000.25
down_ms=120.5
udp_noports=7
udp_rcvbuf_errors=0
tcpdump=x
zipfload=x
EOF
python3 - "$R/runs/dnsnap.jsonl" "$R/runs/dnsnap.pcap" <<'EOF'
import json, struct, sys
with open(sys.argv[1], "w") as f:
    for t in range(-5, 11):
        lost = 10 if t == 0 else 0
        f.write(json.dumps({"t": t, "sent": 100, "answered": 100 - lost, "lost": lost, "errors": 0,
                            "p50_us": 100, "p99_us": 900 if t == 0 else 400, "max_us": 1000}) + "\n")
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for ts in (997.5, 1000.2, 1000.3, 1009.99):
        sec, usec = int(ts), round((ts - int(ts)) * 1e6)
        f.write(struct.pack("<IIII", sec, usec, 4, 4) + b"abcd")
EOF
cat >"$R/runs/steady.txt" <<EOF
dnsnap 1 150000 1500000 0 1500000 150 100
unbound 1 50000 500000 0 500000 100 100
dnsnap 2 160000 1600000 0 1600000 160 100
unbound 2 60000 600000 0 600000 120 100
dnsnap 3 170000 1700000 0 1700000 170 100
unbound 3 70000 700000 1 700000 140 100
EOF
expect "report.py on a made run" 0 python3 bench/deploy/report.py "$R"
python3 - "$R/results.json" >"$T/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["restarts"]["dnsnap"]
print([(s["t"], s["upstream"], s["hit_ratio"]) for s in r["seconds"] if s["upstream"]])
print(r["seconds"][0]["t"], r["seconds"][-1]["t"], len(r["seconds"]))
print(r["hit_ratio_before"], r["hit_ratio_first_second"], r["seconds"][3]["hit_ratio_answered"])
print(r["p99_us_steady"], r["p99_us_first_second"], r["lost_first_second"], r["lost_whole_stream"])
print(r["down_ms"], r["udp_noports"])
s = d["steady"]["servers"]
print(s["dnsnap"]["qps"], s["dnsnap"]["cpu_us_per_query"], s["unbound"]["qps"],
      s["unbound"]["cpu_us_per_query"], s["unbound"]["lost"])
print(sorted((k, v["met"]) for k, v in d["targets"].items()))
print(d["targets"]["hit_throughput_at_least_1.5x_best_peer"]["ratio"])
EOF
cat >"$T/want" <<'EOF'
[(-3, 1, 0.99), (0, 2, 0.98), (9, 1, 0.99)]
-3 9 13
0.9967 0.98 0.9778
400 900 10 10
120.5 7
160000 1.0 60000 2.0 1
[('cpu_per_query_below_every_peer', True), ('hit_ratio_first_second_within_1_point', False), ('hit_throughput_at_least_1.5x_best_peer', True), ('p99_first_second_at_most_2x_steady (dnsnap)', False)]
2.67
EOF
same_as "report.py: upstream per second from the pcap, hit ratios, targets" "$T/want"
grep -q '^| 0 | 100 | 90 | 10 | 2 | 98.0% | 97.8% | 100 | 900 |$' "$R/results.md"
ok_if "report.py: the markdown row of t = 0" [ $? -eq 0 ]

[ "$fails" -eq 0 ]
