#!/bin/sh
# bench/deploy/pause.sh: the longest answer pause of dnsnap serve while it
# writes a snapshot of ENTRIES in-memory entries (issue 12, item 6: "answering
# never stalls for more than a few milliseconds because of it").
#
# Usage (from the repository root; make bench-deploy runs it after run.sh):
#   bench/deploy/pause.sh [BUILD] [ENTRIES]
# Environment: PAUSE_RATE (q/s of the hits stream, default 20000), PAUSE_OUT
# (default BUILD/deploy/pause).
#
# 1. NSD serves the wildcard zone fill.test (*.fill.test A, TTL 86400) on
#    127.0.0.1, response rate limiting off (NSD's RRL counts every answer from
#    the wildcard as one, 200 a second by default, and drops the rest or
#    sends TC); dnsnap serve (no snapshot yet: a cold start, 2 threads) has it
#    as its --upstream.
# 2. Fill: dnsperf asks ENTRIES (default 1,000,000) distinct names
#    n<i>.fill.test A once through dnsnap: every one a miss, answered by NSD
#    and cached in memory.
# 3. BUILD/deploy_zipfload sends PAUSE_RATE q/s over the first 100,000 of
#    those names (Zipf s = 1: all hits) for 12 s and gives, per 10 ms of send
#    time, the worst answer latency (max_us). 4 s in, dnsnap gets SIGUSR2:
#    publish SNAP now. The write's window is from the signal to the end that
#    dnsnap's log gives (the write's duration in its log line, or else when
#    the line was seen); the worst latency of the 10 ms buckets that overlap
#    the window is compared with the worst, and the p99 of the per-bucket
#    worst, outside it.
# Output: PAUSE_OUT/pause.json and a few lines on stdout. Clients and server
# share the machine's cores: latencies include waits for a core.
set -eu
build=${1:-build}
entries=${2:-1000000}
rate=${PAUSE_RATE:-20000}
out=${PAUSE_OUT:-$build/deploy/pause}
hot=100000
[ "$hot" -le "$entries" ] || hot=$entries
for c in dnsperf nsd dig ss python3; do
	command -v $c >/dev/null || { echo "pause: needs $c (make bench-deploy installs it)"; exit 2; }
done
for f in dnsnap deploy_zipfload; do
	[ -x "$build/$f" ] || { echo "pause: $build/$f missing (make bench-deploy builds it)"; exit 2; }
done
if ! "$build/dnsnap" serve --help 2>&1 | grep -q -- --upstream; then
	echo "pause: this dnsnap serve has no --upstream: nothing to measure"
	exit 0
fi
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/dnsnap-pause.XXXXXX)
pids=
. "$(dirname "$0")/../lib.sh" # free_port, wait_udp, stop, nsd_start
cleanup() {
	for p in $pids; do stop "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t_start=$(date +%s)
say() { printf '%s pause: %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
# Wait until FILE has a line matching RE (while process PID, if given, lives).
wait_line() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 5000 ] || { say "no '$2' in $1"; cat "$1" >&2; exit 1; }
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || { say "$3 died:"; cat "$1" >&2; exit 1; }
		sleep 0.002
	done
}

AUTH=$(free_port)
mkdir -p "$tmp/nsd"
cat >"$tmp/fill.zone" <<EOF
fill.test. 86400 IN SOA ns.fill.test. hostmaster.fill.test. 1 3600 900 604800 86400
fill.test. 86400 IN NS ns.fill.test.
ns.fill.test. 86400 IN A 127.0.0.1
*.fill.test. 86400 IN A 192.0.2.1
EOF
nsd_start fill.test "$tmp/fill.zone" "$AUTH" "$out/nsd.log" x.fill.test A
awk -v n="$entries" 'BEGIN{for (i = 0; i < n; i++) printf "n%d.fill.test A\n", i}' >"$tmp/fill"
head -n "$hot" "$tmp/fill" >"$tmp/hot"

DN=$(free_port)
snap=$tmp/fill.snap
"$build/dnsnap" serve "$snap" --listen "127.0.0.1:$DN" --upstream "127.0.0.1:$AUTH" --threads 2 \
	2>"$out/dnsnap.log" &
dn_pid=$!
pids="$pids $dn_pid"
wait_line "$out/dnsnap.log" "ready: answering" "$dn_pid"
say "dnsnap on $DN, NSD (*.fill.test) on $AUTH; filling $entries names..."
t0=$(now)
dnsperf -s 127.0.0.1 -p "$DN" -d "$tmp/fill" -n 1 -c 8 -T 1 -q 500 -t 5 >"$out/fill.txt" 2>&1 ||
	true
fill_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b - a}')
fill_ok=$(sed -n 's/^ *Response codes:.*NOERROR \([0-9]*\) .*/\1/p' "$out/fill.txt")
say "fill: ${fill_ok:-0}/$entries NOERROR in $fill_s s"
# What the cache holds, from its counters (SIGUSR1: a line on stderr)
kill -USR1 "$dn_pid"
sleep 0.5
cache_line=$(grep -i 'entries\|hits' "$out/dnsnap.log" | tail -1)

lines0=$(wc -l <"$out/dnsnap.log")
origin=$(awk -v t="$(now)" 'BEGIN{printf "%.3f", t + 4}')
"$build/deploy_zipfload" 127.0.0.1 "$DN" "$tmp/hot" -r "$rate" -l 12 -i 10 -o "$origin" \
	>"$out/pause.jsonl" 2>"$out/zipfload.log" &
