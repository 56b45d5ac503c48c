#!/bin/sh
# bench/deploy/run.sh: the deploy benchmark (issue 12): what a restart costs a
# cache's clients. A fixed-rate stream of queries with Zipf popularity runs
# through each server while it is restarted, and the seconds around the
# restart are measured: sent, answered, lost, hit ratio, latency p50 and p99.
#
# Usage (from the repository root; `make bench-deploy` builds and runs it):
#   bench/deploy/run.sh [BUILD] [NAMES]
# Environment: DEPLOY_RATE (queries per second of the stream, default 20000),
# DEPLOY_SECONDS (each steady-state dnsperf run, default 10), DEPLOY_ROUNDS
# (default 3), DEPLOY_SYSTEMS (default "dnsnap dnsnap-deploy dnsdist unbound
# kresd"; dnsnap's are left out when this dnsnap serve has no --upstream),
# DEPLOY_OUT (results and logs, default BUILD/deploy), DEPLOY_DNSNAP_ARGS (more
# options of every dnsnap serve: --deploy-wait 0 shows a deploy that does not
# ask the old process to publish first).
#
# The servers, all on 127.0.0.1, each with 2 threads (or 2 processes):
#   NSD       authoritative for the bench zone: NAMES names of the Big Pineapple
#             mix in the root zone (bench/peers/mkzone.c; TTLs >= 3600 s);
#   Unbound   stub-zone "." to NSD, iterator only (as in bench/peers/run.sh);
#   (a)  dnsnap serve SNAP --upstream Unbound;
#   (a') the same, deployed the two-process way (below);
#   (b)  Unbound alone;
#   (c)  Knot Resolver alone (two kresd processes, FORWARD to NSD, LMDB cache);
#   (d)  dnsdist with a packet cache (200,000 entries) in front of Unbound.
# Each is warmed by dnsperf asking every name once through it; dnsnap then
# publishes SNAP (SIGUSR2), as its periodic snapshot would.
#
# 1. Steady state: ROUNDS rounds, the servers in a rotating order within each:
#    dnsperf -c 4 -T 1 -q 200 for SECONDS over every name (all cached: hit
#    throughput), and the server's CPU time (utime + stime from /proc/PID/stat
#    of its process or processes, not of what is behind it) per answered query.
#    The table gives medians.
# 2. Restarts, one server at a time, in the order dnsnap, dnsnap-deploy,
#    dnsdist, unbound, kresd (dnsdist before Unbound: Unbound's restart empties
#    the cache behind dnsdist). BUILD/deploy_zipfload (zipfload.c) sends RATE
#    q/s over the names, Zipf s = 1, from 5 s before the restart to 11 s
#    after, and counts per second of send time (t = 0: the second that starts
#    with the restart): sent, answered (within 2 s), lost, p50, p99. The
#    restart:
#      dnsnap, dnsdist, unbound, kresd: SIGTERM, wait until the process is
#      gone (dnsnap publishes SNAP on SIGTERM), start it again at once;
#      dnsnap-deploy: first the old dnsnap publishes (SIGUSR2, its periodic
#      snapshot) and then learns a fifth of the names it had never been asked
#      (every fifth, spread over the popularity ranks; dnsnap's other runs
#      leave them out): in memory, not in SNAP; then the stream over every
#      name, and the restart: start the new dnsnap (SO_REUSEPORT, the same
#      address; it asks the old one to publish before it maps SNAP), wait for
#      its "ready" log line, SIGTERM the old one and wait until it is gone (it
#      hands new queries to the new one, answers those it holds, publishes
#      SNAP); the new one takes that snapshot in by itself (it watches SNAP,
#      within a second).
#    Hit ratio, the same way for all: tcpdump counts the queries (QR = 0,
#    `udp[10] & 0x80 = 0`) that reach the component behind the restarted one
#    (dnsnap, dnsdist: Unbound's port; Unbound, kresd: NSD's port), per second,
#    and hit ratio = 1 - those queries / the queries the client sent in that
#    second. That takes one upstream query per miss: true of dnsnap and of
#    dnsdist; Unbound and kresd may send more than one for a miss (none of
#    the names needs more than one here: no delegations, no CNAMEs), so for
#    them it is a floor.
# 3. With dnsnap: bench/deploy/pause.sh, the longest answer pause while dnsnap
#    writes a snapshot of DEPLOY_PAUSE_ENTRIES (default 1,000,000; 0: none)
#    in-memory entries, into DEPLOY_OUT/pause/.
# Output: a table per server on stdout (DEPLOY_OUT/results.md) and one JSON
# object (DEPLOY_OUT/results.json); bench/deploy/report.py makes both.
#
# The clients (dnsperf, zipfload, tcpdump) run on the same machine as the
# servers and share its cores: on a 2-core machine, shared with other work,
# every figure is a floor and latencies include the clients' waits for a core.
set -eu
build=${1:-build}
names=${2:-100000}
rate=${DEPLOY_RATE:-20000}
secs=${DEPLOY_SECONDS:-10}
rounds=${DEPLOY_ROUNDS:-3}
systems=${DEPLOY_SYSTEMS:-dnsnap dnsnap-deploy dnsdist unbound kresd}
out=${DEPLOY_OUT:-$build/deploy}
pre=5   # seconds of the stream before the restart
post=11 # ...and after it
for c in dnsperf nsd unbound unbound-control kresd dnsdist tcpdump dig ss python3; do
	command -v $c >/dev/null || { echo "deploy: needs $c (make bench-deploy installs it)"; exit 2; }
