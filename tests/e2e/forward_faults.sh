#!/bin/sh
# forward_faults.sh: dnsnap serve --upstream against upstreams that fail,
# lie or are slow: tests/helpers/fakeup.py, switched from one fault to the
# next through its control file, logging every query it gets.
#   - forged replies (from 127.0.0.2, from another port, with a wrong ID,
#     with the right ID and another question) are never served nor cached,
#     with the right answer 100 ms later or without one;
#   - no answer: SERVFAIL with EDE 22 within tries x timeout, the upstream
#     asked tries times; SERVFAIL and garbage replies: SERVFAIL with EDE 23;
#     a reply for another question: not taken (SERVFAIL, EDE 22); TC=1 over
#     UDP and TCP, or TCP closed: SERVFAIL; slow but in time: answered;
#   - failover: the first upstream silent, the second answers;
#   - serve-stale: an entry of TTL 2, 3 s later the upstream silent: with
#     --serve-stale the old data with TTL 30 and EDE 3, without SERVFAIL;
#   - 100 identical misses at once (upstream slow, 300 ms): 100 answers, one
#     upstream query;
#   - --upstream-0x20: the upstream sees mixed case; a reply whose name has
#     another case is refused (and taken without --upstream-0x20).
#
# Usage (from the repository root): tests/e2e/forward_faults.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need dig python3 "$build/dnsnap"
need_forwarder

# q PORT NAME [DIGARGS]: ask dnsnap at PORT for NAME A; the reply in $tmp/r
q() {
	_p=$1
	_q=$2
	shift 2
	dig @127.0.0.1 -p "$_p" +tries=1 +time=4 "$@" "$_q" A >"$tmp/r" 2>&1
	cp "$tmp/r" "$tmp/r.$_q"
}
# expect WHAT RCODE EDE ADDRS: the last reply ($tmp/r) is so ("" EDE: none)
expect() {
	_got="$(dig_rcode "$tmp/r")/$(dig_ede "$tmp/r")/$(dig_a "$tmp/r")"
	if [ "$_got" = "$2/$3/$4" ]; then
		ok "$1: $2${3:+ EDE $3}${4:+ $4}"
	else
		not_ok "$1: $2${3:+ EDE $3}${4:+ $4}, not $_got" "$tmp/r"
	fi
}

# ---------------------------------------------------------- forged replies
start_fakeup f --mode answer
fport=$fk_port
start_fwd forge "$tmp/forge.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$fport" \
	--upstream-timeout 1000 --upstream-tries 1
port=$fwd_port
forge_pid=$fwd_pid
mode f mode=forge
q "$port" a.forge.test
expect "forged replies, then the right one" NOERROR "" "192.0.2.1 "
q "$port" a.forge.test
expect "asked again: the right data (cached)" NOERROR "" "192.0.2.1 "
ok_if "asked again: from the cache (fakeup asked $(asked f a.forge.test) time)" \
	[ "$(asked f a.forge.test)" -eq 1 ]
q "$port" t.forge.test +tcp
expect "a client over TCP; forged replies upstream, then the right one" \
	NOERROR "" "192.0.2.1 "
mode f mode=forge-only
q "$port" b.forge.test
expect "forged replies only: never served" SERVFAIL 22 ""
mode f mode=silent
q "$port" b.forge.test
expect "forged replies only, asked again (upstream silent): nothing was cached" \
	SERVFAIL 22 ""
c=$(fwd_counters forge "$forge_pid")
mm=$(jnum "$c" '*mismatched')
ok_if "the forged replies that reached the socket counted as mismatched ($mm)" [ "$mm" -ge 4 ]

# ---------------------------------------------------------- upstream faults
start_fakeup e --mode answer
eport=$fk_port
start_fwd faults "$tmp/faults.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$eport" \
	--upstream-timeout 300 --upstream-tries 2
port=$fwd_port
# tries x timeout = 0.6 s; dig waits 4 s
mode e mode=silent
q "$port" silent.faults.test
expect "upstream silent" SERVFAIL 22 ""
ok_if "upstream silent: asked --upstream-tries (2) times ($(asked e silent.faults.test))" \
	[ "$(asked e silent.faults.test)" -eq 2 ]
# both attempts waited out (>= 2 x 300 ms less a clock tick) before the
# SERVFAIL: a lower bound the server's logic sets, not a speed (no upper bound
# is asserted: a loaded machine may be slow; dig's own wait caps it)
ms=$(sed -n 's/^;; Query time: \([0-9]*\) msec.*/\1/p' "$tmp/r.silent.faults.test")
ok_if "upstream silent: SERVFAIL only after tries x timeout (600 ms; ${ms:-no} ms)" \
	[ "${ms:-0}" -ge 550 ]
mode e mode=servfail
q "$port" servfail.faults.test
expect "upstream SERVFAIL" SERVFAIL 23 ""
mode e mode=garbage
q "$port" garbage.faults.test
expect "upstream garbage (a reply cut inside a record)" SERVFAIL 23 ""
mode e mode=other
q "$port" other.faults.test
expect "a reply for another question: not taken" SERVFAIL 22 ""
mode e mode=tc tcp=tc
q "$port" tc.faults.test
expect "TC=1 over UDP and over TCP" SERVFAIL 23 ""
ok_if "TC=1: asked again over TCP ($(grep -c '^tcp tc\.faults' "$tmp/e.qlog") TCP queries)" \
	grep -q '^tcp tc\.faults\.test\. ' "$tmp/e.qlog"
