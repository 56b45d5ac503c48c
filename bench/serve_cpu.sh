#!/bin/sh
# serve_cpu.sh: what `dnsnap serve` costs per answered query, split into user
# and kernel time, beside its queries per second (issue 13, item 6).
#
# A NAMES-entry resolver-demo snapshot (the Big Pineapple mix), every name of it
# in a shuffled dnsperf query file. Each VARIANT is a server started once on
# its own 127.0.0.1 port with --threads THREADS; then ROUNDS rounds, the
# variants in a rotating order within each, of dnsperf `-c 4 -T 1 -q 200` for
# SECONDS against each variant (cache hits from the map, UDP, no EDNS). Around
# each dnsperf run the server's utime and stime (all threads, /proc/PID/stat)
# and its context switches (/proc/PID/task/*/status) are read, and dnsperf's
# own CPU time; with SERVE_CPU_SYSCALLS=1, perf(1) and tracepoint access, the
# server's system calls are counted too (perf stat -e raw_syscalls:sys_enter;
# the tracepoint adds to the cost of each of them, so the CPU figures of such
# a run are a little higher than without it). Figures per answered
# query; the table gives the median of the rounds, the JSON every round.
# "busiest thread" is the share of the server's CPU time taken by its busiest
# thread: the kernel spreads dnsperf's 4 sockets over the SO_REUSEPORT
# sockets by a hash of their addresses, so that one worker may get 3 or all 4
# of them (a fresh draw each run), which moves the batch sizes and so the
# cost per query.
#
# Usage (from the repository root, after make all build/resolver_demo):
#   bench/serve_cpu.sh [BUILD] [LABEL=COMMAND]...
# COMMAND runs as `COMMAND serve SNAP --listen 127.0.0.1:PORT --threads N OPTS`,
# split on spaces, OPTS what follows a `|` in it: `base=build/dnsnap`,
# `x=env DNSNAP_X=1 /tmp/dnsnap`, `cpu0=taskset -c 0 build/dnsnap`,
# `one=build/dnsnap|--threads 1`. Default: dnsnap=BUILD/dnsnap.
# Environment: SERVE_CPU_SECONDS (10), SERVE_CPU_ROUNDS (3), SERVE_CPU_NAMES
# (100000), SERVE_CPU_THREADS (2), SERVE_CPU_CLIENT (dnsperf options, default
# "-c 4 -T 1 -q 200"), SERVE_CPU_OUT (BUILD/serve_cpu: results.md,
# results.json, logs/), SERVE_CPU_SYSCALLS (0; 1: count system calls).
#
# dnsperf runs on the same machine: on a 2-core VM it takes most of a core,
# so the q/s figure is a floor; the CPU per query is the server's own.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
secs=${SERVE_CPU_SECONDS:-10}
rounds=${SERVE_CPU_ROUNDS:-3}
names=${SERVE_CPU_NAMES:-100000}
threads=${SERVE_CPU_THREADS:-2}
client=${SERVE_CPU_CLIENT:--c 4 -T 1 -q 200}
syscalls=${SERVE_CPU_SYSCALLS:-0}
out=${SERVE_CPU_OUT:-$build/serve_cpu}
for c in dnsperf ss; do
	command -v $c >/dev/null || { echo "serve_cpu: needs $c"; exit 2; }
done
for f in dnsnap resolver_demo; do
	[ -x "$build/$f" ] || { echo "serve_cpu: $build/$f missing (make all $build/$f)"; exit 2; }
done
[ $# -gt 0 ] || set -- "dnsnap=$build/dnsnap"
mkdir -p "$out"
rm -rf "$out/logs"
mkdir -p "$out/logs"
log=$out/logs
tmp=$(mktemp -d /tmp/dnsnap-serve-cpu.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
hz=$(getconf CLK_TCK)
say() { printf '%s serve_cpu: %s\n' "$(date +%T)" "$*" >&2; }
if [ "$syscalls" = 1 ] && ! perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
	say "perf cannot count raw_syscalls:sys_enter here: no syscall counts"
	syscalls=0
fi

free_port() {
	while :; do
		p=$(shuf -i 20000-32767 -n 1) # below the ephemeral range (tests/e2e/lib.sh)
		[ -z "$(ss -Hlnut "( sport = :$p )")" ] && { echo "$p"; return; }
	done
}
# utime stime (clock ticks) of process $1, all its threads
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
# voluntary + involuntary context switches of all the threads of process $1
ctxsw() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/{s += $2} END{print s}'; }
# "TID ticks" per thread of process $1
thread_ticks() {
	for t in /proc/"$1"/task/*; do
		printf '%s ' "${t##*/}"
		sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}'
	done 2>/dev/null
}

