#!/bin/sh
# forward_deploy.sh: the two-process deploy of dnsnap serve --upstream under
# a steady flood, losing no query and no cache.
#
# A serves 127.0.0.1:PORT in front of a fake upstream (fakeup.py) and
# learns two sets of names: the flood's, and some asked of A alone. dnsperf
# sends ~2000 q/s for 10 s over the flood's names, from 8 sockets (so that
# SO_REUSEPORT spreads them over both processes). Meanwhile B starts with the
# same arguments (the same PORT, the same SNAP), logs ready, and A gets
# SIGTERM: it publishes SNAP and exits 0. dnsperf must lose no query and get
# NOERROR only; B must have answered part of the flood; and, the upstream
# made silent, B must answer the names only A had learned, from A's
# snapshot, which B takes in by itself (polled, at most 10 s).
#
# Usage (from the repository root): tests/e2e/forward_deploy.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need dig python3 dnsperf "$build/dnsnap"
need_forwarder

start_fakeup u --mode answer --ttl 3600 --addr 192.0.2.9
up=$fk_port
port=$(free_port)
snap=$tmp/deploy.snap
args="--listen 127.0.0.1:$port --upstream 127.0.0.1:$up --upstream-timeout 500
	--upstream-tries 2 --snapshot-every 300"
# shellcheck disable=SC2086 # $args: words
start_fwd A "$snap" $args
a_pid=$fwd_pid
ok "A: dnsnap serve on 127.0.0.1:$port, fakeup on $up"

# the flood's names, and those only A learns
seq 1 300 | sed 's/.*/f&.deploy.test A/' >"$tmp/flood"
seq 1 50 | sed 's/.*/a&.deploy.test A/' >"$tmp/only_a"
cat "$tmp/flood" "$tmp/only_a" >"$tmp/learn"
dig @127.0.0.1 -p "$port" +tries=1 +time=3 -f "$tmp/learn" >"$tmp/learn.out" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/learn.out")
ok_if "A learns the 350 names ($n NOERROR)" [ "$n" -eq 350 ]

dnsperf -s 127.0.0.1 -p "$port" -d "$tmp/flood" -c 8 -l 10 -Q 2000 -t 3 \
	>"$tmp/dnsperf.out" 2>&1 &
perf_pid=$!
e2e_procs="$e2e_procs $perf_pid"
sleep 2 # the flood runs against A alone for a while
# shellcheck disable=SC2086
start_fwd B "$snap" $args
b_pid=$fwd_pid
ok "B: started beside A on the same port, ready"
sleep 2 # and against both
kill -TERM "$a_pid"
wait "$a_pid"
rc=$?
ok_if "A: SIGTERM, exit 0 ($rc)" [ "$rc" -eq 0 ]
ok_if "A: published $snap" [ -s "$snap" ]
wait "$perf_pid"
rc=$?
sed -n 's/^ *\(Queries [a-z]*\|Response codes\): */\1: /p' "$tmp/dnsperf.out" | sed 's/^/# /'
lost=$(sed -n 's/^ *Queries lost: *\([0-9][0-9]*\).*/\1/p' "$tmp/dnsperf.out")
done_=$(sed -n 's/^ *Queries completed: *\([0-9][0-9]*\).*/\1/p' "$tmp/dnsperf.out")
codes=$(sed -n 's/^ *Response codes: *//p' "$tmp/dnsperf.out")
ok_if "dnsperf ran (exit $rc) and completed over 10000 queries (${done_:-none})" \
	[ "$rc" -eq 0 -a "${done_:-0}" -gt 10000 ]
ok_if "the deploy under the flood: Queries lost: ${lost:-none}" [ "${lost:-x}" = 0 ]
all_noerror=no
case "$codes" in "NOERROR "*"(100.00%)") all_noerror=yes ;; esac
ok_if "every reply NOERROR ($codes)" [ "$all_noerror" = yes ]
c=$(fwd_counters B "$b_pid")
bq=$(jnum "$c" queries)
ok_if "B answered part of the flood ($bq queries)" [ "${bq:-0}" -gt 0 ] 2>/dev/null

# the names only A learned, from B, the upstream silent: once B took in
# A's snapshot (by itself: no signal), all of them, none asked upstream again
mode u mode=silent
b_has() {
	dig @127.0.0.1 -p "$port" +tries=1 +time=3 a1.deploy.test A >"$tmp/poll" 2>&1
	[ "$(dig_rcode "$tmp/poll")" = NOERROR ]
}
# (a miss costs B up to 1 s now: poll by the clock, not by wait_for's count)
deadline=$(($(date +%s) + 10))
until b_has || [ "$(date +%s)" -ge "$deadline" ]; do
	sleep 0.2
done
if b_has; then
	ok "B took in A's snapshot (a name only A learned answered, upstream silent)"
else
	not_ok "B took in A's snapshot within 10 s" "$tmp/poll"
fi
# (before it did, B asked the upstream for a1: what comes after counts)
seen=$(wc -l <"$tmp/u.qlog")
dig @127.0.0.1 -p "$port" +tries=1 +time=3 -f "$tmp/only_a" >"$tmp/only_a.out" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/only_a.out")
na=$(awk '!/^;/ && NF == 5 && $4 == "A" && $5 == "192.0.2.9"' "$tmp/only_a.out" | wc -l)
ok_if "B answers the 50 names only A learned ($n NOERROR, $na with A's data)" \
	[ "$n" -eq 50 -a "$na" -eq 50 ]
again=$(tail -n "+$((seen + 1))" "$tmp/u.qlog" | grep -ci '^[a-z]* a[0-9]*\.deploy\.test\. ')
ok_if "none of them asked upstream ($again queries were)" [ "$again" -eq 0 ]
kill -TERM "$b_pid"
wait "$b_pid"
ok_if "B: SIGTERM, exit 0" [ $? -eq 0 ]
finish
