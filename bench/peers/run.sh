#!/bin/sh
# bench/peers/run.sh: dnsnap serve against its peers, Unbound, Knot Resolver
# (kresd), dnsdist (a packet cache in front of Unbound) and PowerDNS Recursor,
# each answering from a warm cache of the same names.
#
# Usage (from the repository root, after make all build/peers_mkzone
# build/peers_dnsprobe; `make bench-peers` does all of it):
#   bench/peers/run.sh [BUILD] [NAMES]
# Environment: PEERS_SECONDS (each dnsperf throughput run, default 10),
# PEERS_ROUNDS (default 3), PEERS_OUT (results and logs, default BUILD/peers).
#
# 1. Zone: BUILD/peers_mkzone writes NAMES entries of the Big Pineapple mix
#    (bench/mix.c) as the root zone (TTLs at least 3600) and a dnsperf query
#    file (every name once, with its type). NSD serves the zone on 127.0.0.1.
# 2. Warm: dnsperf asks every name once through NSD directly while tcpdump
#    records it, and `dnsnap load` builds the snapshot from the capture;
#    Unbound (stub-zone "." to NSD, iterator only: no validation), kresd
#    (policy.FORWARD to NSD, no trust anchor: no validation), PowerDNS
#    Recursor (forward-zones=.=NSD, dnssec=off) and dnsdist (packet cache, the
#    Unbound above as its backend) are warmed by dnsperf asking every name
#    once through them.
# 3. NSD is stopped (and checked dead): every answer from here on comes
#    from a cache. ROUNDS rounds, every server in each round, in an order that
#    rotates from round to round: dnsperf throughput with two client
#    settings, the server's CPU time per query over each (utime + stime of
#    all its processes, /proc/PID/stat), then BUILD/peers_dnsprobe for latency
#    percentiles (1 and 16 queries in flight) and a check of every reply
#    (NOERROR with an answer of the asked type). Medians of the rounds.
#    dnsdist's CPU is its own process's; the Unbound behind it is read too
#    (a miss would make Unbound work), and Unbound's query counter gives the
#    number of queries dnsdist passed on during its measured runs.
# 4. Warm start, to the first cache hit (BUILD/peers_dnsprobe first): dnsnap
#    serve on the snapshot; a fresh Unbound fed the warm one's dump_cache
#    with unbound-control load_cache; kresd restarted on its LMDB cache.
#    Then every name is asked once more to count what the restart kept.
#    dnsdist keeps its packet cache in memory only: it is restarted in front
#    of the warm Unbound, and the names it answers without asking Unbound
#    (Unbound's counter) are what the restart kept. PowerDNS Recursor 4.8
#    has no cache persistence: not restarted.
# 5. Memory per name: Pss growth of all the server's processes (smaps_rollup)
#    from empty to warm, over NAMES; disk per name: the snapshot, Unbound's
#    dump_cache text, the used pages of kresd's data.mdb (mdb_stat).
#
# Threads: 2 for every server (dnsnap --threads 2, Unbound num-threads 2, two
# kresd processes on one SO_REUSEPORT address sharing one cache, PowerDNS
# Recursor threads=2 each on its own SO_REUSEPORT socket, dnsdist two
# SO_REUSEPORT UDP listeners). dnsperf and dnsprobe run on the same machine
# and share its cores: on a 2-core machine the client takes a large share of
# the CPU, so every figure is a floor.
# Network: nothing leaves 127.0.0.1 (Unbound, kresd and PowerDNS Recursor send
# from 127.0.0.1, IPv6 off, kresd's root priming and trust-anchor modules
# unloaded, PowerDNS Recursor without root hints or security polling,
# dnsdist's backend declared up: no health checks, no security polling).
# The floor (bench/floor.c, BUILD/floor): every query sent back with QR set,
# the kernel's UDP path alone, in the rotation of step 3; dnsnap's q/s over its
# and CPU per query minus its are serve_over_floor and serve_cpu_over_floor.
# Output: PEERS_OUT/results.md (a markdown table) and PEERS_OUT/results.json.
set -eu
build=${1:-build}
names=${2:-100000}
secs=${PEERS_SECONDS:-10}
rounds=${PEERS_ROUNDS:-3}
out=${PEERS_OUT:-$build/peers}
for c in dnsperf nsd unbound unbound-control kresd dnsdist pdns_recursor rec_control tcpdump \
	mdb_stat dig ss; do
	command -v $c >/dev/null || { echo "peers: needs $c (make bench-peers installs it)"; exit 2; }
done
for f in dnsnap peers_mkzone peers_dnsprobe floor; do
	[ -x "$build/$f" ] || { echo "peers: $build/$f missing (make bench-peers builds it)"; exit 2; }
