#!/bin/sh
# l2_cluster.sh: dnsnap serve --l2 redis-cluster://... against a Redis
# Cluster of 3 masters started here (issue 14), fakeup.py as the upstream.
#   1. W learns 2000 names: each written to the master that owns its key's
#      slot (every master holds keys, their DBSIZEs add up to the 2000, no
#      redirection needed: l2.moved and l2.ask 0).
#   2. The upstream silent from then on (only Redis can answer: an L2 miss is
#      a SERVFAIL). R, started before, asks the names while redis-cli --cluster
#      reshard moves 4000 slots and their keys from one master to another,
#      then the rest after it: every answer NOERROR with W's data, all from
#      Redis, and R followed MOVED (its slot map was the one before).
#   3. ASK by hand: ten slots holding a key each set MIGRATING on their
#      master and IMPORTING on another, half of the keys moved there with
#      MIGRATE: a reader started then gets all ten names from Redis, the five
#      moved through ASK (l2.ask 5, l2.moved 0: an ASK does not change the
#      slot map).
# --l2-wait 200: a loaded machine must not turn a slow reply into a miss.
#
# Usage (from the repository root): tests/e2e/l2_cluster.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need dig python3 dnsperf redis-server redis-cli "$build/dnsnap"
need_forwarder
"$build/dnsnap" serve --help 2>&1 | grep -q -- '--l2 ' ||
	bail "dnsnap serve has --l2 (its --help names it)"

start_redis_cluster 3
# shellcheck disable=SC2086 # $cluster_ports: words
set -- $cluster_ports
p1=$1
p2=$2
p3=$3
ok "a Redis Cluster of 3 masters: 127.0.0.1:$p1, :$p2, :$p3, every slot covered"
start_fakeup up --mode answer --ttl 3600 --addr 192.0.2.44
url="redis-cluster://127.0.0.1:$p1,127.0.0.1:$p2"
fargs="--listen 127.0.0.1:0 --upstream 127.0.0.1:$fk_port --upstream-timeout 300
	--upstream-tries 1 --l2 $url --l2-wait 200"

# perf PORT FILE OUT: dnsperf through FILE's questions once, at 500 q/s; the
# check of its report: all completed, none lost, every reply NOERROR
perf() {
	dnsperf -s 127.0.0.1 -p "$1" -d "$2" -n 1 -c 4 -Q 500 -t 3 >"$3" 2>&1
}
perf_ok() {
	_n=$(wc -l <"$2")
	_done=$(sed -n 's/^ *Queries completed: *\([0-9][0-9]*\).*/\1/p' "$3")
	_lost=$(sed -n 's/^ *Queries lost: *\([0-9][0-9]*\).*/\1/p' "$3")
	_codes=$(sed -n 's/^ *Response codes: *//p' "$3")
	ok_if "$1: $_n questions, ${_done:-none} completed, ${_lost:-none} lost: $_codes" \
		[ "${_done:-0}" = "$_n" -a "${_lost:-x}" = 0 -a "$_codes" = "NOERROR $_n (100.00%)" ]
}
# dbsizes: the keys of each master, "N N N"
dbsizes() { echo "$(redis_dbsize "$p1") $(redis_dbsize "$p2") $(redis_dbsize "$p3")"; }

# ------------------------------------------------- 1. W writes, slot by slot
# shellcheck disable=SC2086 # $fargs: words
start_fwd w "$tmp/w.snap" $fargs
w=$fwd_port
w_pid=$fwd_pid
# R starts now and learns the slot map as it is before the resharding
# shellcheck disable=SC2086
start_fwd r "$tmp/r.snap" $fargs
r=$fwd_port
r_pid=$fwd_pid
seq 1 2000 | sed 's/.*/c&.cluster.test A/' >"$tmp/names"
perf "$w" "$tmp/names" "$tmp/learn.out"
perf_ok "W learns the names" "$tmp/names" "$tmp/learn.out"
poll_for 20 l2_settled w "$w_pid" 2000
c=$(fwd_counters w "$w_pid")
ok_if "W: 2000 writes ($(jget "$c" l2.writes)), no error ($(jget "$c" l2.write_errors)), \
no drop ($(jget "$c" l2.write_drops))" [ "$(jget "$c" l2.writes)" = 2000 -a \
	"$(jget "$c" l2.write_errors)" = 0 -a "$(jget "$c" l2.write_drops)" = 0 ]