done
for f in dnsnap peers_mkzone deploy_zipfload; do
	[ -x "$build/$f" ] || { echo "deploy: $build/$f missing (make bench-deploy builds it)"; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/logs" "$out/runs"
mkdir -p "$out/logs" "$out/runs"
log=$out/logs
runs=$out/runs
tmp=$(mktemp -d /tmp/dnsnap-deploy.XXXXXX)
pids=
. "$(dirname "$0")/../lib.sh" # free_port, wait_udp, stop, nsd_start
cleanup() {
	for p in $pids; do stop "$p"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t_start=$(date +%s)
say() { printf '%s deploy: %s\n' "$(date +%T)" "$*" >&2; }

if ! "$build/dnsnap" serve --help 2>&1 | grep -q -- --upstream; then
	say "this dnsnap serve has no --upstream: dnsnap left out"
	systems=$(echo "$systems" | tr ' ' '\n' | grep -v '^dnsnap' | tr '\n' ' ')
fi
has() { case " $systems " in *" $1 "*) return 0 ;; esac; return 1; }
has_dnsnap() { has dnsnap || has dnsnap-deploy; }

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
# CPU time (clock ticks) of the processes PIDS so far, all their threads.
cpu_ticks() {
	for p; do cat /proc/$p/stat; done | sed 's/.*) //' | awk '{s += $12 + $13} END{print s}'
}
hz=$(getconf CLK_TCK)
now() { date +%s.%N; }
# Every name (of FILE, default all of them) once, one dnsperf pass: prints
# "noerror total"
pass() {
	dnsperf -s 127.0.0.1 -p "$2" -d "${3:-$tmp/queries}" -e -n 1 -c 4 -T 1 -q 100 \
		>"$log/$1.txt" 2>&1 || true
	c=$(sed -n 's/^ *Response codes:.*NOERROR \([0-9]*\) .*/\1/p' "$log/$1.txt")
	t=$(sed -n 's/^ *Queries sent: *\([0-9]*\).*/\1/p' "$log/$1.txt")
	echo "${c:-0} ${t:-0}"
}

# ---------------------------------------------------------------- machine
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
v_commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cat >"$out/meta.env" <<EOF
date=$date_utc
names=$names
rate=$rate
secs=$secs
rounds=$rounds
pre=$pre
post=$post
systems=$systems
nproc=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
v_dnsnap=$v_commit
v_unbound=$(unbound -V | sed -n 's/^Version //p')
v_kresd=$(kresd --version | sed -n 's/.*version //p')
v_dnsdist=$(dnsdist --version 2>&1 | sed -n 's/^dnsdist \([^ ]*\).*/\1/p')
v_nsd=$(nsd -v 2>&1 | sed -n 's/^NSD version //p')
v_dnsperf=$(dnsperf -h 2>&1 | sed -n 's/^Version //p')
dnsnap_args=${DEPLOY_DNSNAP_ARGS:-}
EOF
say "$date_utc, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $names names," \
	"$rate q/s; servers: $systems"

# ---------------------------------------------------------------- servers
AUTH=$(free_port)
"$build/peers_mkzone" "$names" "$tmp/root.zone" "$tmp/queries"
# dnsnap learns every fifth name (spread over the popularity ranks) only
# after its last publish, just before the two-process deploy: the deploy is
# warm with them only if the new process gets what the old one learnt since
# (it asks it to publish first); dnsnap's other runs use the rest
awk 'NR % 5 == 0' "$tmp/queries" >"$tmp/late"
awk 'NR % 5 != 0' "$tmp/queries" >"$tmp/early"
nsd_start "." "$tmp/root.zone" "$AUTH" "$log/nsd.log" . SOA
say "NSD serves $(wc -l <"$tmp/root.zone") zone lines on port $AUTH"

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
	control-enable: no
stub-zone:
	name: "."
	stub-addr: 127.0.0.1@$AUTH
EOF
start_unbound() {
	unbound -d -c "$tmp/unbound/unbound.conf" 2>>"$log/unbound.log" &
	ub_pid=$!
	pids="$pids $ub_pid"
}
start_unbound
wait_udp "$UB" 2
set -- $(pass unbound-warm "$UB")
say "Unbound on port $UB: $1/$names NOERROR while warming"

# Knot Resolver: FORWARD, not STUB (see bench/peers/run.sh: kresd 5.6 keeps a
# STUB answer for cache.min_ttl only).
KR=$(free_port)
if has kresd; then
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
	start_kresd() {
		kr_pids=
		for _ in 1 2; do
			kresd -n -c "$tmp/kresd/config" "$tmp/kresd/run" >>"$log/kresd.log" 2>&1 &
			kr_pids="$kr_pids $!"
		done
		pids="$pids $kr_pids"
	}
	start_kresd
	wait_udp "$KR" 2
	set -- $(pass kresd-warm "$KR")
	say "kresd on port $KR: $1/$names NOERROR while warming"
fi

# dnsdist: two UDP listeners on one address (SO_REUSEPORT), a packet cache
# big enough for every name, Unbound behind it. The backend is declared up,
# so that no health-check query reaches Unbound's port (where the hit ratio
# of dnsnap and dnsdist is counted).
DD=$(free_port)
if has dnsdist; then
	mkdir -p "$tmp/dnsdist"
	cat >"$tmp/dnsdist/dnsdist.conf" <<EOF
setLocal('127.0.0.1:$DD', { reusePort = true, tcpListenQueueSize = 0 })
addLocal('127.0.0.1:$DD', { reusePort = true })
setACL({ '127.0.0.0/8' })
setSecurityPollSuffix('')
srv = newServer({ address = '127.0.0.1:$UB' })
srv:setUp()
pc = newPacketCache(200000, { maxTTL = 86400, minTTL = 0, numberOfShards = 16 })
getPool(''):setCache(pc)
EOF
	start_dnsdist() {
		dnsdist --supervised --disable-syslog -C "$tmp/dnsdist/dnsdist.conf" \
			>>"$log/dnsdist.log" 2>&1 &
		dd_pid=$!
		pids="$pids $dd_pid"
	}
	start_dnsdist
	wait_udp "$DD" 2
	set -- $(pass dnsdist-warm "$DD")
	say "dnsdist on port $DD: $1/$names NOERROR while warming"
fi

# dnsnap serve --upstream Unbound
DN=$(free_port)
snap=$tmp/dnsnap.snap
dn_n=0
start_dnsnap() {
	dn_n=$((dn_n + 1))
	# shellcheck disable=SC2086 # DEPLOY_DNSNAP_ARGS: words
	"$build/dnsnap" serve "$snap" --listen "127.0.0.1:$DN" --upstream "127.0.0.1:$UB" \
		--threads 2 ${DEPLOY_DNSNAP_ARGS:-} 2>"$log/dnsnap-$dn_n.log" &
	dn_pid=$!
	pids="$pids $dn_pid"
}
if has_dnsnap; then
	start_dnsnap
	wait_line "$log/dnsnap-$dn_n.log" "ready: answering" "$dn_pid"
	set -- $(pass dnsnap-warm "$DN" "$tmp/early")
	say "dnsnap on port $DN: $1/$2 NOERROR while warming (all but the late fifth)"
	# SNAP as the periodic snapshot (--snapshot-every) would leave it: published
	# once the cache is warm, so that a new process of a deploy starts warm
	# even when run without the plain restart before it
	kill -USR2 "$dn_pid"
	wait_line "$log/dnsnap-$dn_n.log" "published (SIGUSR2)" "$dn_pid"
fi

# ---------------------------------------------------------------- 1. steady state
# One line per run in $runs/steady.txt: server round q/s completed lost cpu_ticks
order=
for n in dnsnap unbound kresd dnsdist; do
	case $n in dnsnap) has_dnsnap || continue ;; *) has $n || continue ;; esac
	order="$order $n"