"$build"/resolver_demo fill "$tmp/s.snap" "$names" >/dev/null
"$build"/dnsnap dump "$tmp/s.snap" --json |
	sed -n 's/^{"name":"\([^"]*\)","class":"IN","type":"\([A-Z0-9]*\)".*/\1 \2/p' |
	shuf >"$tmp/queries"

# start every variant: label, port, pid in $tmp/variants
: >"$tmp/variants"
labels=
for v; do
	label=${v%%=*}
	cmd=${v#*=}
	opts=
	case $cmd in *"|"*) opts=${cmd#*|} cmd=${cmd%%|*} ;; esac
	case $label in "" | *[!A-Za-z0-9_-]*) echo "serve_cpu: bad label in $v"; exit 2 ;; esac
	port=$(free_port)
	# shellcheck disable=SC2086 # COMMAND is split on purpose
	$cmd serve "$tmp/s.snap" --listen 127.0.0.1:$port --threads "$threads" $opts \
		2>"$log/$label-server.txt" &
	pid=$!
	pids="$pids $pid"
	i=0
	until grep -q 'listening on' "$log/$label-server.txt"; do
		i=$((i + 1))
		if [ $i -ge 200 ] || ! kill -0 $pid 2>/dev/null; then
			cat "$log/$label-server.txt"
			echo "serve_cpu: $label did not start"
			exit 1
		fi
		sleep 0.05
	done
	echo "$label $port $pid" >>"$tmp/variants"
	labels="$labels $label"
done
say "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $names names," \
	"${secs}s runs, $rounds rounds, dnsperf $client, variants:$labels"

# one dnsperf run against a variant: appends a line to $tmp/res/LABEL:
# round qps completed lost noerror% user_us sys_us cpu_us ctxsw client_us syscalls skew
mkdir -p "$tmp/res"
run() {
	label=$1 port=$2 pid=$3 r=$4
	f=$log/$label-r$r.txt
	# shellcheck disable=SC2046 # two numbers
	set -- $(ticks "$pid")
	u0=$1 s0=$2
	x0=$(ctxsw "$pid")
	thread_ticks "$pid" >"$tmp/t0"
	if [ "$syscalls" = 1 ]; then
		perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$tmp/perf" &
		pp=$!
		sleep 0.1
	fi
	# shellcheck disable=SC2086
	/usr/bin/time -f 'client %U %S' -o "$tmp/time" \
		dnsperf -s 127.0.0.1 -p "$port" -d "$tmp/queries" -l "$secs" $client >"$f" 2>&1 || true
	# shellcheck disable=SC2046 # two numbers
	set -- $(ticks "$pid")
	u1=$1 s1=$2
	x1=$(ctxsw "$pid")
	thread_ticks "$pid" >"$tmp/t1"
	# the busiest thread's share of the server's ticks
	sk=$(awk 'NR == FNR{a[$1] = $2; next} {d = $2 - a[$1]; s += d; if (d > m) m = d}
		END{printf "%.2f", (s > 0 ? m / s : 0)}' "$tmp/t0" "$tmp/t1")
	sc=-1
	if [ "$syscalls" = 1 ]; then
		kill -INT "$pp"
		wait "$pp" || true
		sc=$(awk -F, '/raw_syscalls:sys_enter/{print $1}' "$tmp/perf")
	fi
	q=$(sed -n 's/^ *Queries per second: *\([0-9.]*\).*/\1/p' "$f")
	d=$(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$f")
	l=$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' "$f")
	ok=$(sed -n 's/^ *Response codes:.*NOERROR [0-9]* (\([0-9.]*\)%).*/\1/p' "$f")
	cl=$(awk '/^client/{print $2 + $3}' "$tmp/time")
	awk -v r="$r" -v q="${q:-0}" -v d="${d:-0}" -v l="${l:-0}" -v ok="${ok:-0}" \
		-v u=$((u1 - u0)) -v s=$((s1 - s0)) -v x=$((x1 - x0)) -v hz="$hz" \
		-v cl="${cl:-0}" -v sc="${sc:-0}" -v sk="$sk" 'BEGIN{
		n = d > 0 ? d : 1
		printf "%d %.0f %d %d %s %.3f %.3f %.3f %.4f %.3f %s %s\n", r, q, d, l, ok,
			u * 1e6 / hz / n, s * 1e6 / hz / n, (u + s) * 1e6 / hz / n, x / n,
			cl * 1e6 / n, (sc < 0 ? "-" : sprintf("%.3f", sc / n)), sk
	}' >>"$tmp/res/$label"
}

order=$(awk '{print $1}' "$tmp/variants" | tr '\n' ' ')
r=1
while [ $r -le "$rounds" ]; do
	for label in $order; do
		# shellcheck disable=SC2046 # port and pid
		set -- $(awk -v l="$label" '$1 == l{print $2, $3}' "$tmp/variants")
		run "$label" "$1" "$2" "$r"
		say "round $r $label: $(tail -1 "$tmp/res/$label" |
			awk '{printf "%s q/s, user %s + kernel %s = %s us/query, %s syscalls/query, busiest thread %s", $2, $6, $7, $8, $11, $12}')"
	done
	first=${order%% *}
	order="${order#* } $first"
	r=$((r + 1))
