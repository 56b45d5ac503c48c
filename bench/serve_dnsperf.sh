#!/bin/sh
# serve_dnsperf.sh: the throughput of dnsnap serve, measured with dnsperf
# (Debian package dnsperf; not in make deps). A 100,000-entry snapshot from
# the resolver demo (the Big Pineapple mix), every name of it asked once in a
# shuffled order and again for SECONDS, UDP without EDNS, 4 clients, 200
# queries in flight; then the same over TCP. dnsperf runs on the same host
# and takes its share of the CPUs: on the project's 2-core VM the numbers are
# a floor, not the server's ceiling.
# Usage (from the repository root): bench/serve_dnsperf.sh [BUILD] [SECONDS] [THREADS]
set -eu
build=${1:-build}
secs=${2:-10}
threads=${3:-2}
command -v dnsperf >/dev/null || { echo "serve_dnsperf: needs dnsperf (apt-get install dnsperf)"; exit 2; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$build"/resolver_demo fill "$tmp/s.snap" 100000 >/dev/null
"$build"/dnsnap dump "$tmp/s.snap" --json |
	sed -n 's/^{"name":"\([^"]*\)","class":"IN","type":"\([A-Z0-9]*\)".*/\1 \2/p' | shuf >"$tmp/names"
"$build"/dnsnap serve "$tmp/s.snap" --listen 127.0.0.1:0 --threads "$threads" 2>"$tmp/log" &
pid=$!
i=0
until grep -q 'listening on' "$tmp/log"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$tmp/log"; exit 1; }
	sleep 0.05
done
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/log")
for mode in udp tcp; do
	echo "== $mode: dnsperf -m $mode -s 127.0.0.1 -p PORT -d NAMES -l $secs -c 4 -T 1 -q 200"
	dnsperf -m $mode -s 127.0.0.1 -p "$port" -d "$tmp/names" -l "$secs" -c 4 -T 1 -q 200 2>&1 |
		grep -E 'Queries (sent|completed|lost|per second)|Average Latency|Latency StdDev'
done
kill -USR1 "$pid"
sleep 0.2
grep 'counters:' "$tmp/log" | tail -1