done
order=${order# }
r=1
while [ $r -le "$rounds" ]; do
	for n in $order; do
		case $n in
		dnsnap) port=$DN sp=$dn_pid ;;
		unbound) port=$UB sp=$ub_pid ;;
		kresd) port=$KR sp=$kr_pids ;;
		dnsdist) port=$DD sp=$dd_pid ;;
		esac
		c0=$(cpu_ticks $sp)
		qf=$tmp/queries
		[ "$n" = dnsnap ] && qf=$tmp/early # all cached: its hit throughput too
		dnsperf -s 127.0.0.1 -p "$port" -d "$qf" -e -c 4 -T 1 -q 200 -l "$secs" \
			>"$log/$n-steady-$r.txt" 2>&1 || true
		c1=$(cpu_ticks $sp)
		f=$log/$n-steady-$r.txt
		q=$(sed -n 's/^ *Queries per second: *\([0-9.]*\).*/\1/p' "$f")
		d=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$f")
		l=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' "$f")
		ok=$(sed -n 's/^ *Response codes:.*NOERROR \([0-9]*\) .*/\1/p' "$f")
		echo "$n $r ${q:-0} ${d:-0} ${l:-0} ${ok:-0} $((c1 - c0)) $hz" >>"$runs/steady.txt"
		say "round $r, $n: ${q:-0} q/s, $((c1 - c0)) ticks of CPU for ${d:-0} answers"
	done
	order="${order#* } ${order%% *}"
	r=$((r + 1))