mode e mode=tc tcp=close
q "$port" tcclose.faults.test
expect "TC=1 over UDP, TCP closed" SERVFAIL 23 ""
mode e mode=slow delay=100
q "$port" slow.faults.test
expect "slow (100 ms, timeout 300 ms): answered" NOERROR "" "192.0.2.1 "
mode e mode=slow delay=1000
q "$port" slower.faults.test
expect "slower than the timeout (1 s, timeout 300 ms)" SERVFAIL 22 ""
mode e mode=answer
q "$port" again.faults.test
expect "the same upstream answering again" NOERROR "" "192.0.2.1 "
q "$port" nx.faults.test
ok_if "an NXDOMAIN passes ($(dig_rcode "$tmp/r"))" [ "$(dig_rcode "$tmp/r")" = NXDOMAIN ]

# ---------------------------------------------------------------- failover
start_fakeup s1 --mode silent
s1=$fk_port
start_fakeup s2 --mode answer --addr 192.0.2.2
s2=$fk_port
start_fwd failover "$tmp/failover.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$s1" \
	--upstream "127.0.0.1:$s2" --upstream-timeout 300 --upstream-tries 3
q "$fwd_port" a.failover.test
expect "first upstream silent, the second answers" NOERROR "" "192.0.2.2 "
ok_if "failover: the first asked, then the second ($(asked s1 a.failover.test), \
$(asked s2 a.failover.test))" [ "$(asked s1 a.failover.test)" -ge 1 -a \
	"$(asked s2 a.failover.test)" -eq 1 ]

# ------------------------------------------------------------- serve-stale
start_fakeup st --mode answer --ttl 2 --addr 192.0.2.7
stp=$fk_port
start_fwd stale "$tmp/stale.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$stp" \
	--upstream-timeout 300 --upstream-tries 1 --serve-stale 3600
stale=$fwd_port
start_fwd nostale "$tmp/nostale.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$stp" \
	--upstream-timeout 300 --upstream-tries 1
nostale=$fwd_port
q "$stale" old.stale.test
expect "serve-stale: the entry (TTL 2)" NOERROR "" "192.0.2.7 "
q "$nostale" old.stale.test
expect "no serve-stale: the entry (TTL 2)" NOERROR "" "192.0.2.7 "
sleep 3 # the entries expire
mode st mode=silent
q "$stale" old.stale.test
expect "expired, upstream silent, --serve-stale 3600: the old data" NOERROR 3 "192.0.2.7 "
ok_if "the stale answer's TTL is 30 ($(dig_ttls "$tmp/r"))" [ "$(dig_ttls "$tmp/r")" = "30 " ]
q "$nostale" old.stale.test
expect "expired, upstream silent, no --serve-stale" SERVFAIL 22 ""

# ----------------------------------------------- 100 identical misses at once
start_fakeup c --mode slow --delay 300
cport=$fk_port
start_fwd coalesce "$tmp/coalesce.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$cport"
python3 tests/helpers/fakeup.py burst --server "127.0.0.1:$fwd_port" \
	--name same.coalesce.test --count 100 --wait 5 >"$tmp/burst" 2>&1
ok_if "100 identical misses at once: all answered with the data" \
	[ "$(tr '\n' '|' <"$tmp/burst")" = "sent 100 answered 100|rcode 0: 100|addr 192.0.2.1: 100|" ]
[ "$(head -n 1 "$tmp/burst")" = "sent 100 answered 100" ] || sed 's/^/#   /' "$tmp/burst"
ok_if "100 identical misses at once: one upstream query ($(asked c same.coalesce.test))" \
	[ "$(asked c same.coalesce.test)" -eq 1 ]

# --------------------------------------------------------------------- 0x20
start_fakeup z --mode answer
zport=$fk_port
start_fwd zerox "$tmp/zerox.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$zport" \
	--upstream-0x20 --upstream-timeout 300 --upstream-tries 2
zerox=$fwd_port
start_fwd plain "$tmp/plain.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$zport" \
	--upstream-timeout 300 --upstream-tries 2
plain=$fwd_port
for n in abcdefghijklmnopqrstuvwxyz abcdefghij-klmnopqrstuvwxyz; do
	q "$zerox" "$n.zerox.test"
done
expect "--upstream-0x20: answered" NOERROR "" "192.0.2.1 "
ok_if "--upstream-0x20: the upstream saw upper and lower case" \
	grep -q '^udp [a-z.-]*[A-Z][A-Za-z.-]* ' "$tmp/z.qlog"
grep '^udp' "$tmp/z.qlog" | head -n 2 | sed 's/^/#   /'
q "$plain" lowercase.plain.test
ok_if "without --upstream-0x20 the upstream sees lower case" \
	grep -q '^udp lowercase\.plain\.test\. ' "$tmp/z.qlog"
mode z mode=lowercase-reply
q "$zerox" mixedcasereply.zerox.test
expect "--upstream-0x20: a reply whose name has another case is refused" SERVFAIL 22 ""
q "$plain" mixedcasereply.plain.test
expect "without --upstream-0x20 the same reply is taken" NOERROR "" "192.0.2.1 "

finish