done
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/logs"
mkdir -p "$out/logs"
log=$out/logs
tmp=$(mktemp -d /tmp/dnsnap-peers.XXXXXX)
pids=
. "$(dirname "$0")/../lib.sh" # free_port, wait_udp, stop, nsd_start
# On exit, failed or not: every process started, stopped by PID and waited for.
cleanup() {
	for p in $pids; do stop "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
probe=$build/peers_dnsprobe
t_start=$(date +%s)
say() { printf '%s peers: %s\n' "$(date +%T)" "$*"; }

# Pss, Pss_Anon (kB) summed over the processes PIDS.
mem() {
	for p; do cat /proc/$p/smaps_rollup; done |
		awk '/^Pss:/{p += $2} /^Pss_Anon:/{a += $2} END{print p, a}'
}
# CPU time (clock ticks) of the processes PIDS so far, all their threads.
cpu_ticks() {
	for p; do cat /proc/$p/stat; done | sed 's/.*) //' | awk '{s += $12 + $13} END{print s}'
}
hz=$(getconf CLK_TCK)
# key=value from a dnsprobe line: field FILE KEY
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
# dnsperf: perf NAME PORT LABEL ARGS... -> $log/NAME-LABEL.txt;
# prints "q/s lost noerror% completed"
perf() {
	n=$1 port=$2 label=$3
	shift 3
	dnsperf -s 127.0.0.1 -p "$port" -d "$tmp/queries" -e "$@" >"$log/$n-$label.txt" 2>&1 || true
	q=$(sed -n 's/^ *Queries per second: *\([0-9]*\).*/\1/p' "$log/$n-$label.txt")
	l=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' "$log/$n-$label.txt")
	ok=$(sed -n 's/^ *Response codes:.*NOERROR [0-9]* (\([0-9.]*\)%).*/\1/p' "$log/$n-$label.txt")
	d=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$log/$n-$label.txt")
	echo "${q:-0} ${l:-0} ${ok:-0} ${d:-0}"
}
# Every name once, one dnsperf pass: prints "noerror total"
pass() {
	dnsperf -s 127.0.0.1 -p "$2" -d "$tmp/queries" -e -n 1 -c 4 -T 1 -q 100 >"$log/$1.txt" 2>&1 || true
	c=$(sed -n 's/^ *Response codes:.*NOERROR \([0-9]*\) .*/\1/p' "$log/$1.txt")
	t=$(sed -n 's/^ *Queries sent: *\([0-9]*\).*/\1/p' "$log/$1.txt")
	echo "${c:-0} ${t:-0}"
}
# Warm a cache: every name once, and again (at most 3 passes in all) while
# some query of the pass got no NOERROR (lost on a busy machine, so never
# cached). warm NAME PORT: prints "noerror-of-the-last-pass passes"
warm() {
	k=1
	set -- "$1" "$2" $(pass "$1" "$2")
	while [ "$3" -lt "$names" ] && [ $k -lt 3 ]; do
		k=$((k + 1))
		set -- "$1" "$2" $(pass "$1-$k" "$2")
	done
	echo "$3 $k"
}

# ---------------------------------------------------------------- machine
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cpus=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
v_unbound=$(unbound -V | sed -n 's/^Version //p')
v_kresd=$(kresd --version | sed -n 's/.*version //p')
v_dnsdist=$(dnsdist --version 2>&1 | sed -n 's/^dnsdist \([^ ]*\).*/\1/p')
v_pdns=$(pdns_recursor --version 2>&1 | sed -n 's/.*PowerDNS Recursor \([^ ]*\).*/\1/p')
v_nsd=$(nsd -v 2>&1 | sed -n 's/^NSD version //p')
v_dnsperf=$(dnsperf -h 2>&1 | sed -n 's/^Version //p')
v_commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
say "$date_utc, $cpus CPUs ($cpu), load $load0; $names names, ${secs}s runs"

# ---------------------------------------------------------------- 1. zone
AUTH=$(free_port)
"$build/peers_mkzone" "$names" "$tmp/root.zone" "$tmp/queries"
nsd_start "." "$tmp/root.zone" "$AUTH" "$log/nsd.log" . SOA
say "NSD serves $(wc -l <"$tmp/root.zone") zone lines on port $AUTH"

# ---------------------------------------------------------------- 2. warm
# dnsnap: the authoritative's answers, recorded. The capture is paced (at most
# 25,000 q/s) so that tcpdump, sharing the cores, drops nothing; tcpdump hands
# over packets in blocks retired after a second, so it is stopped 2 s after
# the last answer. A capture that lost packets anyway is taken again.
for try in 1 2 3; do
	tcpdump -i lo -B 65536 -w "$tmp/auth.pcap" "udp port $AUTH" 2>"$log/tcpdump.log" &
	tcpdump_pid=$!
	pids="$pids $tcpdump_pid"
	i=0
	until grep -q 'listening on' "$log/tcpdump.log"; do
		i=$((i + 1))
		[ $i -lt 500 ] || { cat "$log/tcpdump.log"; exit 1; }
		sleep 0.01
	done
	dnsperf -s 127.0.0.1 -p "$AUTH" -d "$tmp/queries" -e -n 1 -c 4 -T 1 -q 100 -Q 25000 \
		>"$log/auth-capture.txt" 2>&1 || true
	sleep 2
	kill -INT $tcpdump_pid
	wait $tcpdump_pid || true
	cap=$(sed -n 's/^\([0-9]*\) packets captured/\1/p' "$log/tcpdump.log")
	[ "${cap:-0}" -ge $((2 * names)) ] && break
	say "capture $try: $cap packets of $((2 * names)); again"
done
t0=$(date +%s%N)
"$build/dnsnap" load "$tmp/dnsnap.snap" "$tmp/auth.pcap" --port "$AUTH" >"$log/dnsnap-load.txt" 2>&1
load_ms=$((($(date +%s%N) - t0) / 1000000))
"$build/dnsnap" info "$tmp/dnsnap.snap" >>"$log/dnsnap-load.txt"
snap_entries=$(sed -n 's/^entries: *\([0-9]*\).*/\1/p' "$log/dnsnap-load.txt")
snap_bytes=$(stat -c %s "$tmp/dnsnap.snap")
say "dnsnap: $cap packets captured, $snap_entries entries loaded in $load_ms ms"

# Unbound
UB=$(free_port)
mkdir -p "$tmp/unbound"
cat >"$tmp/unbound/unbound.conf" <<EOF
server:
	interface: 127.0.0.1@$UB
	outgoing-interface: 127.0.0.1
	do-ip6: no
	num-threads: 2
	so-reuseport: yes
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
	msg-cache-size: 256m
	rrset-cache-size: 512m
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
ub_pid=$!
pids="$pids $ub_pid"
wait_udp "$UB" 2
until unbound-control -c "$tmp/unbound/unbound.conf" status >/dev/null 2>&1; do sleep 0.01; done
set -- $(mem $ub_pid)
ub_mem0=$1 ub_anon0=$2
set -- $(warm unbound-warm "$UB")
ub_warm_ok=$1 ub_warm_n=$2
set -- $(mem $ub_pid)
ub_mem1=$1 ub_anon1=$2
t0=$(date +%s%N)
unbound-control -c "$tmp/unbound/unbound.conf" dump_cache >"$tmp/unbound.dump"
dump_ms=$((($(date +%s%N) - t0) / 1000000))
dump_bytes=$(stat -c %s "$tmp/unbound.dump")
dump_msgs=$(grep -c '^msg ' "$tmp/unbound.dump" || true)
say "Unbound: $ub_warm_ok/$names NOERROR while warming ($ub_warm_n passes);" \
	"dump_cache: $dump_msgs messages, $dump_bytes bytes, $dump_ms ms"

# Knot Resolver: FORWARD, not STUB: kresd 5.6 caches a STUB answer as a packet
# whose TTL comes out at cache.min_ttl (5 s), so STUB leaves no warm cache.
KR=$(free_port)
mkdir -p "$tmp/kresd/run" "$tmp/kresd/cache"
cat >"$tmp/kresd/config" <<EOF
net.ipv6 = false
net.outgoing_v4('127.0.0.1')
net.listen('127.0.0.1', $KR, { kind = 'dns' })
modules.unload('priming')
modules.unload('detect_time_skew')
modules.unload('detect_time_jump')
modules.unload('ta_update')
modules.unload('ta_signal_query')
modules.unload('ta_sentinel')
trust_anchors.remove('.')
cache.open(1024 * MB, 'lmdb://$tmp/kresd/cache')
policy.add(policy.all(policy.FORWARD('127.0.0.1@$AUTH')))
EOF
cat >"$tmp/kresd/start.sh" <<EOF
#!/bin/sh
# two kresd processes on one address (SO_REUSEPORT), one LMDB cache
kresd -n -c $tmp/kresd/config $tmp/kresd/run >>$log/kresd.log 2>&1 &
echo \$! >$tmp/kresd/pids
kresd -n -c $tmp/kresd/config $tmp/kresd/run >>$log/kresd.log 2>&1 &
echo \$! >>$tmp/kresd/pids
wait
EOF
chmod +x "$tmp/kresd/start.sh"
"$tmp/kresd/start.sh" &
pids="$pids $!"
wait_udp "$KR" 2
kr_pids=$(cat "$tmp/kresd/pids")
pids="$pids $kr_pids"
set -- $(mem $kr_pids)
kr_mem0=$1 kr_anon0=$2
set -- $(warm kresd-warm "$KR")
kr_warm_ok=$1 kr_warm_n=$2
set -- $(mem $kr_pids)
kr_mem1=$1 kr_anon1=$2
kr_pages=$(mdb_stat -e "$tmp/kresd/cache" | sed -n 's/^ *Number of pages used: *//p')
kr_psize=$(mdb_stat -e "$tmp/kresd/cache" | sed -n 's/^ *Page size: *//p')
kr_bytes=$((kr_pages * kr_psize))
kr_file=$(du -k "$tmp/kresd/cache/data.mdb" | cut -f1)
say "kresd: $kr_warm_ok/$names NOERROR while warming ($kr_warm_n passes);" \
	"data.mdb: $kr_bytes bytes used ($kr_file KiB allocated)"

# PowerDNS Recursor 4.8: forward-zones (RD clear, as to an authoritative) to
# NSD, no DNSSEC processing, two worker threads each on its own SO_REUSEPORT
# socket (pdns-distributes-queries=no), TTLs kept up to a day in the record
# and packet caches (4.8's packetcache-ttl is 3600 by default), caches big
# enough for every name. Its own config and socket directory, no root hints,
# no security polling, dont-query emptied (127.0.0.0/8 is in its default),
# run as the current user in the foreground.
PR=$(free_port)
mkdir -p "$tmp/pdns"
pr_entries=$((names * 4 > 1000000 ? names * 4 : 1000000))
cat >"$tmp/pdns/recursor.conf" <<EOF
config-dir=$tmp/pdns
socket-dir=$tmp/pdns
local-address=127.0.0.1
local-port=$PR
query-local-address=127.0.0.1
forward-zones=.=127.0.0.1:$AUTH
dont-query=
dnssec=off
qname-minimization=no
threads=2
pdns-distributes-queries=no
reuseport=yes
max-cache-ttl=86400
packetcache-ttl=86400
max-cache-entries=$pr_entries
max-packetcache-entries=$pr_entries
hint-file=no
security-poll-suffix=
daemon=no
write-pid=no
disable-syslog=yes
EOF
pdns_recursor --config-dir="$tmp/pdns" >>"$log/pdns-recursor.log" 2>&1 &
pr_pid=$!
pids="$pids $pr_pid"
wait_udp "$PR" 2
i=0
until rec_control --socket-dir="$tmp/pdns" ping >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 1000 ] || { echo "peers: pdns_recursor does not answer rec_control"; exit 1; }
	sleep 0.01
