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
#   3. ASK by hand: 20 names under the prefix "{ask}:" (a hash tag: their keys
#      share one slot), the slot set MIGRATING on its master and IMPORTING on
#      another, 10 keys moved there with MIGRATE: a reader gets all 20 from
#      Redis, the 10 through ASK (l2.ask 10, l2.moved 0: an ASK does not
#      change the slot map).
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

# settled NAME PID N: FWD's writes to Redis are done: none queued, at least N
settled() {
	_c=$(fwd_counters "$1" "$2")
	[ "$(jget "$_c" l2.write_queue)" = 0 ] && [ "$(jget "$_c" l2.writes)" -ge "$3" ] 2>/dev/null
}
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
wait_for 20 settled w "$w_pid" 2000
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
sed -n '301,1500p' "$tmp/names" >"$tmp/n2"
sed -n '1501,2000p' "$tmp/names" >"$tmp/n3"
c0=$(fwd_counters r "$r_pid")
perf "$r" "$tmp/n1" "$tmp/r1.out"
perf_ok "R, before the resharding" "$tmp/n1" "$tmp/r1.out"
# 1200 names at 500 q/s: the resharding runs under them
reshard "$p1" "$p2" 4000 "$tmp/reshard.log" &
rs_pid=$!
perf "$r" "$tmp/n2" "$tmp/r2.out"
wait "$rs_pid"
rc=$?
ok_if "redis-cli --cluster reshard moved 4000 slots from :$p1 to :$p2 (exit $rc), the cluster ok" \
	[ "$rc" = 0 ]
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/reshard.log" | tail -n 20
perf_ok "R, during the resharding" "$tmp/n2" "$tmp/r2.out"
perf "$r" "$tmp/n3" "$tmp/r3.out"
perf_ok "R, after it" "$tmp/n3" "$tmp/r3.out"
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
grep -c "Moving slot" "$tmp/reshard.log" | sed 's/^/# slots moved: /'

# ------------------------------------------------------------ 3. ASK by hand
mode up mode=answer
# shellcheck disable=SC2086
start_fwd aw "$tmp/aw.snap" $fargs --l2-prefix '{ask}:'
aw=$fwd_port
aw_pid=$fwd_pid
seq 1 20 | sed 's/.*/a&.ask.test A/' >"$tmp/ask"
perf "$aw" "$tmp/ask" "$tmp/ask.learn"
perf_ok "AW (--l2-prefix {ask}:) learns 20 names" "$tmp/ask" "$tmp/ask.learn"
wait_for 10 settled aw "$aw_pid" 20
slot=$(rcli "$p1" cluster keyslot '{ask}:')
src=$(slot_owner "$slot")
dst=$p1
[ "$src" = "$p1" ] && dst=$p2
resp "$src" scan '{ask}:*' >"$tmp/ask.keys"
ok_if "the 20 keys share slot $slot, on :$src ($(wc -l <"$tmp/ask.keys") there)" \
	[ "$(wc -l <"$tmp/ask.keys")" = 20 ]
# half migrated: IMPORTING on the destination first, then MIGRATING on the
# source (the order redis-cli --cluster follows), then 10 keys moved
rcli "$dst" cluster setslot "$slot" importing "$(node_id "$src")" >"$tmp/setslot" 2>&1
rcli "$src" cluster setslot "$slot" migrating "$(node_id "$dst")" >>"$tmp/setslot" 2>&1
# shellcheck disable=SC2046 # the keys: words
resp "$src" call MIGRATE 127.0.0.1 "$dst" "" 0 5000 KEYS \
	$(head -n 10 "$tmp/ask.keys" | sed 's/^/x:/') >>"$tmp/setslot" 2>&1
ok_if "slot $slot MIGRATING :$src -> IMPORTING :$dst, 10 of its keys moved \
($(redis_dbsize "$dst") keys at :$dst)" [ "$(tr -d '\r' <"$tmp/setslot" | tr '\n' ' ')" = "OK OK OK " ]
mode up mode=silent
# shellcheck disable=SC2086
start_fwd ar "$tmp/ar.snap" $fargs --l2-prefix '{ask}:'
ar=$fwd_port
ar_pid=$fwd_pid
c0=$(fwd_counters ar "$ar_pid")
perf "$ar" "$tmp/ask" "$tmp/ask.read"
perf_ok "AR (--l2-prefix {ask}:) asks them, upstream silent" "$tmp/ask" "$tmp/ask.read"
c1=$(fwd_counters ar "$ar_pid")
h=$(jgdelta "$c0" "$c1" l2.hits)
ak=$(jgdelta "$c0" "$c1" l2.ask)
mv=$(jgdelta "$c0" "$c1" l2.moved)
ok_if "AR: 20 hits from Redis (l2.hits +$h), 10 through ASK (l2.ask +$ak), no MOVED (+$mv)" \
	[ "$h" = 20 -a "$ak" = 10 -a "$mv" = 0 ]

for p in $w_pid $r_pid $aw_pid $ar_pid; do
	stop_fwd "$p"
	ok_if "dnsnap serve $p: SIGTERM, exit 0" [ $? -eq 0 ]
done
finish