ok_if "W: each key sent to its slot's master (l2.moved $(jget "$c" l2.moved), \
l2.ask $(jget "$c" l2.ask)), connected to the 3 (l2.nodes $(jget "$c" l2.nodes))" \
	[ "$(jget "$c" l2.moved)" = 0 -a "$(jget "$c" l2.ask)" = 0 -a "$(jget "$c" l2.nodes)" = 3 ]
# shellcheck disable=SC2046 # the three sizes: words
set -- $(dbsizes)
ok_if "every master holds keys ($1 $2 $3), 2000 in all" \
	[ "${1:-0}" -gt 0 -a "${2:-0}" -gt 0 -a "${3:-0}" -gt 0 -a $(($1 + $2 + $3)) = 2000 ]
before="$1 $2 $3"

# -------------------------------------------------- 2. resharding, followed
mode up mode=silent
qseen=$(wc -l <"$tmp/up.qlog")
head -n 300 "$tmp/names" >"$tmp/n1"
c0=$(fwd_counters r "$r_pid")
perf "$r" "$tmp/n1" "$tmp/r1.out"
perf_ok "R, before the resharding" "$tmp/n1" "$tmp/r1.out"
# the other 1700 names in batches of 100 (0.2 s each at 500 q/s): batches go
# as long as the resharding runs, the last 300 names after it has ended
sed -n '301,2000p' "$tmp/names" | split -l 100 -d -a 2 - "$tmp/batch."
reshard "$p1" "$p2" 4000 "$tmp/reshard.log" &
rs_pid=$!
rc=none
left=17
: >"$tmp/during"
: >"$tmp/after"
for b in "$tmp"/batch.[0-9][0-9]; do
	if [ "$rc" = none ] && { [ "$left" -le 3 ] || ! running "$rs_pid"; }; then
		wait "$rs_pid"
		rc=$?
	fi
	phase=during
	[ "$rc" = none ] || phase=after
	perf "$r" "$b" "$b.out"
	# a batch's line: questions completed lost codes
	echo "$(wc -l <"$b") $(sed -n 's/^ *Queries completed: *\([0-9]*\).*/\1/p' "$b.out") \
$(sed -n 's/^ *Queries lost: *\([0-9]*\).*/\1/p' "$b.out") \
$(sed -n 's/^ *Response codes: *//p' "$b.out")" >>"$tmp/$phase"
	left=$((left - 1))
