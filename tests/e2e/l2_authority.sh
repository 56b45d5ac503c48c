#!/bin/sh
# l2_authority.sh: long TTLs shared through Redis, as an authoritative server
# gives them (issue 20). A forwarder A whose upstream is NSD itself (no
# resolver between to cap anything: longttl.example.test A has TTL 172800,
# and a zone whose SOA says 86400 for negative answers), and a forwarder B
# with the same Redis and an upstream that answers nothing:
#   1. A learns both names; the Redis keys expire with the cache's caps (the
#      positive one within a day, the negative one within the negative cap of
#      3 hours), not with the authority's raw TTLs;
#   2. B answers both from Redis (l2 hits, no SERVFAIL), the TTLs capped as A
#      serves them (dnscmp --peer A --within 2).
# Before the miss path encoded once, A sealed the uncapped encoding: B
# refused the two-day value (it lives past the cache's longest TTL) and the
# negative one went to Redis for a day.
#
# Usage (from the repository root): tests/e2e/l2_authority.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
need nsd dig ldns-keygen ldns-signzone setsid python3 redis-server redis-cli \
	"$build/dnsnap" "$cmp"
need_forwarder

serial=$(date +%s)
make_zones "$serial"
cat >"$tmp/zones/longneg.test.zone" <<ZONE
\$ORIGIN longneg.test.
\$TTL 172800
@	SOA	ns1 hostmaster $serial 7200 3600 1209600 86400
@	NS	ns1
ns1	A	192.0.2.53
www	A	192.0.2.180
ZONE
start_nsd "$serial"
start_redis redis 0
rport=$redis_port
l2="redis://127.0.0.1:$rport"
dead=$(free_port) # nothing listens there: B's upstream never answers
ok "NSD on $nsd_port (authoritative, the upstream of A), Redis on $rport"

start_fwd a "$tmp/a.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$nsd_port" \
	--upstream-tries 1 --l2 "$l2" --l2-wait 200
a=$fwd_port
a_pid=$fwd_pid
start_fwd b "$tmp/b.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$dead" \
	--upstream-timeout 300 --upstream-tries 1 --l2 "$l2" --l2-wait 200
b=$fwd_port
b_pid=$fwd_pid

printf 'longttl.example.test A\nnx.longneg.test A\nwww.longneg.test A\n' >"$tmp/q"
dig @127.0.0.1 -p "$nsd_port" +norec longttl.example.test A >"$tmp/nsd.r" 2>&1
ok_if "NSD itself gives longttl TTL 172800 (nothing caps it before dnsnap)" \
	[ "$(dig_ttls "$tmp/nsd.r" | cut -d' ' -f1)" = 172800 ]
dig @127.0.0.1 -p "$nsd_port" +norec nx.longneg.test A >"$tmp/nsd.nx" 2>&1
ok_if "NSD gives nx.longneg.test NXDOMAIN with its SOA at 86400" \
	grep -q '^longneg.test\.[[:space:]]*86400[[:space:]]*IN[[:space:]]*SOA' "$tmp/nsd.nx"
ok_if "... NXDOMAIN" [ "$(dig_rcode "$tmp/nsd.nx")" = NXDOMAIN ]

dig @127.0.0.1 -p "$a" +tries=1 +time=5 -f "$tmp/q" >"$tmp/a.learn" 2>&1
ok_if "A answers the three from NSD (none SERVFAIL)" not_grep -q 'status: SERVFAIL' "$tmp/a.learn"
poll_for 10 l2_settled a "$a_pid" 3
ok_if "A wrote the three answers to Redis" l2_settled a "$a_pid" 3

# 1. the keys' expiry: PTTL (ms) against the caps, a day and 3 hours
# pttl_of LABEL: the PTTL of the one key holding LABEL (length-prefixed)
pttl_of() {
	_l=$(printf '%02x%s' "${#1}" "$(printf '%s' "$1" | od -An -tx1 | tr -d ' \n')")
	_k=$(resp "$rport" scan 'dnsnap:*' | grep "$_l" | head -n 1)
	[ -n "$_k" ] || { echo 0; return; }
	python3 -c 'import sys; open(sys.argv[2], "wb").write(bytes.fromhex(sys.argv[1]))' \
		"$_k" "$tmp/key.bin"
	redis-cli -h 127.0.0.1 -p "$rport" -x pttl <"$tmp/key.bin"
}
pl=$(pttl_of longttl)
ok_if "longttl's key lives at most the cache's day (PTTL $pl ms), not the authority's two" \
	[ "$pl" -gt 86000000 -a "$pl" -le 86400000 ]
pn=$(pttl_of nx)
ok_if "nx.longneg.test's key lives at most the negative cap of 3 hours (PTTL $pn ms)" \
	[ "$pn" -gt 10000000 -a "$pn" -le 10800000 ]

# 2. B: everything from Redis, as A answers it (A asked first: B's TTLs are
# at most A's, at least A's less 2 s)
cut -d' ' -f1 "$tmp/q" >"$tmp/q.names"
dig @127.0.0.1 -p "$a" +tries=1 +time=5 -f "$tmp/q" >"$tmp/a.r" 2>&1
c0=$(fwd_counters b "$b_pid")
dig @127.0.0.1 -p "$b" +tries=1 +time=5 -f "$tmp/q" >"$tmp/b.r" 2>&1
c1=$(fwd_counters b "$b_pid")
h=$(jgdelta "$c0" "$c1" l2.hits)
bad=$(jgdelta "$c0" "$c1" l2.bad)
ok_if "B answers the three from Redis (l2 hits +$h, bad +$bad)" [ "$h" = 3 -a "$bad" = 0 ]
ok_if "B: none SERVFAIL (its upstream answers nothing)" not_grep -q 'status: SERVFAIL' "$tmp/b.r"
if "$cmp" --batch --peer --within 2 --qnames "$tmp/q.names" "$tmp/a.r" "$tmp/b.r" \
	>"$tmp/cmp.out" 2>&1; then
	ok "B's answers are A's: rcode, flags, records, TTLs capped alike (dnscmp --peer)"
else
	not_ok "B's answers are A's (dnscmp --peer)" "$tmp/cmp.out"
fi
stop_fwd "$a_pid"
stop_fwd "$b_pid"
finish
