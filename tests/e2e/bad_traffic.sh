#!/bin/sh
# bad_traffic.sh: dnsnap serve under bad traffic, then still right.
#
# The snapshot is made as in auth_clients.sh (NSD, tcpdump, dnsnap load),
# and NSD stays up as the reference. Against a running `dnsnap serve`, sent
# with tests/helpers/mkquery: a good query cut at every length (UDP, and
# TCP framed), UDP datagrams of 4,097 to 60,000 bytes (and one of 4,096, a
# good query padded: answered), a TCP length of 65535 followed by less data,
# then 10,000 random and damaged messages over UDP and 2,000 over TCP
# (mkquery flood: random bytes, query-like headers, good queries with bytes
# overwritten, cut, appended, header bits flipped), paced by a probe query
# so that none is lost to a full socket buffer. After each step the server
# must be alive and answer every good question as NSD does (dig, compared
# by tests/e2e/dnscmp), and its counters (SIGUSR1) must count exactly what
# was sent: a query each, and each malformed one as formerr, dropped,
# notimp, badvers or a miss, as the replies mkquery saw say.
#
# Usage (from the repository root): tests/e2e/bad_traffic.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
mkq=$build/mkquery
need nsd dig ldns-keygen ldns-signzone tcpdump setsid "$build/dnsnap" "$cmp" "$mkq"

NOW=$(date +%s)
serial=$NOW
make_zones "$serial"
start_nsd "$serial"
start_capture "$nsd_port" "$tmp/cap.pcap"
record_answers
stop_capture
"$build/dnsnap" load "$tmp/snap" "$tmp/cap.pcap" --port "$nsd_port" --now "$NOW" \
	>"$tmp/load.out" 2>"$tmp/load.err" || bail "dnsnap load" "$tmp/load.err"
start_serve "$tmp/snap" "$NOW"
ok "dnsnap serve on 127.0.0.1:$serve_port, NSD on $nsd_port"

# the good questions, and NSD's answers to them (UDP and TCP, with DO)
{ queries_example; queries_signed; } >"$tmp/q"
cut -d' ' -f1 "$tmp/q" >"$tmp/names"
for tr in notcp tcp; do
	dig @127.0.0.1 -p "$nsd_port" +tries=2 +time=2 +dnssec +$tr -f "$tmp/q" >"$tmp/auth.$tr" 2>&1
done

# still_good WHEN: alive, and every good question answered as NSD answers it
still_good() {
	if ! running "$serve_pid"; then
		not_ok "after $1: dnsnap serve is alive" "$serve_log"
		bail "dnsnap serve died"
	fi
	for tr in notcp tcp; do
		over=TCP
		[ $tr = notcp ] && over=UDP
		dig @127.0.0.1 -p "$serve_port" +tries=2 +time=2 +dnssec +$tr -f "$tmp/q" \
			>"$tmp/cache.$tr" 2>&1
		if "$cmp" --batch --qnames "$tmp/names" "$tmp/auth.$tr" "$tmp/cache.$tr" \
			>"$tmp/cmp.out" 2>&1; then
			ok "after $1: alive, and its $(wc -l <"$tmp/q") answers over $over equal NSD's"
		else
			not_ok "after $1: answers over $over equal NSD's" "$tmp/cmp.out"
		fi
	done
}

# delta NAME: how much counter NAME grew from $c0 to $c1
delta() { echo $(($(counter "$c1" "$1") - $(counter "$c0" "$1"))); }
# expect_counts WHAT NAME=N...: each counter grew by N between $c0 and $c1
expect_counts() {
	what=$1
	shift
	bad=
	for kv in "$@"; do
		d=$(delta "${kv%=*}")
		[ "$d" = "${kv#*=}" ] || bad="$bad ${kv%=*} +$d (not +${kv#*=})"
	done
	if [ -z "$bad" ]; then
		ok "$what: the counters grew by $*"
	else
		echo "#   before: $c0"
		echo "#   after:  $c1"
		not_ok "$what: counters:$bad"
	fi
}

