#!/bin/sh
# bench/floor.sh BUILD: `dnsnap serve` against the floor (bench/floor.c: each
# query sent back with QR set, recvmmsg/sendmmsg in batches of 32, two
# threads on one SO_REUSEPORT port, no parsing), in one bench/serve_cpu.sh run:
# the same snapshot's names, dnsperf `-c 4 -T 1 -q 200`, the two servers in
# rotating order in each round (SERVE_CPU_ROUNDS, default 5; SERVE_CPU_SECONDS,
# default 10). On loopback the kernel's UDP path is the ceiling of every DNS
# server: the floor is what any server costs at the least.
#
# Prints serve_cpu.sh's table, then one JSON object: serve_over_floor (dnsnap's
# q/s over the floor's, the median over the rounds of the two measured in the
# same round), serve_cpu_over_floor (dnsnap's server CPU per query minus the
# floor's, microseconds, the same median), serve_cpu_ratio, and both servers'
# medians. `make bench-floor` runs it (results in BUILD/floor-run/).
set -eu
build=${1:?usage: bench/floor.sh BUILD}
for f in dnsnap floor resolver_demo; do
	[ -x "$build/$f" ] || { echo "floor.sh: $build/$f missing" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "floor.sh: python3 is missing" >&2; exit 2; }
out=${SERVE_CPU_OUT:-$build/floor-run}
SERVE_CPU_OUT=$out SERVE_CPU_ROUNDS=${SERVE_CPU_ROUNDS:-5} \
	bench/serve_cpu.sh "$build" "floor=$build/floor" "dnsnap=$build/dnsnap" >&2
python3 - "$out/results.json" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
v = {x["label"]: x for x in r["variants"]}
fl, dn = v["floor"], v["dnsnap"]
pairs = list(zip(fl["rounds"], dn["rounds"]))
qps = statistics.median(d["qps"] / f["qps"] for f, d in pairs if f["qps"] > 0)
cpu = statistics.median(d["cpu_us"] - f["cpu_us"] for f, d in pairs)
ratio = statistics.median(d["cpu_us"] / f["cpu_us"] for f, d in pairs if f["cpu_us"] > 0)
print(json.dumps({
    "bench": "floor", "date": r["date"], "client": r["client"], "rounds": r["rounds"],
    "seconds": r["seconds"], "names": r["names"], "threads": r["threads"],
    "serve_over_floor": round(qps, 3), "serve_cpu_over_floor": round(cpu, 3),
    "serve_cpu_ratio": round(ratio, 3),
    "floor": {"qps": fl["qps"], "cpu_us_per_query": fl["cpu_us_per_query"]},
    "dnsnap": {"qps": dn["qps"], "cpu_us_per_query": dn["cpu_us_per_query"]}}))
print("serve / floor: %.3fx the q/s (target >= 0.95), CPU per query %+.2f us "
      "(target <= +0.5)" % (qps, cpu), file=sys.stderr)
EOF