done
set -- $(mem $pr_pid)
pr_mem0=$1 pr_anon0=$2
set -- $(warm pdns-warm "$PR")
pr_warm_ok=$1 pr_warm_n=$2
set -- $(mem $pr_pid)
pr_mem1=$1 pr_anon1=$2
say "PowerDNS Recursor: $pr_warm_ok/$names NOERROR while warming ($pr_warm_n passes)"

# dnsdist 1.7: the warm Unbound above as its backend (declared up: no health
# check queries), two UDP listeners on one SO_REUSEPORT address, a packet
# cache of twice the names in 16 shards, TTLs kept up to a day. Unbound's
# query counter tells how many queries dnsdist passed on (its misses).
DD=$(free_port)
mkdir -p "$tmp/dnsdist"
dd_size=$((names * 2 > 200000 ? names * 2 : 200000))
cat >"$tmp/dnsdist/dnsdist.conf" <<EOF
setLocal('127.0.0.1:$DD', { reusePort = true })
addLocal('127.0.0.1:$DD', { reusePort = true })
setACL({ '127.0.0.0/8' })
setSecurityPollSuffix('')
srv = newServer({ address = '127.0.0.1:$UB' })
srv:setUp()
pc = newPacketCache($dd_size, { maxTTL = 86400, minTTL = 0, numberOfShards = 16 })
getPool(''):setCache(pc)
EOF
ub_queries() {
	unbound-control -c "$tmp/unbound/unbound.conf" stats_noreset |
		sed -n 's/^total\.num\.queries=//p'
}
dnsdist --supervised --disable-syslog -C "$tmp/dnsdist/dnsdist.conf" >>"$log/dnsdist.log" 2>&1 &
dd_pid=$!
pids="$pids $dd_pid"
wait_udp "$DD" 2
set -- $(mem $dd_pid)
dd_mem0=$1 dd_anon0=$2
u0=$(ub_queries)
set -- $(warm dnsdist-warm "$DD")
dd_warm_ok=$1 dd_warm_n=$2
dd_warm_fwd=$(($(ub_queries) - u0))
set -- $(mem $dd_pid)
dd_mem1=$1 dd_anon1=$2
say "dnsdist: $dd_warm_ok/$names NOERROR while warming ($dd_warm_n passes)," \
	"$dd_warm_fwd queries passed to Unbound"

