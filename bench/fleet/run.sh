#!/bin/sh
# bench/fleet/run.sh: issue 14's benchmark, the shared tier. Three dnsnap
# serve hosts share one Redis (serve --l2): what it saves the fleet in
# upstream queries, what a new host gains by starting from the fleet (import
# --from), what an L2 hit costs against memory and map hits, and what an
# entry costs Redis against the same name stored as Unbound's cachedb stores it.
#
# Usage (from the repository root; `make bench-fleet` builds and runs it):
#   bench/fleet/run.sh [BUILD] [NAMES]
# Environment: FLEET_RATE (each host's stream, q/s, default 1000),
# FLEET_SECONDS (the fleet's streams, default 30), FLEET_NEW_SECONDS (the
# fourth host's stream, default 15), FLEET_LAT_NAMES (the latency sample,
# default 2000 names), FLEET_L2_WAIT (serve --l2-wait, ms; default: serve's,
# 10), FLEET_OUT (results and logs, default BUILD/fleet).
#
# All on 127.0.0.1 (ports drawn below the ephemeral range, processes stopped
# by PID, files in a mktemp -d directory):
#   NSD       authoritative for NAMES names of the Big Pineapple mix in the
#             root zone (bench/peers/mkzone.c; TTLs >= 3600 s);
#   Unbound   stub-zone "." to NSD, iterator only, warmed with every name
#             first: the fleet's upstream, the same for every run; its
#             total.num.queries counts what the dnsnap hosts ask it;
#   Redis     one redis-server, no persistence (the shared tier); a second
#             one for Unbound's cachedb values (4. below);
#   hosts     dnsnap serve SNAP --upstream Unbound --threads 1, each with its
#             own SNAP (absent at start: a cold cache), --json counters.
# The stream: BUILD/deploy_zipfload (bench/deploy/zipfload.c), Zipf s = 1 over
# the names with one popularity ranking (-S 42); each host gets its own draws
# (-D), at FLEET_RATE: one stream split over the hosts at random.
#
# 1. The fleet, twice, fresh processes and the same streams: without the
#    shared tier, then with --l2 redis://... (Redis emptied first). Per host:
#    hit ratio = (memory + map + L2 hits) / queries, from serve's exit
#    counters; upstream queries: Unbound's count over the run (and each
#    host's own upstream counter).
# 2. A fourth host, once the fleet is stopped (its writes flushed): `dnsnap
#    import --from redis://... -o SNAP` builds a snapshot of what the fleet
#    left in Redis. Then one stream of FLEET_NEW_SECONDS (draws -D 4) through
#    a host started cold, one started on the imported SNAP (without --l2:
#    the pre-warm alone), one started cold with --l2: hit ratio and upstream
#    queries over the stream.
# 3. Latency of a first answer, from the client side: BUILD/peers_dnsprobe
#    lat -c 1 -n M (one query in flight, each of M names once; send to
#    receive, CLOCK_MONOTONIC) over M names that Redis holds: a cold host
#    without --l2 (upstream: Unbound, warm), the same names again (memory
#    hits), a host on the snapshot that one published at exit (map hits), a
#    cold host with --l2 (L2 hits). Each host's counters confirm the kind
#    of every answer (the hits_* counts); serve's own answer_latency_l2
#    histogram is kept in the JSON.
# 4. Redis memory per entry: MEMORY USAGE (SAMPLES 0) of every key (a
#    pipelined command each, a second for tens of thousands) and INFO
#    memory's used_memory growth over the number of keys, for the values the
#    fleet wrote; then the same names as Unbound's cachedb module stores them
#    (bench/fleet/redistool.py: Debian's Unbound has no cachedb, so the value
#    is rebuilt from Unbound's own reply, as the module encodes it) in the
#    second Redis, measured the same way.
#
# Output: BUILD/fleet/results.md (tables) and results.json, made by
# bench/fleet/report.py from the raw files in BUILD/fleet/raw. The clients,
# the servers and Redis share the machine's cores: latencies are a floor's
# worth of queueing on a busy 2-core machine, the hit ratios and query counts
# are not timing figures (a race between two hosts asking one name at once
# is part of what the shared tier meets).
set -eu
build=${1:-build}
names=${2:-50000}
rate=${FLEET_RATE:-1000}
secs=${FLEET_SECONDS:-30}
newsecs=${FLEET_NEW_SECONDS:-15}
latn=${FLEET_LAT_NAMES:-2000}
l2wait=${FLEET_L2_WAIT:-}
out=${FLEET_OUT:-$build/fleet}
for c in dnsperf nsd unbound unbound-control redis-server redis-cli dig ss python3; do
	command -v $c >/dev/null || { echo "fleet: needs $c (make bench-fleet installs it)"; exit 2; }