done
ok_if "redis-cli --cluster reshard moved 4000 slots from :$p1 to :$p2 (exit $rc), the cluster ok" \
	[ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/reshard.log" | tail -n 20
# batch_ok PHASE: every batch of PHASE completed, none lost, all NOERROR
batch_ok() {
	_nb=$(wc -l <"$tmp/$1")
	_bad=$(awk '!($1 == $2 && $3 == 0 && $4 == "NOERROR" && $5 == $1 && NF == 6)' "$tmp/$1" | wc -l)
	ok_if "R, $1 the resharding: $_nb batches of 100, each completed, none lost, all NOERROR \
($_bad not)" [ "$_nb" -gt 0 -a "$_bad" = 0 ]
	[ "$_bad" = 0 ] || sed 's/^/#   /' "$tmp/$1" | head -n 5
}
batch_ok during
batch_ok after
c1=$(fwd_counters r "$r_pid")
# shellcheck disable=SC2046
set -- $(dbsizes)
ok_if "the keys moved with the slots ($before, now $1 $2 $3)" \
	[ "$1" -lt "${before%% *}" -a $(($1 + $2 + $3)) = 2000 ]
h=$(jdelta "$c0" "$c1" hits_l2)
lh=$(jgdelta "$c0" "$c1" l2.hits)
mv=$(jgdelta "$c0" "$c1" l2.moved)
ok_if "R: the 2000 answers from Redis (hits_l2 +$h, l2.hits +$lh), MOVED followed (l2.moved +$mv)" \
	[ "$h" = 2000 -a "$lh" = 2000 -a "$mv" -gt 0 ] 2>/dev/null
ok_if "the upstream was asked nothing ($(($(wc -l <"$tmp/up.qlog") - qseen)) queries)" \
	[ "$(wc -l <"$tmp/up.qlog")" = "$qseen" ]

# ------------------------------------------------------------ 3. ASK by hand
# ten slots that hold a key of W's (no two of W's keys share a slot: CRC16
# spreads keys that differ in a few bytes), each set MIGRATING on its master
# and IMPORTING on the next one (the order redis-cli --cluster follows), the
# keys of every other one moved with MIGRATE: half the keys migrated. A
# reader started then has the slot map that names the old masters: a GET of
# a moved key gets -ASK there, then ASKING + GET on the new one; the others
# are answered where they are. The slot map does not change: no MOVED.
for p in $cluster_ports; do
	resp "$p" scan 'dnsnap:*'
done | python3 tests/helpers/resp.py slot | sort -n | head -n 10 >"$tmp/slots"
cut -d' ' -f2 "$tmp/slots" >"$tmp/ask.keys"
: >"$tmp/ask.moved"
: >"$tmp/setslot"
k=0
while read -r slot key; do
	k=$((k + 1))
	src=$(slot_owner "$slot")
	dst=$(echo "$cluster_ports $cluster_ports" | tr ' ' '\n' | grep -A1 -x "$src" | sed -n 2p)
	{
		rcli "$dst" cluster setslot "$slot" importing "$(node_id "$src")"
		rcli "$src" cluster setslot "$slot" migrating "$(node_id "$dst")"
		if [ $((k % 2)) = 1 ]; then
			resp "$src" call MIGRATE 127.0.0.1 "$dst" "x:$key" 0 5000
			echo "$key" >>"$tmp/ask.moved"
		fi
	} >>"$tmp/setslot" 2>&1 </dev/null
done <"$tmp/slots"
nk=$(wc -l <"$tmp/ask.keys")
nm=$(wc -l <"$tmp/ask.moved")
ok_if "$nk slots MIGRATING, $nm of their $nk keys moved to the IMPORTING master" \
	[ "$nk" = 10 -a "$nm" = 5 -a "$(grep -cvx OK "$tmp/setslot")" = 0 ]
grep -vx OK "$tmp/setslot" | head -n 5 | sed 's/^/#   /'
# the names of those keys (cN, a label of its own in each key)
python3 -c 'import re, sys
for k in sys.stdin.read().split():
    print(re.search(rb"(c[0-9]+)", bytes.fromhex(k)).group(1).decode() + ".cluster.test A")' \
	<"$tmp/ask.keys" >"$tmp/ask"
# shellcheck disable=SC2086
start_fwd ar "$tmp/ar.snap" $fargs
ar=$fwd_port
ar_pid=$fwd_pid
c0=$(fwd_counters ar "$ar_pid")
perf "$ar" "$tmp/ask" "$tmp/ask.read"
perf_ok "AR asks the names of those slots' keys, upstream silent" "$tmp/ask" "$tmp/ask.read"
c1=$(fwd_counters ar "$ar_pid")
h=$(jgdelta "$c0" "$c1" l2.hits)
ak=$(jgdelta "$c0" "$c1" l2.ask)
mv=$(jgdelta "$c0" "$c1" l2.moved)
ok_if "AR: $nk hits from Redis (l2.hits +$h), the $nm moved through ASK (l2.ask +$ak), no MOVED (+$mv)" \
	[ "$h" = "$nk" -a "$ak" = "$nm" -a "$mv" = 0 ]
ok_if "the upstream was asked nothing ($(($(wc -l <"$tmp/up.qlog") - qseen)) queries)" \
	[ "$(wc -l <"$tmp/up.qlog")" = "$qseen" ]

for p in $w_pid $r_pid $ar_pid; do
	stop_fwd "$p"
	ok_if "dnsnap serve $p: SIGTERM, exit 0" [ $? -eq 0 ]
done
finish