# ---------------------------------------------------------------- 3. cache hits only
stop $nsd_pid
if dig +tries=1 +time=1 @127.0.0.1 -p "$AUTH" . SOA >/dev/null 2>&1; then
	echo "peers: the authoritative server still answers"
	exit 1
fi
say "NSD stopped: from here on only caches answer"

DN=$(free_port)
# dnsnap's warm start comes first: the server is started by the prober
"$probe" first 127.0.0.1 "$DN" "$tmp/queries" -- \
	"$build/dnsnap" serve "$tmp/dnsnap.snap" --listen "127.0.0.1:$DN" --threads 2 \
	>"$log/dnsnap-first.txt" 2>"$log/dnsnap-serve.log"
dn_pid=$(field "$log/dnsnap-first.txt" pid)
pids="$pids $dn_pid"
dn_first=$(field "$log/dnsnap-first.txt" first_hit_us)
set -- $(mem $dn_pid)
dn_mem0=$1 dn_anon0=$2
set -- $(pass dnsnap-warm "$DN")
dn_warm_ok=$1
set -- $(mem $dn_pid)
dn_mem1=$1 dn_anon1=$2
say "dnsnap: first hit ${dn_first} us after the start; $dn_warm_ok/$names NOERROR, every name once"

# The floor (bench/floor.c): each query sent back with QR set, two threads on
# one SO_REUSEPORT port, recvmmsg/sendmmsg in batches of 32, no parsing: the
# kernel's UDP path that every server here stands on. In the rotation like a
# server; dnsnap is measured against it (serve_over_floor: its q/s over the
# floor's, serve_cpu_over_floor: its CPU per query minus the floor's, each
# the median over the rounds of the two measured in the same round).
FL=$(free_port)
"$build/floor" --listen "127.0.0.1:$FL" --threads 2 2>"$log/floor.log" &
fl_pid=$!
pids="$pids $fl_pid"
wait_udp "$FL" 2

# The same client settings for every server: one dnsperf thread with 4
# clients and 200 queries in flight, and two threads, 8 clients, 500 in flight.
# ROUNDS rounds, every server in each, the order rotating by one from round
# to round, so that the load of whatever else runs on the machine falls on
# all of them alike; the table gives the median of the rounds. Each dnsperf
# run also measures the server's CPU time (utime + stime of all its
# processes) per completed query; for dnsdist, also with the Unbound behind
# it, and Unbound's query counter over all of dnsdist's runs (its misses).
S1="-c 4 -T 1 -q 200"
S2="-c 8 -T 2 -q 500"
mkdir -p "$tmp/res"
order="dnsnap unbound kresd dnsdist pdns floor"
dd_fwd=0
loads=
r=1
while [ $r -le "$rounds" ]; do
	loads="$loads${loads:+, }\"$(cut -d' ' -f1-3 /proc/loadavg)\""
	for n in $order; do
		xp=
		case $n in
		dnsnap) port=$DN sp=$dn_pid ;;
		unbound) port=$UB sp=$ub_pid ;;
		kresd) port=$KR sp=$kr_pids ;;
		dnsdist) port=$DD sp=$dd_pid xp=$ub_pid u0=$(ub_queries) ;;
		pdns) port=$PR sp=$pr_pid ;;
		floor) port=$FL sp=$fl_pid ;;
		esac
		for t in 1 2; do
			[ $t = 1 ] && set -- $S1 || set -- $S2
			c0=$(cpu_ticks $sp)
			[ -z "$xp" ] || x0=$(cpu_ticks $xp)
			set -- $(perf "$n" "$port" "t$t-$r" -l "$secs" "$@")
			c1=$(cpu_ticks $sp)
			echo "$1" >>"$tmp/res/$n.q$t"
			echo "$2" >>"$tmp/res/$n.l$t"
			echo "$3" >>"$tmp/res/$n.ok$t"
			awk -v c=$((c1 - c0)) -v hz="$hz" -v n="$4" \
				'BEGIN{printf "%.2f\n", n ? c * 1e6 / hz / n : 0}' >>"$tmp/res/$n.cpu$t"
			[ -z "$xp" ] || awk -v c=$((c1 - c0 + $(cpu_ticks $xp) - x0)) -v hz="$hz" -v n="$4" \
				'BEGIN{printf "%.2f\n", n ? c * 1e6 / hz / n : 0}' >>"$tmp/res/$n.xcpu$t"
		done
		for c in 1 16; do
			"$probe" lat 127.0.0.1 "$port" "$tmp/queries" -c $c -l 3 >"$log/$n-lat$c-$r.txt" || true
			for f in p50_us p99_us answered hits; do
				field "$log/$n-lat$c-$r.txt" $f >>"$tmp/res/$n.lat$c.$f"
			done
		done
		[ "$n" != dnsdist ] || dd_fwd=$((dd_fwd + $(ub_queries) - u0))
		say "round $r, $n: $(tail -1 "$tmp/res/$n.q1") / $(tail -1 "$tmp/res/$n.q2") q/s," \
			"$(tail -1 "$tmp/res/$n.cpu1") / $(tail -1 "$tmp/res/$n.cpu2") us CPU per query"
	done
	order="${order#* } ${order%% *}"
	r=$((r + 1))
