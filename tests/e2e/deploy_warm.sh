#!/bin/sh
# deploy_warm.sh: a deploy warm from its first answer, with what the old
# process learnt after its last periodic publish (issue 21). NSD serves the
# e2e zones, Unbound resolves them; A (dnsnap serve --upstream Unbound) learns
# a first set of names, publishes (SIGUSR2: its "last periodic publish"),
# then learns a second set, under a steady trickle of queries. Unbound and
# NSD are stopped: from then on a name not in a cache is a SERVFAIL. B starts
# on A's address and SNAP, plus an address of its own; before A gets
# SIGTERM, every name of the second set asked of B on its own address is
# answered NOERROR from cache (B asked A, through A's control socket, to
# publish before it mapped SNAP). Then A's SIGTERM, and B still answers.
# Before B asked, it mapped the file of A's SIGUSR2 and SERVFAILed the
# second set.
#
# Usage (from the repository root): tests/e2e/deploy_warm.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need nsd unbound dig ldns-keygen ldns-signzone setsid python3 "$build/dnsnap"
need_forwarder

serial=$(date +%s)
make_zones "$serial"
seq 1 40 | sed 's/.*/w&\t3600\tA\t192.0.2.40/' >>"$tmp/zones/example.test.zone"
start_nsd "$serial"
start_unbound
shared=$(free_port)
own=$(free_port)
snap=$tmp/deploy.snap
args="--upstream 127.0.0.1:$ub_port --upstream-timeout 300 --upstream-tries 1
	--snapshot-every 3600"
# shellcheck disable=SC2086 # $args: words
start_fwd A "$snap" --listen 127.0.0.1:$shared $args
a_pid=$fwd_pid
ok "A on 127.0.0.1:$shared in front of Unbound $ub_port (NSD $nsd_port)"

seq 1 20 | sed 's/.*/w&.example.test A/' >"$tmp/first"
seq 21 40 | sed 's/.*/w&.example.test A/' >"$tmp/second"
dig @127.0.0.1 -p "$shared" +tries=1 +time=3 -f "$tmp/first" >"$tmp/first.out" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/first.out")
ok_if "A learns the first 20 names ($n NOERROR)" [ "$n" -eq 20 ]
kill -USR2 "$a_pid"
wait_for 10 grep -q "published (SIGUSR2)" "$tmp/A.log"
ok_if "A's last publish before the deploy (SIGUSR2)" grep -q "published (SIGUSR2)" "$tmp/A.log"
dig @127.0.0.1 -p "$shared" +tries=1 +time=3 -f "$tmp/second" >"$tmp/second.out" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/second.out")
ok_if "A learns 20 more after it ($n NOERROR)" [ "$n" -eq 20 ]
"$build/dnsnap" dump "$snap" --zone example.test >"$tmp/file.before" 2>&1
in_file=$(grep -c '^; w[0-9]*\.example\.test\. IN A' "$tmp/file.before")
ok_if "the file holds the first set only ($in_file of 40)" [ "$in_file" -eq 20 ]

stop "-$ub_pid"
stop "-$nsd_pid"
dig @127.0.0.1 -p "$shared" +tries=1 +time=3 nothere1.example.test A >"$tmp/dead" 2>&1
ok_if "the upstream is gone: a new name is SERVFAIL" grep -q 'status: SERVFAIL' "$tmp/dead"

# a trickle of queries at A while B starts: a deploy under load
(
	i=0
	while [ $i -lt 40 ]; do
		dig @127.0.0.1 -p "$shared" +tries=1 +time=1 "w$((i % 20 + 1)).example.test" A \
			>/dev/null 2>&1
		i=$((i + 1))
	done
) &
trickle=$!
e2e_procs="$e2e_procs $trickle"
# shellcheck disable=SC2086
start_fwd B "$snap" --listen 127.0.0.1:$shared --listen 127.0.0.1:$own $args
b_pid=$fwd_pid
ok_if "B asked A to publish before it mapped SNAP" grep -q "deploy: .* published" "$tmp/B.log"
dig @127.0.0.1 -p "$own" +tries=1 +time=3 -f "$tmp/second" >"$tmp/b.second" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/b.second")
ok_if "B, on its own address, before A's SIGTERM: the 20 names A learnt after its last publish, from cache ($n NOERROR)" \
	[ "$n" -eq 20 ]
dig @127.0.0.1 -p "$own" +tries=1 +time=3 -f "$tmp/first" >"$tmp/b.first" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/b.first")
ok_if "... and the first 20 ($n NOERROR)" [ "$n" -eq 20 ]
wait "$trickle" 2>/dev/null
kill -TERM "$a_pid"
wait "$a_pid"
ok_if "A: SIGTERM, exit 0" [ $? -eq 0 ]
dig @127.0.0.1 -p "$shared" +tries=1 +time=3 -f "$tmp/second" >"$tmp/b.after" 2>&1
n=$(grep -c 'status: NOERROR' "$tmp/b.after")
ok_if "B alone on the shared address: the 40 still answered ($n of the second set)" [ "$n" -eq 20 ]
stop_fwd "$b_pid"
finish