done

# median of column $2 of $tmp/res/$1
med() { awk -v c="$2" '{print $c}' "$tmp/res/$1" | sort -g | awk '{a[NR] = $1} END{print a[int((NR + 1) / 2)]}'; }
# median over the rounds of (column $2 of variant $1) / (column $2 of the first
# variant) in the same round: the load of the machine moves both alike
base=${labels# }
base=${base%% *}
ratio() {
	paste -d' ' "$tmp/res/$base" "$tmp/res/$1" | awk -v c="$2" '{
		b = $c; v = $(c + 12); printf "%.3f\n", (b > 0 ? v / b : 0) }' |
		sort -g | awk '{a[NR] = $1} END{print a[int((NR + 1) / 2)]}'
}
{
	echo "dnsnap serve, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $names names," \
		"--threads $threads, dnsperf $client -l $secs, median of $rounds rounds"
	echo
	echo "| variant | q/s | user us/q | kernel us/q | server us/q | syscalls/q |" \
		"ctx switches/q | busiest thread | dnsperf us/q | lost | q/s ratio | server us/q ratio |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for label in $labels; do
		echo "| $label | $(med "$label" 2) | $(med "$label" 6) | $(med "$label" 7) |" \
			"$(med "$label" 8) | $(med "$label" 11) | $(med "$label" 9) | $(med "$label" 12) |" \
			"$(med "$label" 10) |" \
			"$(awk '{s += $4} END{print s}' "$tmp/res/$label") | $(ratio "$label" 2) |" \
			"$(ratio "$label" 8) |"
	done
	echo
	echo "Ratios: the median over the rounds of the variant's figure over $base's in the same round."
} >"$out/results.md"
{
	printf '{"date":"%s","cpus":%s,"names":%s,"threads":%s,"seconds":%s,"rounds":%s,' \
		"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$names" "$threads" "$secs" "$rounds"
	printf '"client":"dnsperf %s","variants":[' "$client"
	sep=
	for label in $labels; do
		printf '%s{"label":"%s","qps":%s,"user_us_per_query":%s,"kernel_us_per_query":%s,' \
			"$sep" "$label" "$(med "$label" 2)" "$(med "$label" 6)" "$(med "$label" 7)"
		printf '"cpu_us_per_query":%s,"syscalls_per_query":%s,"ctxsw_per_query":%s,' \
			"$(med "$label" 8)" "$(med "$label" 11 | sed 's/^-$/null/')" "$(med "$label" 9)"
		printf '"client_us_per_query":%s,"busiest_thread_share":%s,' \
			"$(med "$label" 10)" "$(med "$label" 12)"
		printf '"qps_ratio":%s,"cpu_ratio":%s,"rounds":[' "$(ratio "$label" 2)" "$(ratio "$label" 8)"
		awk 'BEGIN{ORS = ""} {if (NR > 1) print ","
			printf "{\"qps\":%s,\"completed\":%s,\"lost\":%s,\"noerror_pct\":%s,", $2, $3, $4, $5
			printf "\"user_us\":%s,\"kernel_us\":%s,\"cpu_us\":%s,", $6, $7, $8
			printf "\"ctxsw\":%s,\"client_us\":%s,", $9, $10
			printf "\"syscalls\":%s,", ($11 == "-" ? "null" : $11)
			printf "\"busiest_thread_share\":%s}", $12}' \
			"$tmp/res/$label"
		printf ']}'
		sep=,
	done
	printf ']}\n'
} >"$out/results.json"
cat "$out/results.md"
