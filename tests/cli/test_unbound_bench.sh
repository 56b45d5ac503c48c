#!/bin/sh
# The Unbound module benchmark's report (bench/unbound/report.py) on a run
# made here: steady rounds of known CPU ticks and rates, three restarts with
# known per-second buckets and a pcap of known packet times, the probes'
# first answers; the medians, costs, hit ratios and totals it must give.
# Usage (from the repository root): tests/cli/test_unbound_bench.sh BUILD
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
R=$tmp/run
mkdir -p "$R/runs" "$R/logs"
cat >"$R/meta.env" <<EOF
date=2026-12-01T00:00:00Z
names=100
secs=10
rounds=3
rate=100
after=5
nproc=2
cpu=test
load_start=0 0 0
v_dnsnap=x
v_unbound=1.17.1
v_nsd=4.6.1
v_python=3.11.2
EOF
# CPU per miss = ticks / hz / misses: plain 1000, 2000, 3000 us; module 4000,
# 5000, 6000 us; a cached query 10 us; means of latency 2, 3, 4 ms and 5 ms
{
	for r in 1 2 3; do
		echo "variant=plain round=$r miss_qps=$((r * 1000)) miss_lat_s=0.00$((r + 1)) miss_n=100" \
			"miss_cpu_ticks=$((r * 10)) hit_qps=$((4000 + r * 1000)) hit_n=1000 hit_cpu_ticks=1 hz=100"
		echo "variant=module round=$r miss_qps=$((r * 500)) miss_lat_s=0.005 miss_n=100" \
			"miss_cpu_ticks=$((30 + r * 10)) hit_qps=$((4800 + r * 600)) hit_n=1000 hit_cpu_ticks=1" \
			"hz=100"
	done
} >"$R/runs/steady.txt"
printf 'dump_s=4.5\ndump_bytes=4000\ndump_msgs=101\n' >"$R/runs/dump.env"
printf 'load_s=30.25\n' >"$R/runs/load.env"
echo "first_hit_us=none pid=1 asked=9" >"$R/runs/first-cold.txt"
echo "first_hit_us=25600000 pid=2 asked=90 servfail=3" >"$R/runs/first-load_cache.txt"
echo "first_hit_us=144000 pid=3 asked=4" >"$R/runs/first-module.txt"
# 100 sent a second, t = 0..4 from origin 1000; module: 10 of t = 0 lost;
# upstream: cold 50 at t = 0 and 10 at t = 1, load_cache 20 at t = 0, module none
python3 - "$R/runs" <<'EOF'
import json, os, struct, sys
runs = sys.argv[1]
up = {"cold": [1000 + i / 100 for i in range(50)] + [1001.5] * 10,
      "load_cache": [1000.25] * 20, "module": []}
for v in up:
    with open(os.path.join(runs, v + ".env"), "w") as f:
        f.write("origin=1000.0\n")
    with open(os.path.join(runs, v + ".jsonl"), "w") as f:
        for t in range(5):
            lost = 10 if v == "module" and t == 0 else 0
            f.write(json.dumps({"t": t, "sent": 100, "answered": 100 - lost, "lost": lost,
                                "errors": 0, "p50_us": 100, "p99_us": 400, "max_us": 900}) + "\n")
    with open(os.path.join(runs, v + ".pcap"), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts in up[v]:
            sec, usec = int(ts), round((ts - int(ts)) * 1e6)
            f.write(struct.pack("<IIII", sec, usec, 4, 4) + b"abcd")
EOF
expect "report.py on a made run" 0 python3 bench/unbound/report.py "$R"
python3 - "$R/results.json" >"$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p, m = d["steady"]["plain"], d["steady"]["module"]
print(p["miss_cpu_us"], m["miss_cpu_us"], p["miss_latency_ms"], m["miss_latency_ms"])
print(p["hit_qps"], m["hit_qps"], p["hit_cpu_us"], m["miss_qps"])
for v in ("cold", "load_cache", "module"):
    r = d["restarts"][v]
    print(v, r["first_answer_us"], [s["hit_ratio"] for s in r["seconds"]], r["upstream_total"],
          r["lost_total"], r["sent_total"])
EOF
cat >"$tmp/want" <<'EOF'
2000.0 5000.0 3.0 5.0
6000.0 6000.0 10.0 1000.0
cold None [0.5, 0.9, 1.0, 1.0, 1.0] 60 0 500
load_cache 25600000.0 [0.8, 1.0, 1.0, 1.0, 1.0] 20 0 500
module 144000.0 [0.9, 1.0, 1.0, 1.0, 1.0] 0 10 500
EOF
same_as "report.py: medians, CPU per miss and query, hit ratios, totals" "$tmp/want"
ok_if "report.py: the module's cost per miss, 3000 us of CPU and 2 ms" \
	grep -q "^The module's cost per miss: 3000 us of Unbound's CPU (5000 against 2000), 2.00 ms" \
	"$R/results.md"
ok_if "report.py: the module's restart row" grep -qF \
	"| Unbound with dnsnap.py, restarted on its snapshot | 144 ms | 90.0% | 100.0% | 100.0% | 100.0% | 100.0% | 0 | 10 of 500 |" \
	"$R/results.md"
ok_if "report.py: no first answer for cold" grep -qF "| plain Unbound, restarted (cold) | none | 50.0% |" \
	"$R/results.md"

[ "$fails" -eq 0 ]