done
for f in dnsnap peers_mkzone peers_dnsprobe deploy_zipfload; do
	[ -x "$build/$f" ] || { echo "fleet: $build/$f missing (make bench-fleet builds it)"; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/logs" "$out/raw"
mkdir -p "$out/logs" "$out/raw"
log=$out/logs
raw=$out/raw
tmp=$(mktemp -d /tmp/dnsnap-fleet.XXXXXX)
pids=
. "$(dirname "$0")/../lib.sh" # free_port, wait_udp, stop, nsd_start
cleanup() {
	for p in $pids; do stop "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t_start=$(date +%s)
say() { printf '%s fleet: %s\n' "$(date +%T)" "$*" >&2; }
# Debian's python3 (bench/fleet's scripts use its standard library only),
# else the first on PATH
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tool() { "$py" "$here/redistool.py" "$@"; }

has_l2=no
"$build/dnsnap" serve --help 2>&1 | grep -q -- '--l2' && has_l2=yes
has_from=no
"$build/dnsnap" import --help 2>&1 | grep -q -- '--from' && has_from=yes

# Wait until FILE has a line matching RE (while process PID, if given, lives).
wait_line() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 3000 ] || { say "no '$2' in $1"; cat "$1" >&2; exit 1; }
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || { say "$3 died:"; cat "$1" >&2; exit 1; }
		sleep 0.005
	done
}
meta() { echo "$1=$2" >>"$raw/meta.env"; }

# ---------------------------------------------------------------- machine
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
: >"$raw/meta.env"
meta date "$date_utc"
meta names "$names"
meta rate "$rate"
meta secs "$secs"
meta newsecs "$newsecs"
meta nproc "$(nproc)"
meta cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta v_dnsnap "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
meta v_unbound "$(unbound -V | sed -n 's/^Version //p')"
meta v_redis "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
meta has_l2 "$has_l2"
meta has_from "$has_from"
say "$date_utc, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $names names," \
	"$rate q/s per host; serve --l2: $has_l2, import --from: $has_from"

# ---------------------------------------------------------------- upstream
AUTH=$(free_port)
"$build/peers_mkzone" "$names" "$tmp/root.zone" "$tmp/queries"
nsd_start "." "$tmp/root.zone" "$AUTH" "$log/nsd.log" . SOA

UB=$(free_port)
mkdir -p "$tmp/unbound"
cat >"$tmp/unbound/unbound.conf" <<EOF
server:
	interface: 127.0.0.1@$UB
	outgoing-interface: 127.0.0.1
	do-ip6: no
	num-threads: 1
	username: ""
	chroot: ""
	directory: "$tmp/unbound"
	pidfile: "$tmp/unbound/unbound.pid"
	logfile: ""
	use-syslog: no
	verbosity: 1
	do-daemonize: no
	module-config: "iterator"
	auto-trust-anchor-file: ""
	do-not-query-localhost: no
	qname-minimisation: no
	msg-cache-size: 128m
	rrset-cache-size: 256m
	num-queries-per-thread: 4096
	outgoing-range: 8192
remote-control:
	control-enable: yes
	control-interface: $tmp/unbound/control.sock
	control-use-cert: no
stub-zone:
	name: "."
	stub-addr: 127.0.0.1@$AUTH
EOF
unbound -d -c "$tmp/unbound/unbound.conf" 2>>"$log/unbound.log" &
pids="$pids $!"
wait_udp "$UB" 1
until unbound-control -c "$tmp/unbound/unbound.conf" status >/dev/null 2>&1; do sleep 0.01; done
ub_queries() {
	unbound-control -c "$tmp/unbound/unbound.conf" stats_noreset |
		sed -n 's/^total\.num\.queries=//p'
}
dnsperf -s 127.0.0.1 -p "$UB" -d "$tmp/queries" -e -n 1 -c 4 -T 1 -q 100 \
	>"$log/unbound-warm.txt" 2>&1 || true