done
med() { sort -n "$tmp/res/$1" | awk '{a[NR] = $1} END{print a[int((NR + 1) / 2)]}'; }
range() { sort -n "$tmp/res/$1" | awk 'NR == 1{lo = $1} {hi = $1} END{print lo "-" hi}'; }
total() { awk '{s += $1} END{print s}' "$tmp/res/$1"; }
lowest() { sort -n "$tmp/res/$1" | head -1; }
list() { paste -sd, "$tmp/res/$1"; }
for k in dn:dnsnap ub:unbound kr:kresd dd:dnsdist pr:pdns fl:floor; do
	p=${k%%:*} n=${k#*:}
	eval "${p}_q1=$(med $n.q1) ${p}_q2=$(med $n.q2) ${p}_r1=$(range $n.q1) ${p}_r2=$(range $n.q2)"
	eval "${p}_c1=$(med $n.cpu1) ${p}_c2=$(med $n.cpu2)"
	eval "${p}_l1=$(total $n.l1) ${p}_l2=$(total $n.l2)"
	eval "${p}_ok1=$(lowest $n.ok1) ${p}_ok2=$(lowest $n.ok2)"
	eval "${p}_p50a=$(med $n.lat1.p50_us) ${p}_p99a=$(med $n.lat1.p99_us)"
	eval "${p}_p50b=$(med $n.lat16.p50_us) ${p}_p99b=$(med $n.lat16.p99_us)"
	eval "${p}_hits=$(($(total $n.lat1.hits) + $(total $n.lat16.hits)))"
	eval "${p}_answered=$(($(total $n.lat1.answered) + $(total $n.lat16.answered)))"
done
kill -USR1 "$dn_pid"
sleep 0.2
stop "$dn_pid"
dd_x1=$(med dnsdist.xcpu1) dd_x2=$(med dnsdist.xcpu2)
stop "$pr_pid"

# ---------------------------------------------------------------- 4. warm starts
# dnsdist: its packet cache lives in memory only. Restarted in front of the
# warm Unbound: the first answer is a miss answered by Unbound; then every
# name once. Each name dnsdist does not hold costs Unbound one query (the
# prober's names too, asked before the pass), so the names minus Unbound's
# queries since the restart are what dnsdist's cache kept.
stop "$dd_pid"
u0=$(ub_queries)
"$probe" first 127.0.0.1 "$DD" "$tmp/queries" -- \
	dnsdist --supervised --disable-syslog -C "$tmp/dnsdist/dnsdist.conf" \
	>"$log/dnsdist-first.txt" 2>>"$log/dnsdist.log"
dd_pid=$(field "$log/dnsdist-first.txt" pid)
pids="$pids $dd_pid"
dd_first=$(field "$log/dnsdist-first.txt" first_hit_us)
wait_udp "$DD" 2
set -- $(pass dnsdist-after-restart "$DD")
dd_fwd_restart=$(($(ub_queries) - u0))
dd_kept=$((names - dd_fwd_restart))
[ "$dd_kept" -le "$1" ] || dd_kept=$1
[ "$dd_kept" -ge 0 ] || dd_kept=0
stop "$dd_pid"
say "dnsdist: first answer $dd_first us after the restart (from Unbound);" \
	"$dd_kept/$names answered from its cache after ($dd_fwd_restart passed to Unbound)"
# Unbound: a fresh process on the same configuration, fed the warm one's dump.
stop "$ub_pid"
cat >"$tmp/unbound/start.sh" <<EOF
#!/bin/sh
date +%s%N >$tmp/unbound/t-start
unbound -d -c $tmp/unbound/unbound.conf 2>>$log/unbound.log &
echo \$! >$tmp/unbound/pid2
until unbound-control -c $tmp/unbound/unbound.conf status >/dev/null 2>&1; do sleep 0.002; done
date +%s%N >$tmp/unbound/t-ready
unbound-control -c $tmp/unbound/unbound.conf load_cache <$tmp/unbound.dump \
	>$log/unbound-load.txt 2>&1
date +%s%N >$tmp/unbound/t-loaded
wait
EOF
chmod +x "$tmp/unbound/start.sh"
say "Unbound: restart and load_cache ($dump_bytes bytes)..."
"$probe" first 127.0.0.1 "$UB" "$tmp/queries" -l 600 -- "$tmp/unbound/start.sh" \
	>"$log/unbound-first.txt" 2>&1
pids="$pids $(field "$log/unbound-first.txt" pid)"
ub_first=$(field "$log/unbound-first.txt" first_hit_us)
until [ -s "$tmp/unbound/t-loaded" ]; do sleep 0.05; done
ub_pid2=$(cat "$tmp/unbound/pid2")
pids="$pids $ub_pid2"
ub_ready_ms=$((($(cat "$tmp/unbound/t-ready") - $(cat "$tmp/unbound/t-start")) / 1000000))
ub_loaded_ms=$((($(cat "$tmp/unbound/t-loaded") - $(cat "$tmp/unbound/t-start")) / 1000000))
set -- $(pass unbound-after-restart "$UB")
ub_kept=$1
stop "$ub_pid2"
say "Unbound: first hit $ub_first us, control ready $ub_ready_ms ms," \
	"load_cache done $ub_loaded_ms ms; $ub_kept/$names hits after"

# kresd: both processes stopped and started again on the cache directory.
for p in $kr_pids; do stop "$p"; done
"$probe" first 127.0.0.1 "$KR" "$tmp/queries" -- "$tmp/kresd/start.sh" >"$log/kresd-first.txt" 2>&1
pids="$pids $(field "$log/kresd-first.txt" pid)"
kr_first=$(field "$log/kresd-first.txt" first_hit_us)
wait_udp "$KR" 2
kr_pids=$(cat "$tmp/kresd/pids")
pids="$pids $kr_pids"
set -- $(pass kresd-after-restart "$KR")
kr_kept=$1
for p in $kr_pids; do stop "$p"; done
say "kresd: first hit $kr_first us after the restart; $kr_kept/$names hits after"

# dnsnap: the same warm start once more, for its after-restart count
"$probe" first 127.0.0.1 "$DN" "$tmp/queries" -- \
	"$build/dnsnap" serve "$tmp/dnsnap.snap" --listen "127.0.0.1:$DN" --threads 2 \
	>"$log/dnsnap-first2.txt" 2>>"$log/dnsnap-serve.log"
dn_pid=$(field "$log/dnsnap-first2.txt" pid)
pids="$pids $dn_pid"
dn_first2=$(field "$log/dnsnap-first2.txt" first_hit_us)
set -- $(pass dnsnap-after-restart "$DN")
dn_kept=$1
stop "$dn_pid"

# Unbound's own cache into dnsnap: the warm Unbound's dump_cache text through
# dnsnap load (when this dnsnap reads it), served with the authoritative down.
ud_load_ms=null ud_entries=0 ud_first=none ud_kept=0 ud_bytes=0
if "$build/dnsnap" help load 2>&1 | grep -q dump_cache; then
	t0=$(date +%s%N)
	"$build/dnsnap" load "$tmp/from-unbound.snap" "$tmp/unbound.dump" \
		>"$log/dnsnap-load-unbound.txt" 2>&1 || true
	ud_load_ms=$((($(date +%s%N) - t0) / 1000000))
	"$build/dnsnap" info "$tmp/from-unbound.snap" >>"$log/dnsnap-load-unbound.txt" 2>&1 || true
	ud_entries=$(sed -n 's/^entries: *\([0-9]*\).*/\1/p' "$log/dnsnap-load-unbound.txt")
	ud_bytes=$(stat -c %s "$tmp/from-unbound.snap" 2>/dev/null || echo 0)
	"$probe" first 127.0.0.1 "$DN" "$tmp/queries" -- \
		"$build/dnsnap" serve "$tmp/from-unbound.snap" --listen "127.0.0.1:$DN" --threads 2 \
		>"$log/dnsnap-unbound-first.txt" 2>>"$log/dnsnap-serve.log" || true
	dn_pid=$(field "$log/dnsnap-unbound-first.txt" pid)
	pids="$pids $dn_pid"
	ud_first=$(field "$log/dnsnap-unbound-first.txt" first_hit_us)
	set -- $(pass dnsnap-unbound-after-restart "$DN")
	ud_kept=$1
	stop "$dn_pid"
	say "Unbound's dump through dnsnap load: ${ud_entries:-0} entries in $ud_load_ms ms;" \
		"first hit $ud_first us; $ud_kept/$names hits"
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- 6. output
per() { awk -v a="$1" -v n="$names" 'BEGIN{printf "%.0f", a / n}'; }
kib() { awk -v a="$1" -v b="$2" -v n="$names" 'BEGIN{printf "%.0f", (b - a) * 1024 / n}'; }
ms() { # microseconds (or none) to milliseconds (or null)
	awk -v u="$1" 'BEGIN{if (u == "none" || u == "") print "null"; else printf "%.1f", u / 1000}'
}
div() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b ? a / b : 0}'; }
# The best peer of a figure: best VAR max|min -> "value name" over the peers
# (dnsdist's CPU: its own process, the lower of its two figures).
best() {
	for p in ub:Unbound kr:kresd dd:dnsdist pr:pdns_recursor; do
		eval "echo \$${p%%:*}_$1 ${p#*:}"
	done | sort -n -k1,1 | if [ "$2" = max ]; then tail -1; else head -1; fi
}
set -- $(best q1 max); best1=$1 bestn1=$2
set -- $(best q2 max); best2=$1 bestn2=$2
set -- $(best c1 min); bestc1=$1 bestcn1=$2
set -- $(best c2 min); bestc2=$1 bestcn2=$2
ratio1=$(div "$dn_q1" "$best1")
ratio2=$(div "$dn_q2" "$best2")
cratio1=$(div "$dn_c1" "$bestc1")
cratio2=$(div "$dn_c2" "$bestc2")
# dnsnap against the floor, round by round: median of the q/s ratios (op /)
# and of the CPU differences (op -) of the two measured in the same round
vs_floor() {
	paste -d' ' "$tmp/res/dnsnap.$1" "$tmp/res/floor.$1" | awk -v op="$2" '{
		if (op == "/") printf "%.3f\n", ($2 > 0 ? $1 / $2 : 0); else printf "%.2f\n", $1 - $2 }' |
		sort -g | awk '{a[NR] = $1} END{print a[int((NR + 1) / 2)]}'
}
fq1=$(vs_floor q1 /) fq2=$(vs_floor q2 /) fc1=$(vs_floor cpu1 -) fc2=$(vs_floor cpu2 -)
ub_x=$(awk -v a="$ub_loaded_ms" -v b="$dn_first" 'BEGIN{printf "%.0f", a * 1000 / b}')
pr_kept=null
elapsed=$(($(date +%s) - t_start))