zl=$!
pids="$pids $zl"
sleep "$(awk -v o="$origin" -v t="$(now)" 'BEGIN{d = o - t; printf "%.3f", (d > 0 ? d : 0)}')"
t_sig=$(now)
kill -USR2 "$dn_pid"
# the snapshot's log line: the first new line that speaks of the snapshot
i=0
while :; do
	line=$(tail -n +"$((lines0 + 1))" "$out/dnsnap.log" | grep 'published' | head -1)
	[ -n "$line" ] && break
	i=$((i + 1))
	[ $i -lt 15000 ] || { say "no snapshot line in the log"; break; }
	sleep 0.002
done
t_seen=$(now)
wait $zl
snap_bytes=$(stat -c %s "$snap" 2>/dev/null || echo 0)
say "$(sed 's/^zipfload: //' "$out/zipfload.log")"
say "log: $line"
cat >"$out/pause.env" <<EOF
entries=$entries
rate=$rate
hot=$hot
fill_s=$fill_s
fill_noerror=${fill_ok:-0}
origin=$origin
t_signal=$t_sig
t_seen=$t_seen
snap_bytes=$snap_bytes
log_line=$line
cache_line=$cache_line
zipfload=$(cat "$out/zipfload.log")
elapsed_s=$(($(date +%s) - t_start))
EOF
python3 - "$out" <<'EOF'
import json, os, re, sys
out = sys.argv[1]
env = {}
for line in open(os.path.join(out, "pause.env")):
    k, _, v = line.rstrip("\n").partition("=")
    env[k] = v
origin = float(env["origin"])
b = [json.loads(l) for l in open(os.path.join(out, "pause.jsonl"))]
sig = float(env["t_signal"]) - origin
seen = float(env["t_seen"]) - origin
# the write's duration and the server's own longest insert pause, from the
# log line "SNAP: published (SIGUSR2): N entries (...), 1.234 s, longest
# insert pause 0.567 ms"
m = re.search(r", ([0-9.]+) s, ", env["log_line"])
dur = float(m.group(1)) if m else None
m = re.search(r"longest insert pause ([0-9.]+) ms", env["log_line"])
server_pause_ms = float(m.group(1)) if m else None
end = sig + dur if dur is not None else seen
inside = [x for x in b if x["t"] + 0.01 > sig and x["t"] < end]
outside = [x for x in b if not (x["t"] + 0.01 > sig and x["t"] < end) and x["t"] >= -3]
def worst(xs):
    v = [x["max_us"] for x in xs if x["max_us"] is not None]
    return max(v) if v else None
def p99(xs):
    v = sorted(x["max_us"] for x in xs if x["max_us"] is not None)
    return v[max(0, -(-99 * len(v) // 100) - 1)] if v else None
def over(xs, us):
    return sum(1 for x in xs if x["max_us"] is not None and x["max_us"] > us)
def median(xs):
    v = sorted(x["max_us"] for x in xs if x["max_us"] is not None)
    return v[len(v) // 2] if v else None
lost_in = sum(x["lost"] for x in inside)
res = {
    "entries": int(env["entries"]), "rate_qps": int(env["rate"]), "hot_names": int(env["hot"]),
    "fill_s": float(env["fill_s"]), "fill_noerror": int(env["fill_noerror"]),
    "snapshot_bytes": int(env["snap_bytes"]),
    "write_s_from_log": dur, "write_window_s": round(end - sig, 3),
    "server_longest_insert_pause_ms": server_pause_ms,
    "log_line": env["log_line"], "cache_line": env["cache_line"],
    "worst_latency_us_during_write": worst(inside),
    "worst_latency_us_outside": worst(outside),
    "p99_of_10ms_worst_us_outside": p99(outside),
    "median_of_10ms_worst_us_during_write": median(inside),
    "median_of_10ms_worst_us_outside": median(outside),
    "buckets_over_5_10_20ms_during_write": [over(inside, 5000), over(inside, 10000),
                                            over(inside, 20000)],
    "buckets_over_5_10_20ms_outside": [over(outside, 5000), over(outside, 10000),
                                       over(outside, 20000)],
    "buckets_outside": len(outside),
    "lost_during_write": lost_in, "lost_whole_stream": sum(x["lost"] for x in b),
    "buckets_during_write": len(inside),
    "zipfload": env["zipfload"], "elapsed_s": int(env["elapsed_s"]),
}
json.dump(res, open(os.path.join(out, "pause.json"), "w"), indent=1)
print(f"Snapshot while serving: {res['entries']} entries in memory (filled in {res['fill_s']} s, "
      f"{res['fill_noerror']} NOERROR), {res['snapshot_bytes']} bytes written;")
print(f"the write took {dur if dur is not None else '?'} s by dnsnap's log, its longest insert "
      f"pause {server_pause_ms} ms ({env['log_line']!r}).")
print(f"Hits at {res['rate_qps']} q/s, worst answer latency per 10 ms: "
      f"{res['worst_latency_us_during_write']} us during the write ({len(inside)} buckets), "
      f"{res['worst_latency_us_outside']} us outside it (p99 of the 10 ms worst: "
      f"{res['p99_of_10ms_worst_us_outside']} us); lost: {lost_in} during the write, "
      f"{res['lost_whole_stream']} in all.")
print(f"10 ms buckets whose worst is over 5, 10, 20 ms: "
      f"{res['buckets_over_5_10_20ms_during_write']} of {len(inside)} during the write, "
      f"{res['buckets_over_5_10_20ms_outside']} of {len(outside)} outside; the median "
      f"bucket's worst {res['median_of_10ms_worst_us_during_write']} us during, "
      f"{res['median_of_10ms_worst_us_outside']} us outside.")
EOF
