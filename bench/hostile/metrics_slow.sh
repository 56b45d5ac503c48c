#!/bin/sh
# metrics_slow.sh: slow HTTP clients (a request sent one byte a second, the
# connection opened again when closed) against serve's metrics endpoint,
# and whether a scrape still gets through. dnsnap serve runs cold, with an
# upstream that is never asked (options every version has). For each N of
# SLOW: N slow clients from 127.0.0.2, 3 s for them to settle, then
# `curl --max-time 10` of /metrics from 127.0.0.1; prints
#   slow N: scrape HTTP-CODE in SECONDS s (slow clients holding K)
#
# Usage (from the repository root): bench/hostile/metrics_slow.sh [BUILD [SLOW...]]
build=${1:-build}
[ $# -gt 0 ] && shift
. tests/e2e/lib.sh
need python3 curl "$build/dnsnap"
mport=$(free_port)
start_fwd m "$tmp/m.snap" --listen 127.0.0.1:0 --upstream 127.0.0.1:9 \
	--metrics "127.0.0.1:$mport"
for n in ${*:-16 64}; do
	python3 tests/helpers/tcphog.py slowhttp --server "127.0.0.1:$mport" --source 127.0.0.2 \
		--conns "$n" --status "$tmp/slow.$n" &
	slow=$!
	e2e_procs="$e2e_procs $slow"
	sleep 3
	r=$(curl -s -o /dev/null --interface 127.0.0.1 --max-time 10 \
		-w '%{http_code} in %{time_total}' "http://127.0.0.1:$mport/metrics")
	echo "slow $n: scrape $r s (slow clients $(cat "$tmp/slow.$n"))"
	stop "$slow"
	sleep 1
done
