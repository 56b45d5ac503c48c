#!/bin/sh
# bench/unbound/run.sh: stock Unbound with and without contrib/unbound/dnsnap.py,
# in one run on one machine: what the module costs where Unbound works, and
# what it gives back at a restart.
#
# Usage (from the repository root; `make bench-unbound` builds and runs it):
#   bench/unbound/run.sh [BUILD] [NAMES]
# Environment: UNBOUND_SECONDS (each dnsperf throughput run, default 10),
# UNBOUND_ROUNDS (default 3), UNBOUND_RATE (the stream after a restart, q/s,
# default 5000), UNBOUND_AFTER (its length in seconds, default 60),
# UNBOUND_OUT (results and logs, default BUILD/unbound).
#
# NSD serves NAMES names of the Big Pineapple mix in the root zone
# (bench/peers/mkzone.c; TTLs >= 3600 s, no delegations or CNAMEs: a miss is
# one upstream query). Unbound: 2 threads, stub-zone "." to NSD, no trust
# anchor, module-config "validator iterator" (plain) or "validator python
# iterator" with the module (BUILD's libdnsnap.so.1 through LD_LIBRARY_PATH,
# python3-unbound through PYTHONPATH, as contrib/unbound/README.md sets them).
#
# 1. ROUNDS rounds, plain and module in turn, each a fresh Unbound (the
#    module's snapshot path empty): every name once with dnsperf (-c 4 -T 1
#    -q 100: all misses), Unbound's CPU time over it (utime + stime of its
#    process, /proc/PID/stat) per miss; then, the cache warm, dnsperf -c 4
#    -T 1 -q 200 for SECONDS over every name (all hits of Unbound's own cache:
#    the module is not on that path), q/s and CPU per query. Medians. The
#    module's last round leaves its snapshot of NAMES names (published when
#    that Unbound stops).
# 2. Restarts with NAMES names cached, each variant in turn:
#      cold       plain Unbound started again, nothing kept;
#      load_cache plain Unbound started again and fed the warm one's
#                 `unbound-control dump_cache` with `load_cache` (its own
#                 dump, taken just before the stop);
#      module     Unbound with the module started again on its snapshot.
#    a. NSD stopped: BUILD/peers_dnsprobe first starts the variant and asks
#       a new name every 1 ms until an answer (NOERROR, the type asked) comes:
#       only a cache can give it. Time from before the start to that answer
#       (none within 10 s for cold).
#    b. NSD up: the variant started again (load_cache: the load started with
#       it) while BUILD/deploy_zipfload sends RATE q/s over the names, Zipf s
#       = 1, for AFTER seconds from the start; tcpdump counts the queries
#       Unbound sends NSD, per second of the stream. Hit ratio in second t =
#       (queries answered - upstream queries) / queries sent in t (a query
#       lost, or sent before Unbound listens, is no hit); upstream queries in
#       the first minute; queries lost.
# Output: UNBOUND_OUT/results.md (the tables) and results.json, from
# bench/unbound/report.py; logs in UNBOUND_OUT/logs.
#
# dnsperf, zipfload and tcpdump share the machine's cores with Unbound and
# NSD: on 2 cores every rate is a floor.
set -eu
build=${1:-build}
names=${2:-100000}
secs=${UNBOUND_SECONDS:-10}
rounds=${UNBOUND_ROUNDS:-3}
rate=${UNBOUND_RATE:-5000}
after=${UNBOUND_AFTER:-60}
out=${UNBOUND_OUT:-$build/unbound}
for c in dnsperf nsd unbound unbound-control tcpdump dig ss python3; do
	command -v $c >/dev/null || { echo "unbound bench: needs $c (make bench-unbound installs it)"; exit 2; }
done
for f in libdnsnap.so.1 peers_mkzone peers_dnsprobe deploy_zipfload; do
	[ -e "$build/$f" ] || { echo "unbound bench: $build/$f missing (make bench-unbound builds it)"; exit 2; }