warm_ok=$(sed -n 's/^ *Response codes:.*NOERROR \([0-9]*\) .*/\1/p' "$log/unbound-warm.txt")
meta unbound_warm_noerror "${warm_ok:-0}"
say "NSD on $AUTH, Unbound on $UB: ${warm_ok:-0}/$names NOERROR while warming Unbound"

# Redis: the shared tier, and (4.) a second one for Unbound's values
start_redis() { # start_redis NAME: sets redis_port, redis_pid
	redis_port=$(free_port)
	mkdir -p "$tmp/$1"
	redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
		--dir "$tmp/$1" --logfile "$log/$1.log" --daemonize no &
	redis_pid=$!
	pids="$pids $redis_pid"
	i=0
	until [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ]; do
		i=$((i + 1))
		[ $i -lt 1000 ] || { cat "$log/$1.log" >&2; exit 1; }
		sleep 0.01
	done
}
start_redis redis
R=$redis_port
L2URL=redis://127.0.0.1:$R
# serve's options for the shared tier (no spaces inside: expanded unquoted)
L2ARGS="--l2 $L2URL${l2wait:+ --l2-wait $l2wait}"
meta redis_port "$R"
meta l2_args "$L2ARGS"

# ---------------------------------------------------------------- hosts
# start_host NAME SNAP [ARGS...]: dnsnap serve on a free port; sets host_port,
# host_pid. Counters (--json) to $raw/NAME.jsonl, the log to $log/NAME.log.
start_host() {
	n=$1 s=$2
	shift 2
	host_port=$(free_port)
	"$build/dnsnap" serve "$s" --listen "127.0.0.1:$host_port" --upstream "127.0.0.1:$UB" \
		--threads 1 --snapshot-every 0 --json "$@" >"$raw/$n.jsonl" 2>"$log/$n.log" &
	host_pid=$!
	pids="$pids $host_pid"
	wait_line "$log/$n.log" "ready: answering" "$host_pid"
}
# counters NAME PID: SIGUSR1, and wait for the counters line it prints (the
# figures are taken from it: at exit the upstreams are already gone)
counters() {
	k=$(grep -c '"event":"counters"' "$raw/$1.jsonl" || true)
	kill -USR1 "$2"
	i=0
	until [ "$(grep -c '"event":"counters"' "$raw/$1.jsonl" || true)" -gt "$k" ]; do
		i=$((i + 1))
		[ $i -lt 2000 ] || { say "$1: no counters line"; exit 1; }
		sleep 0.005
	done
}
# stream NAME PORT SECONDS SEED: the Zipf stream (ranking -S 42, draws -D SEED)
stream() {
	"$build/deploy_zipfload" 127.0.0.1 "$2" "$tmp/queries" -r "$rate" -l "$3" -S 42 -D "$4" \
		>"$raw/$1.zipf.jsonl" 2>"$raw/$1.zipf.txt"
}

# fleet LABEL [ARGS...]: three hosts, three streams at once; each host's
# counters once the streams are done are the figures; then stopped (an L2
# host flushes its writes); Unbound's count over the run.
fleet() {
	label=$1
	shift
	fp=
	for h in 1 2 3; do
		start_host "$label-$h" "$tmp/$label-$h.snap" "$@"
		eval "port$h=$host_port"
		fp="$fp $host_pid"
	done
	u0=$(ub_queries)
	zp=
	for h in 1 2 3; do
		eval "stream $label-$h \$port$h $secs $h" &
		zp="$zp $!"
	done
	for p in $zp; do wait "$p"; done
	h=1
	for p in $fp; do
		counters "$label-$h" "$p"
		h=$((h + 1))
	done
	for p in $fp; do stop "$p"; done
	meta "${label}_upstream" $(($(ub_queries) - u0))
	say "$label: $(($(ub_queries) - u0)) queries reached Unbound;" \
		"$(sed 's/^zipfload: //' "$raw/$label-1.zipf.txt")"
}

# ---------------------------------------------------------------- 1. the fleet
fleet local
if [ "$has_l2" = yes ]; then
	redis-cli -p "$R" flushall >/dev/null
	set -- $(tool used "$R")
	meta redis_used_empty "$1"
	fleet shared $L2ARGS
	set -- $(tool used "$R")
	meta redis_used_full "$1"
	meta redis_keys_full "$2"
	say "shared: Redis holds $2 keys, used_memory $1"