row() { printf '|'; printf ' %s |' "$@"; echo; }
md=$out/results.md
{
	echo "Peer benchmark, $date_utc: $names names of the Big Pineapple mix, every cache warm,"
	echo "the authoritative server stopped. $cpus CPUs ($cpu), load average $load0 at the"
	echo "start, $(echo "$loads" | tr -d '"') at the start of each round, $load1 at the end."
	echo "dnsnap $v_commit, Unbound $v_unbound, Knot Resolver $v_kresd, dnsdist $v_dnsdist,"
	echo "PowerDNS Recursor $v_pdns, NSD $v_nsd, dnsperf $v_dnsperf. Every server 2 threads;"
	echo "dnsdist's backend is the Unbound of the next column. The clients run on the same cores."
	echo "q/s, CPU and latency: median of $rounds interleaved rounds of $secs s (q/s range in"
	echo "brackets)."
	echo
	row "" "dnsnap serve" Unbound "Knot Resolver" "dnsdist + Unbound" "PowerDNS Recursor"
	echo "|---|---|---|---|---|---|"
	row "cache-hit q/s, dnsperf \`$S1\`" "$dn_q1 ($dn_r1)" "$ub_q1 ($ub_r1)" "$kr_q1 ($kr_r1)" \
		"$dd_q1 ($dd_r1)" "$pr_q1 ($pr_r1)"
	row "cache-hit q/s, dnsperf \`$S2\`" "$dn_q2 ($dn_r2)" "$ub_q2 ($ub_r2)" "$kr_q2 ($kr_r2)" \
		"$dd_q2 ($dd_r2)" "$pr_q2 ($pr_r2)"
	row "server CPU per query, us (the two settings)" "$dn_c1 / $dn_c2" "$ub_c1 / $ub_c2" \
		"$kr_c1 / $kr_c2" "$dd_c1 / $dd_c2 (dnsdist); $dd_x1 / $dd_x2 (with Unbound)" \
		"$pr_c1 / $pr_c2"
	row "NOERROR, lowest of the dnsperf runs" "$dn_ok1% / $dn_ok2%" "$ub_ok1% / $ub_ok2%" \
		"$kr_ok1% / $kr_ok2%" "$dd_ok1% / $dd_ok2%" "$pr_ok1% / $pr_ok2%"
	row "queries lost, all dnsperf runs" "$dn_l1 / $dn_l2" "$ub_l1 / $ub_l2" "$kr_l1 / $kr_l2" \
		"$dd_l1 / $dd_l2" "$pr_l1 / $pr_l2"
	row "latency p50 / p99, 1 in flight, us" "$dn_p50a / $dn_p99a" "$ub_p50a / $ub_p99a" \
		"$kr_p50a / $kr_p99a" "$dd_p50a / $dd_p99a" "$pr_p50a / $pr_p99a"
	row "latency p50 / p99, 16 in flight, us" "$dn_p50b / $dn_p99b" "$ub_p50b / $ub_p99b" \
		"$kr_p50b / $kr_p99b" "$dd_p50b / $dd_p99b" "$pr_p50b / $pr_p99b"
	row "hits among the latency runs' replies" "$dn_hits / $dn_answered" "$ub_hits / $ub_answered" \
		"$kr_hits / $kr_answered" "$dd_hits / $dd_answered" "$pr_hits / $pr_answered"
	row "warm start: process start to first hit, ms" "$(ms "$dn_first") / $(ms "$dn_first2")" \
		"$(ms "$ub_first")" "$(ms "$kr_first")" "$(ms "$dd_first") (a miss, from Unbound)" \
		"not measured (no persistence)"
	row "warm start: whole cache usable, ms" "$(ms "$dn_first") (mapped)" \
		"$ub_loaded_ms (load_cache done)" "$(ms "$kr_first") (LMDB)" "never (memory only)" \
		"never (memory only)"
	row "hits after the restart, every name once" "$dn_kept / $names" "$ub_kept / $names" \
		"$kr_kept / $names" "$dd_kept / $names (from its cache)" "-"
	row "memory per name: Pss growth (anonymous), bytes" \
		"$(kib "$dn_mem0" "$dn_mem1") ($(kib "$dn_anon0" "$dn_anon1"))" \
		"$(kib "$ub_mem0" "$ub_mem1") ($(kib "$ub_anon0" "$ub_anon1"))" \
		"$(kib "$kr_mem0" "$kr_mem1") ($(kib "$kr_anon0" "$kr_anon1"))" \
		"$(kib "$dd_mem0" "$dd_mem1") ($(kib "$dd_anon0" "$dd_anon1")), dnsdist alone" \
		"$(kib "$pr_mem0" "$pr_mem1") ($(kib "$pr_anon0" "$pr_anon1"))"
	row "disk per name, bytes" "$(per "$snap_bytes") (snapshot)" \
		"$(per "$dump_bytes") (dump_cache text)" "$(per "$kr_bytes") (data.mdb pages used)" \
		"none" "none"
	echo
	echo "dnsnap / best peer, q/s: $ratio1 (\`$S1\`, $bestn1), $ratio2 (\`$S2\`, $bestn2);"
	echo "the target is 1.5. dnsnap / best peer, server CPU per query: $cratio1 ($bestcn1),"
	echo "$cratio2 ($bestcn2); the target is 0.5 (dnsdist counted without its Unbound)."
	echo "The floor (bench/floor.c, each query sent back with QR set): $fl_q1 / $fl_q2 q/s,"
	echo "$fl_c1 / $fl_c2 us of CPU per query. dnsnap / floor, q/s: $fq1 / $fq2 (target 0.95);"
	echo "dnsnap - floor, CPU per query: $fc1 / $fc2 us (target 0.5); round by round."
	echo "Queries dnsdist passed to Unbound: $dd_warm_fwd while warming, $dd_fwd during all its"
	echo "measured runs, $dd_fwd_restart from its restart to the end of the pass after it."
	echo "Unbound's load_cache was done ${ub_x}x later than dnsnap's first hit."
	if [ "$ud_load_ms" != null ]; then
		echo "Unbound's dump through \`dnsnap load\`: $ud_entries entries in $ud_load_ms ms, then"
		echo "\`dnsnap serve\` on it: first hit $(ms "$ud_first") ms, $ud_kept / $names hits."
	fi
	echo "Whole run: $elapsed s."
} >"$md"
# One server's figures as JSON members: srv_json PREFIX NAME
srv_json() {
	eval "q1=\$${1}_q1 q2=\$${1}_q2 c1=\$${1}_c1 c2=\$${1}_c2 ok1=\$${1}_ok1 ok2=\$${1}_ok2"
	eval "l1=\$${1}_l1 l2=\$${1}_l2 a50=\$${1}_p50a a99=\$${1}_p99a b50=\$${1}_p50b b99=\$${1}_p99b"
	eval "hits=\$${1}_hits ans=\$${1}_answered kept=\$${1}_kept"
	eval "pss=\$((${1}_mem1 - ${1}_mem0)) anon=\$((${1}_anon1 - ${1}_anon0))"
	printf '"qps_t1": %s, "qps_t2": %s, "qps_t1_rounds": [%s], "qps_t2_rounds": [%s],\n' \
		"$q1" "$q2" "$(list "$2.q1")" "$(list "$2.q2")"
	printf '      "cpu_us_per_query": [%s, %s], "noerror_pct_lowest": [%s, %s], "lost": [%s, %s],\n' \
		"$c1" "$c2" "$ok1" "$ok2" "$l1" "$l2"
	printf '      "cpu_us_per_query_rounds": [[%s], [%s]],\n' "$(list "$2.cpu1")" "$(list "$2.cpu2")"
	printf '      "lat1_p50_us": %s, "lat1_p99_us": %s, "lat16_p50_us": %s, "lat16_p99_us": %s,\n' \
		"$a50" "$a99" "$b50" "$b99"
	printf '      "hits": %s, "answered": %s, "hits_after_restart": %s,\n' "$hits" "$ans" "$kept"
	printf '      "pss_growth_kib": %s, "anon_growth_kib": %s,' "$pss" "$anon"
}
cat >"$out/results.json" <<EOF
{
  "date": "$date_utc", "names": $names, "seconds": $secs, "rounds": $rounds,
  "machine": {"nproc": $cpus, "cpu": "$cpu", "loadavg_start": "$load0", "loadavg_end": "$load1",
              "loadavg_rounds": [$loads]},
  "versions": {"dnsnap": "$v_commit", "unbound": "$v_unbound", "kresd": "$v_kresd", "nsd": "$v_nsd",
               "dnsperf": "$v_dnsperf", "dnsdist": "$v_dnsdist", "pdns_recursor": "$v_pdns"},
  "client_settings": {"t1": "$S1", "t2": "$S2"},
  "servers": {
    "dnsnap": {$(srv_json dn dnsnap)
      "first_hit_ms": [$(ms "$dn_first"), $(ms "$dn_first2")], "cache_usable_ms": $(ms "$dn_first"),
      "disk_bytes": $snap_bytes, "entries": ${snap_entries:-0}, "load_ms": $load_ms},
    "unbound": {$(srv_json ub unbound)
      "first_hit_ms": $(ms "$ub_first"), "control_ready_ms": $ub_ready_ms,
      "cache_usable_ms": $ub_loaded_ms, "disk_bytes": $dump_bytes, "dump_msgs": $dump_msgs,
      "dump_ms": $dump_ms, "warm_noerror": $ub_warm_ok, "warm_passes": $ub_warm_n},
    "kresd": {$(srv_json kr kresd)
      "first_hit_ms": $(ms "$kr_first"), "cache_usable_ms": $(ms "$kr_first"),
      "disk_bytes": $kr_bytes, "data_mdb_allocated_kib": $kr_file,
      "warm_noerror": $kr_warm_ok, "warm_passes": $kr_warm_n},
    "dnsdist": {$(srv_json dd dnsdist)
      "backend": "unbound", "cpu_us_per_query_with_unbound": [$dd_x1, $dd_x2],
      "packet_cache_entries": $dd_size, "queries_to_unbound_warming": $dd_warm_fwd,
      "queries_to_unbound_measured": $dd_fwd, "queries_to_unbound_after_restart": $dd_fwd_restart,
      "first_answer_after_restart_ms": $(ms "$dd_first"), "cache_usable_ms": null,
      "disk_bytes": 0, "warm_noerror": $dd_warm_ok, "warm_passes": $dd_warm_n},
    "pdns_recursor": {$(srv_json pr pdns)
      "first_hit_ms": null, "cache_usable_ms": null, "disk_bytes": 0,
      "warm_noerror": $pr_warm_ok, "warm_passes": $pr_warm_n},
    "floor": {"qps_t1": $fl_q1, "qps_t2": $fl_q2, "qps_t1_rounds": [$(list floor.q1)],
      "qps_t2_rounds": [$(list floor.q2)], "cpu_us_per_query": [$fl_c1, $fl_c2],
      "cpu_us_per_query_rounds": [[$(list floor.cpu1)], [$(list floor.cpu2)]],
      "lost": [$fl_l1, $fl_l2], "lat1_p50_us": $fl_p50a, "lat1_p99_us": $fl_p99a,
      "lat16_p50_us": $fl_p50b, "lat16_p99_us": $fl_p99b}
  },
  "serve_over_floor": $fq1, "serve_cpu_over_floor": $fc1,
  "serve_over_floor_t2": $fq2, "serve_cpu_over_floor_t2": $fc2,
  "dnsnap_from_unbound_dump": {"load_ms": $ud_load_ms, "entries": ${ud_entries:-0},
                               "disk_bytes": $ud_bytes, "first_hit_ms": $(ms "$ud_first"),
                               "hits": $ud_kept},
  "ratio_qps_t1": $ratio1, "ratio_qps_t2": $ratio2,
  "best_peer_qps": ["$bestn1", "$bestn2"],
  "ratio_cpu_t1": $cratio1, "ratio_cpu_t2": $cratio2,
  "best_peer_cpu": ["$bestcn1", "$bestcn2"], "elapsed_s": $elapsed
}
EOF
cat "$md"
echo "(also $out/results.json; logs in $log)"