done

# ---------------------------------------------------------------- 2. restarts
# run NAME PORT CAPTURE_PORT [QUERIES]: the stream through PORT over QUERIES
# (default every name), the restart (restart_NAME) at t = 0, tcpdump on
# CAPTURE_PORT; $runs/NAME.jsonl, NAME.pcap, NAME.env.
run() {
	n=$1 port=$2 cport=$3 qfile=${4:-$tmp/queries}
	tcpdump -i lo -B 65536 -w "$runs/$n.pcap" "udp dst port $cport and udp[10] & 0x80 = 0" \
		2>"$log/tcpdump-$n.log" &
	td=$!
	pids="$pids $td"
	wait_line "$log/tcpdump-$n.log" 'listening on'
	u0=$(udp_errors)
	origin=$(awk -v t="$(now)" -v p="$pre" 'BEGIN{printf "%.3f", t + p}')
	"$build/deploy_zipfload" 127.0.0.1 "$port" "$qfile" -r "$rate" -l $((pre + post)) \
		-o "$origin" >"$runs/$n.jsonl" 2>"$log/zipfload-$n.log" &
	zl=$!
	pids="$pids $zl"
	# sleep until the origin
	sleep "$(awk -v o="$origin" -v t="$(now)" 'BEGIN{d = o - t; printf "%.3f", (d > 0 ? d : 0)}')"
	t0=$(now)
	"restart_$(echo "$n" | tr - _)"
	t1=$(now)
	wait $zl
	u1=$(udp_errors)
	sleep 2 # tcpdump hands over its buffer in blocks; the last one after a while
	kill -INT $td
	wait $td || true
	cat >"$runs/$n.env" <<EOF
origin=$origin
restart_begin=$t0
restart_end=$t1
down_ms=${down_ms:-null}
udp_noports=$((${u1% *} - ${u0% *}))
udp_rcvbuf_errors=$((${u1#* } - ${u0#* }))
tcpdump=$(grep -h 'captured\|dropped' "$log/tcpdump-$n.log" | tr '\n' ';')
zipfload=$(cat "$log/zipfload-$n.log")
EOF
	say "$n: $(cat "$log/zipfload-$n.log" | sed 's/^zipfload: //')"
}
# The machine's UDP counters (every socket, not only ours): "NoPorts RcvbufErrors".
# NoPorts: datagrams to a port nobody listens on (a restart's gap); RcvbufErrors:
# datagrams dropped because a socket's receive buffer was full (a server or the
# client behind on its reading).
udp_errors() {
	awk '/^Udp:/ && n++ {print $3, $6}' /proc/net/snmp
}
# Each restart sets down_ms: from the SIGTERM to the new process's sockets
# listening (none for the two-process deploy: the address never goes unserved).
ms_since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", (b - a) * 1000}'; }
restart_dnsnap() {
	a=$(now)
	stop "$dn_pid"
	start_dnsnap
	wait_udp "$DN" 1
	down_ms=$(ms_since "$a")
	wait_line "$log/dnsnap-$dn_n.log" "ready: answering" "$dn_pid"
}
# Before the deploy: the periodic publish, then names learnt after it (the
# late fifth), which the new process must get from the old one.
teach_late() {
	kill -USR2 "$dn_pid"
	wait_line "$log/dnsnap-$dn_n.log" "published (SIGUSR2)" "$dn_pid"
	set -- $(pass dnsnap-late "$DN" "$tmp/late")
	say "dnsnap-deploy: published, then learnt $1/$2 more names (not in SNAP)"
}
restart_dnsnap_deploy() {
	old=$dn_pid
	a=$(now)
	start_dnsnap
	wait_line "$log/dnsnap-$dn_n.log" "ready: answering" "$dn_pid"
	say "dnsnap-deploy: the new dnsnap ready $(ms_since "$a") ms after its start"
	stop "$old"
	down_ms=null
}
restart_dnsdist() {
	a=$(now)
	stop "$dd_pid"
	start_dnsdist
	wait_udp "$DD" 1
	down_ms=$(ms_since "$a")
}
restart_unbound() {
	a=$(now)
	stop "$ub_pid"
	start_unbound
	wait_udp "$UB" 1
	down_ms=$(ms_since "$a")
}
restart_kresd() {
	a=$(now)
	for p in $kr_pids; do stop "$p"; done
	start_kresd
	wait_udp "$KR" 1
	down_ms=$(ms_since "$a")
}
for n in dnsnap dnsnap-deploy dnsdist unbound kresd; do
	has $n || continue
	case $n in
	dnsnap) run dnsnap "$DN" "$UB" "$tmp/early" ;;
	dnsnap-deploy) teach_late && run dnsnap-deploy "$DN" "$UB" ;;
	dnsdist) run dnsdist "$DD" "$UB" ;;
	unbound) run unbound "$UB" "$AUTH" ;;
	kresd) run kresd "$KR" "$AUTH" ;;
	esac
done

# ---------------------------------------------------------------- 3. snapshot pause
# pause.sh: its own NSD (a wildcard zone) and dnsnap serve, the others stopped
if has_dnsnap && [ "${DEPLOY_PAUSE_ENTRIES:-1000000}" -gt 0 ]; then
	for p in $pids; do stop "$p"; done
	pids=
	PAUSE_OUT=$out/pause PAUSE_RATE=$rate "$here/pause.sh" "$build" \
		"${DEPLOY_PAUSE_ENTRIES:-1000000}" >"$log/pause.txt" || say "pause.sh failed"
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/meta.env"
echo "elapsed_s=$(($(date +%s) - t_start))" >>"$out/meta.env"
python3 "$here/report.py" "$out"