fi

# ---------------------------------------------------------------- 4. memory
# (before 2.: the fourth host with --l2 would add its own writes)
if [ "$has_l2" = yes ]; then
	tool stats "$R" --match "dnsnap:" --sample 1000000 >"$raw/mem-dnsnap.json"
	tool names "$R" --prefix "dnsnap:" -o "$tmp/l2names" >/dev/null
else
	say "no serve --l2: dnsnap's side of the memory figures not measured"
	head -n 20000 "$tmp/queries" >"$tmp/l2names"
fi
start_redis redis-unbound
R2=$redis_port
set -- $(tool used "$R2")
meta ub_redis_used_empty "$1"
tool unbound "$R2" --names "$tmp/l2names" --unbound "$UB" >"$raw/unbound-store.txt" \
	2>"$log/unbound-store.log"
set -- $(tool used "$R2")
meta ub_redis_used_full "$1"
meta ub_redis_keys_full "$2"
tool stats "$R2" --sample 1000000 >"$raw/mem-unbound.json"
stop "$redis_pid" # the second Redis; the shared one stays for 2. and 3.
say "Unbound's cachedb form: $(cat "$raw/unbound-store.txt"), used_memory" \
	"$(sed -n 's/^ub_redis_used_empty=//p' "$raw/meta.env") -> $1"

# ---------------------------------------------------------------- 2. a fourth host
# new LABEL SNAP [ARGS...]: one host, one stream (-D 4), stopped
new() {
	label=$1 s=$2
	shift 2
	start_host "$label" "$s" "$@"
	u0=$(ub_queries)
	stream "$label" "$host_port" "$newsecs" 4
	counters "$label" "$host_pid"
	stop "$host_pid"
	meta "${label}_upstream" $(($(ub_queries) - u0))
	say "$label: $(($(ub_queries) - u0)) queries reached Unbound"
}
if [ "$has_from" = yes ] && [ "$has_l2" = yes ]; then
	t0=$(date +%s%N)
	"$build/dnsnap" import --from "$L2URL" -o "$tmp/imported.snap" --json \
		>"$raw/import.json" 2>"$log/import.log"
	meta import_ms $((($(date +%s%N) - t0) / 1000000))
	"$build/dnsnap" info "$tmp/imported.snap" >"$log/imported-info.txt"
	meta import_entries "$(sed -n 's/^entries: *\([0-9]*\).*/\1/p' "$log/imported-info.txt")"
	say "import --from: $(cat "$raw/import.json")"
fi
new new-cold "$tmp/new-cold.snap"
if [ "$has_from" = yes ] && [ "$has_l2" = yes ]; then
	cp "$tmp/imported.snap" "$tmp/new-imported.snap"
	new new-imported "$tmp/new-imported.snap"
fi
if [ "$has_l2" = yes ]; then
	new new-l2 "$tmp/new-l2.snap" $L2ARGS
fi

# ---------------------------------------------------------------- 3. latency
# probe LABEL PORT: each name of the sample once, one in flight
head -n "$latn" "$tmp/l2names" >"$tmp/sample"
meta lat_names "$(wc -l <"$tmp/sample")"
probe() {
	"$build/peers_dnsprobe" lat 127.0.0.1 "$2" "$tmp/sample" -c 1 -n "$latn" -l 120 \
		>"$raw/lat-$1.txt" || true
	say "latency, $1: $(cat "$raw/lat-$1.txt")"
}
start_host lat-fwd "$tmp/lat.snap"
probe upstream "$host_port"
probe memory "$host_port"
counters lat-fwd "$host_pid"
stop "$host_pid"
start_host lat-map "$tmp/lat.snap"
probe map "$host_port"
counters lat-map "$host_pid"
stop "$host_pid"
if [ "$has_l2" = yes ]; then
	start_host lat-l2 "$tmp/lat-l2.snap" $L2ARGS
	probe l2 "$host_port"
	counters lat-l2 "$host_pid"
	stop "$host_pid"
fi

meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta elapsed_s $(($(date +%s) - t_start))
"$py" "$here/report.py" "$out"