good=$("$mkq" hex www.example.test A)
glen=$((${#good} / 2))

# ------------------------------------------------- cut short: every length
cuts=
i=1
while [ $i -lt "$glen" ]; do
	cuts="$cuts $(printf '%s' "$good" | cut -c1-$((2 * i)))"
	i=$((i + 1))
done
c0=$(counters)
# shellcheck disable=SC2086 # the cut queries, word by word ("" is the empty one)
"$mkq" udp "$serve_port" --wait 100 "" $cuts >"$tmp/out" # "" is length 0, then 1 to glen-1
c1=$(counters)
n=$(wc -l <"$tmp/out")
none=$(grep -c '^none$' "$tmp/out")
formerr=$(grep -c '^d55d8181' "$tmp/out") # the ID; QR, RD copied, RA; RCODE 1
ok_if "UDP, a good query cut at each of its $glen lengths: $n replies checked" [ "$n" -eq "$glen" ]
ok_if "UDP, cut under 12 bytes (the header): no reply ($none of 12)" [ "$none" -eq 12 ]
ok_if "UDP, cut at 12 bytes or more: FORMERR with the ID ($formerr of $((glen - 12)))" \
	[ "$formerr" -eq $((glen - 12)) ]
expect_counts "UDP cut queries" udp="$glen" dropped=12 formerr=$((glen - 12)) hits=0
c0=$c1
# shellcheck disable=SC2086
"$mkq" tcp "$serve_port" --wait 300 "" $cuts >"$tmp/out"
c1=$(counters)
ok_if "TCP, the same cut queries framed and pipelined: FORMERR for each of 12 bytes or more" \
	[ "$(grep -c '^d55d8181' "$tmp/out")" -eq $((glen - 12)) ]
ok_if "TCP, and the connection still open" [ "$(tail -1 "$tmp/out")" = open ]
expect_counts "TCP cut queries" tcp="$glen" dropped=12 formerr=$((glen - 12))
still_good "the cut queries"

# ------------------------------------------------------ oversized over UDP
pad() { printf '%s' "$good"; head -c $(($1 - glen)) /dev/zero | od -An -v -tx1 | tr -d ' \n'; }
c0=$(counters)
"$mkq" udp "$serve_port" --wait 200 "$(pad 4097)" "$(pad 9000)" "$(pad 60000)" "$(pad 4096)" \
	>"$tmp/out"
c1=$(counters)
ok_if "UDP, 4,097, 9,000 and 60,000 bytes: no reply" \
	[ "$(head -3 "$tmp/out" | tr '\n' ' ')" = "none none none " ]
ok_if "UDP, a good query padded to 4,096 bytes: answered (bytes after it ignored)" \
	[ "$(tail -1 "$tmp/out" | cut -c1-8)" = d55d8180 ]
expect_counts "oversized UDP" udp=4 dropped=3 hits=1

# ---------------------------------------------------------- TCP lengths
c0=$(counters)
junk=$(head -c 1000 /dev/zero | od -An -v -tx1 | tr -d ' \n')
"$mkq" raw "$serve_port" --wait 300 "ffff$junk" >"$tmp/out"
ok_if "TCP, length 65535 and 1,000 bytes: no reply, kept open" [ "$(cat "$tmp/out")" = open ]
"$mkq" raw "$serve_port" --wait 300 "$(printf '%04x' "$glen")${good}ffff$junk" >"$tmp/out"
ok_if "TCP, a good query, then length 65535 and less: the good one answered" \
	[ "$(head -1 "$tmp/out" | cut -c1-8)" = d55d8180 ] && [ "$(tail -1 "$tmp/out")" = open ]
c1=$(counters)
expect_counts "TCP, unfinished lengths" tcp=1 hits=1 dropped=0 formerr=0
still_good "oversized datagrams and unfinished TCP messages"

# ------------------------------------------------------------- the flood
# templates: good queries of both zones, with and without EDNS and DO
templates=
for q in "www.example.test A" "example.test MX --do" "nothere.example.test A --noedns" \
	 "big.example.test TXT --size 4096" "www.signed.test A --do" "x.wild.signed.test TXT"; do
	# shellcheck disable=SC2086
	templates="$templates $("$mkq" hex $q)"
done
probe=$("$mkq" hex zz-end.example.test TXT)
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "# flood seed $seed (mkquery flood ... --seed $seed reproduces it)"
for tr in udp tcp; do
	n=10000 opt=
	[ $tr = tcp ] && n=2000 opt=--tcp
	c0=$(counters)
	# shellcheck disable=SC2086
	"$mkq" flood "$serve_port" $n $opt --seed "$seed" --wait 2000 "$probe" $templates \
		>"$tmp/flood" 2>"$tmp/flood.err"
	rc=$?
	c1=$(counters)
	f=$(cat "$tmp/flood")
	echo "# $tr: $f"
	ok_if "$tr flood of $n: every probe answered (mkquery exit $rc)" [ $rc -eq 0 ] ||
		sed 's/^/#   /' "$tmp/flood.err"
	v() { printf '%s' "$f" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
	probes=$(v probes)
	# a REFUSED is a miss (no upstream) or refused locally (a zone transfer,
	# a class other than IN and ANY: never a miss, never forwarded)
	expect_counts "$tr flood" $tr=$((n + probes)) dropped="$(v none)" formerr="$(v FORMERR)" \
		notimp="$(v NOTIMP)" badvers="$(v BADVERS)" \
		misses="$(($(v REFUSED) - $(delta refused_local)))" \
		servfail="$(v SERVFAIL)" hits=$((probes + $(v NOERROR) + $(v NXDOMAIN)))
	ok_if "$tr flood: malformed messages among them (formerr $(delta formerr), dropped \
$(delta dropped))" [ "$(delta formerr)" -gt $((n / 10)) ] && [ "$(delta dropped)" -gt $((n / 10)) ]
	ok_if "$tr flood: no reply the server should not give (other: $(v other))" [ "$(v other)" = 0 ]
	still_good "the $tr flood"
done

# ---------------------------------------------------------------- the end
ok_if "the log has no sanitizer report and no error" \
	not_grep -i "sanitizer\| error: " "$serve_log" # an error line, not a counter's name
kill -TERM "$serve_pid"
wait "$serve_pid"
ok_if "SIGTERM: exit 0" [ $? -eq 0 ]
ok_if "the counters at exit" grep -q "counters at exit: queries" "$serve_log"
finish