done
[ -f /usr/lib/python3/dist-packages/unboundmodule.py ] ||
	{ echo "unbound bench: needs python3-unbound (make bench-unbound installs it)"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
module=$(cd "$here/../../contrib/unbound" && pwd)/dnsnap.py
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/logs" "$out/runs"
mkdir -p "$out/logs" "$out/runs"
log=$out/logs
runs=$out/runs
tmp=$(mktemp -d /tmp/dnsnap-ubbench.XXXXXX)
pids=
. "$here/../lib.sh" # free_port, wait_udp, stop, nsd_start
cleanup() {
	for p in $pids; do stop "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '%s unbound bench: %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
hz=$(getconf CLK_TCK)
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

cat >"$out/meta.env" <<EOF
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
names=$names
secs=$secs
rounds=$rounds
rate=$rate
after=$after
nproc=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
v_dnsnap=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
v_unbound=$(unbound -V | sed -n 's/^Version //p')
v_nsd=$(nsd -v 2>&1 | sed -n 's/^NSD version //p')
v_python=$(/usr/bin/python3 --version 2>&1 | sed 's/^Python //')
EOF

# ---------------------------------------------------------------- servers
AUTH=$(free_port)
"$build/peers_mkzone" "$names" "$tmp/root.zone" "$tmp/queries"
nsd_up() { nsd_start "." "$tmp/root.zone" "$AUTH" "$log/nsd.log" . SOA; }
nsd_down() { stop "$nsd_pid"; }
nsd_up
say "NSD serves $names names on port $AUTH; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

UB=$(free_port)
snap=$tmp/module.snap
# conf VARIANT: Unbound's config for plain or module
conf() {
	mkdir -p "$tmp/$1"
	mods="validator iterator"
	py=""
	if [ "$1" = module ]; then
		mods="validator python iterator"
		py="python:
	python-script: \"$module\""
	fi
	cat >"$tmp/$1/unbound.conf" <<EOF
server:
	interface: 127.0.0.1@$UB
	outgoing-interface: 127.0.0.1
	do-ip6: no
	num-threads: 2
	so-reuseport: yes
	username: ""
	chroot: ""
	directory: "$tmp/$1"
	pidfile: "$tmp/$1/unbound.pid"
	logfile: "$log/unbound-$1.log"
	use-syslog: no
	verbosity: 1
	do-daemonize: no
	module-config: "$mods"
	auto-trust-anchor-file: ""
	do-not-query-localhost: no
	qname-minimisation: no
	msg-cache-size: 256m
	rrset-cache-size: 512m
	num-queries-per-thread: 4096
	outgoing-range: 8192
remote-control:
	control-enable: yes
	control-interface: $tmp/$1/control.sock
	control-use-cert: no
stub-zone:
	name: "."
	stub-addr: 127.0.0.1@$AUTH
$py
EOF
	# the start, as a script (peers_dnsprobe first runs it): the module's
	# environment, then load_cache of DUMP when one is named
	cat >"$tmp/$1/start.sh" <<EOF
#!/bin/sh
date +%s.%N >"$tmp/$1/t-start"
env PYTHONPATH=/usr/lib/python3/dist-packages LD_LIBRARY_PATH=$build \
	DNSNAP_UNBOUND_SNAP=$snap unbound -d -c "$tmp/$1/unbound.conf" &
echo \$! >"$tmp/$1/pid"
if [ -n "\${DUMP:-}" ]; then
	until unbound-control -c "$tmp/$1/unbound.conf" status >/dev/null 2>&1; do sleep 0.002; done
	unbound-control -c "$tmp/$1/unbound.conf" load_cache <"\$DUMP" >"$log/load_cache.txt" 2>&1
	date +%s.%N >"$tmp/$1/t-loaded"
fi
wait
EOF
	chmod +x "$tmp/$1/start.sh"
}
conf plain
conf module
# ub_start VARIANT: Unbound started (DUMP: and its load_cache begun), up
# when both threads' sockets listen; sets ub_pid
ub_start() {
	rm -f "$tmp/$1/pid" "$tmp/$1/t-loaded"
	"$tmp/$1/start.sh" >>"$log/start-$1.txt" 2>&1 &
	pids="$pids $!"
	until [ -s "$tmp/$1/pid" ]; do sleep 0.002; done
	ub_pid=$(cat "$tmp/$1/pid")
	pids="$pids $ub_pid"
	wait_udp "$UB" 2
}
ub_stop() { stop "$ub_pid"; }
# perf NAME ARGS...: dnsperf at Unbound, its output in $log/NAME.txt; prints
# "q/s avg_latency_s completed"
perf() {
	n=$1
	shift
	dnsperf -s 127.0.0.1 -p "$UB" -d "$tmp/queries" "$@" >"$log/$n.txt" 2>&1 || true
	q=$(sed -n 's/^ *Queries per second: *\([0-9.]*\).*/\1/p' "$log/$n.txt")
	l=$(sed -n 's/^ *Average Latency (s): *\([0-9.]*\).*/\1/p' "$log/$n.txt")
	c=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$log/$n.txt")
	echo "${q:-0} ${l:-0} ${c:-0}"
}

# ------------------------------------------------ 1. misses and cached hits
: >"$runs/steady.txt"
r=1
while [ $r -le "$rounds" ]; do
	order="plain module"
	[ $((r % 2)) -eq 1 ] || order="module plain"
	for v in $order; do
		[ "$v" = plain ] || rm -f "$snap"
		ub_start "$v"
		c0=$(cpu_ticks "$ub_pid")
		set -- $(perf "miss-$v-$r" -n 1 -c 4 -T 1 -q 100)
		c1=$(cpu_ticks "$ub_pid")
		miss_qps=$1 miss_lat=$2 miss_n=$3
		set -- $(perf "hit-$v-$r" -l "$secs" -c 4 -T 1 -q 200)
		c2=$(cpu_ticks "$ub_pid")
		echo "variant=$v round=$r miss_qps=$miss_qps miss_lat_s=$miss_lat miss_n=$miss_n" \
			"miss_cpu_ticks=$((c1 - c0)) hit_qps=$1 hit_n=$3 hit_cpu_ticks=$((c2 - c1)) hz=$hz" \
			>>"$runs/steady.txt"
		say "round $r $v: misses $miss_qps q/s ($miss_n), $(((c1 - c0) * 1000000 / hz / (miss_n + 1))) us" \
			"of CPU each; cached $1 q/s"
		ub_stop
	done
	r=$((r + 1))
done
grep -h "dnsnap: .*published (stop)" "$log/unbound-module.log" | tail -n 1 >&2 || true

# ---------------------------------------------------------- 2. restarts
# The plain Unbound warm, its dump taken, then stopped
ub_start plain
perf warm-plain -n 1 -c 4 -T 1 -q 100 >/dev/null
t0=$(now)
unbound-control -c "$tmp/plain/unbound.conf" dump_cache >"$tmp/dump.txt"
t1=$(now)
{
	echo "dump_s=$(awk "BEGIN { print $t1 - $t0 }")"
	echo "dump_bytes=$(stat -c %s "$tmp/dump.txt")"
	echo "dump_msgs=$(grep -c '^msg ' "$tmp/dump.txt" || true)"
} >"$runs/dump.env"
ub_stop
say "dump_cache: $(tr '\n' ' ' <"$runs/dump.env")"
"$build/dnsnap" info --json "$snap" >"$runs/snapshot.json" 2>&1 || true

# first VARIANT: NSD down, the first answer from a cache
first() {
	v=$1 dump=${2:-}
	DUMP=$dump "$build/peers_dnsprobe" first 127.0.0.1 "$UB" "$tmp/queries" -i 1000 -l "${3:-10}" \
		-- "$tmp/$v/start.sh" >"$runs/first-$4.txt" 2>>"$log/probe-$4.txt" || true
	[ -s "$tmp/$v/pid" ] && ub_pid=$(cat "$tmp/$v/pid") && pids="$pids $ub_pid"
	if [ -n "$dump" ]; then # the load goes on: wait for it, for its time
		i=0
		while [ ! -s "$tmp/$v/t-loaded" ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
		echo "load_s=$(awk "BEGIN { print $(cat "$tmp/$v/t-loaded") - $(cat "$tmp/$v/t-start") }")" \
			>"$runs/load.env"
	fi
	ub_stop
}
# stream NAME VARIANT [DUMP]: NSD up, the variant started under the stream
stream() {
	n=$1 v=$2
	tcpdump -i lo -B 65536 -w "$runs/$n.pcap" "udp dst port $AUTH and udp[10] & 0x80 = 0" \
		2>"$log/tcpdump-$n.log" &
	td=$!
	pids="$pids $td"
	i=0
	until grep -q 'listening on' "$log/tcpdump-$n.log"; do
		i=$((i + 1)); [ $i -lt 2000 ] || { say "tcpdump does not start"; exit 1; }; sleep 0.005
	done
	origin=$(now)
	DUMP=${3:-} "$tmp/$v/start.sh" >>"$log/start-$v.txt" 2>&1 &
	pids="$pids $!"
	"$build/deploy_zipfload" 127.0.0.1 "$UB" "$tmp/queries" -r "$rate" -l "$after" \
		-o "$origin" >"$runs/$n.jsonl" 2>"$log/zipfload-$n.log" &
	zl=$!
	pids="$pids $zl"
	until [ -s "$tmp/$v/pid" ]; do sleep 0.002; done
	ub_pid=$(cat "$tmp/$v/pid")
	pids="$pids $ub_pid"
	wait $zl || true
	sleep 2 # tcpdump hands over its buffer in blocks
	kill -INT $td
	wait $td || true
	echo "origin=$origin" >"$runs/$n.env"
	say "$n: $(sed 's/^zipfload: //' "$log/zipfload-$n.log")"
	ub_stop
}

nsd_down
first plain "" 10 cold
say "cold: $(cat "$runs/first-cold.txt")"
first plain "$tmp/dump.txt" 300 load_cache
say "load_cache: $(cat "$runs/first-load_cache.txt"); $(cat "$runs/load.env")"
first module "" 10 module
say "module: $(cat "$runs/first-module.txt")"
nsd_up
rm -f "$tmp/plain/pid"
stream cold plain
rm -f "$tmp/plain/pid"
stream load_cache plain "$tmp/dump.txt"
rm -f "$tmp/module/pid"
stream module module
grep -h "dnsnap: " "$log/unbound-module.log" | tail -n 4 >&2 || true

python3 "$here/report.py" "$out"
