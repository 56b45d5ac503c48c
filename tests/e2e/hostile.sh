#!/bin/sh
# hostile.sh: dnsnap serve --upstream against hostile clients, with Unbound
# (the upstream, and the peer asked the same) beside it. Loopback only.
#
# NSD serves the e2e zones, Unbound resolves them with log-queries on, and
# dnsnap serve forwards to Unbound:
#   1. questions no resolver forwards (tests/helpers/tcphog.py ask, over
#      UDP and TCP): AXFR, IXFR, classes CH, HS, NONE, 0, 2, 100, 65280,
#      QTYPEs OPT, TKEY, TSIG, 128, 129, 200, 248, MAILB, MAILA: dnsnap's
#      rcode is Unbound's for each, and Unbound's query log never names the
#      question (a control question forwarded right after is in it); ANY,
#      type 0, 256, 65280, 65535 and class ANY are forwarded (rcode as
#      Unbound's), each once (over TCP they are cache hits);
#   2. a hog holds 128 TCP connections from 127.0.0.2 (each sends a query
#      every 3 s, and is opened again when closed): of 72 TCP queries from
#      127.0.0.3, each on its own connection, at least 95% are answered, and
#      the connections over --tcp-per-source (16) were refused
#      (tcp_refused_source). The same against Unbound, its figure printed;
#   3. 16, then 64 clients from 127.0.0.2 send an HTTP request to the
#      metrics endpoint one byte a second: a scrape from 127.0.0.1 is a 200
#      with the counters (curl given 10 s at most);
#   4. --tcp-max 8 --tcp-per-source 0: a hog of 8 connections, each asking
#      every 0.1 s (never idle long enough for the shorter idle time: the
#      slots stay full), the probe's queries still at least 95% answered,
#      room made by closing the one idle longest (tcp_evicted); the shorter
#      idle time itself: tests/cli/test_serve_ops.sh; --metrics-allow 127.0.0.1/32: a scrape from
#      127.0.0.4 is closed unanswered, one from 127.0.0.1 is a 200.
# Steps 1-3 use options every version has: run with an older build, their
# figures are that build's (bench/hostile/ has the same measurements).
#
# Usage (from the repository root): tests/e2e/hostile.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need nsd unbound dig curl ldns-keygen ldns-signzone setsid python3 "$build/dnsnap"
need_forwarder
hog() { python3 tests/helpers/tcphog.py "$@"; }

serial=$(date +%s)
make_zones "$serial"
start_nsd "$serial"
ub_extra='server:
	log-queries: yes'
start_unbound
mport=$(free_port)
start_fwd fwd "$tmp/fwd.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port" \
	--metrics "127.0.0.1:$mport"
pid=$fwd_pid
port=$fwd_port
ok "dnsnap serve --upstream 127.0.0.1:$ub_port on 127.0.0.1:$port, metrics on $mport"

# ------------------------------------------------ 1. answered locally
# TYPE CLASS pairs: never forwarded, then forwarded
local_pairs="252 1 251 1 1 3 16 3 1 4 1 254 1 0 1 2 1 100 1 65280 41 1 249 1 250 1 128 1
129 1 200 1 248 1 253 1 254 1 41 3 252 3"
fwd_pairs="255 1 0 1 256 1 65280 1 65535 1 1 255"
for tr in udp tcp; do
	t=
	[ $tr = tcp ] && t=--tcp
	# shellcheck disable=SC2086 # the pairs: words
	hog ask --server "127.0.0.1:$ub_port" $t meta-ub.example.test $local_pairs $fwd_pairs \
		>"$tmp/ub.$tr"
	# shellcheck disable=SC2086
	hog ask --server "127.0.0.1:$port" $t meta.example.test $local_pairs $fwd_pairs \
		>"$tmp/dn.$tr"
	if cmp -s "$tmp/ub.$tr" "$tmp/dn.$tr" && ! grep -q none "$tmp/dn.$tr"; then
		ok "over $tr: dnsnap's rcode is Unbound's for each of $(wc -l <"$tmp/dn.$tr") questions ($(tr '\n' ';' <"$tmp/dn.$tr"))"
	else
		paste "$tmp/ub.$tr" "$tmp/dn.$tr" >"$tmp/both"
		not_ok "over $tr: dnsnap's rcode is Unbound's (Unbound | dnsnap)" "$tmp/both"
	fi
done
dig @127.0.0.1 -p "$port" +tries=1 +time=3 ctl.example.test A >/dev/null
wait_for 5 grep -q " ctl.example.test. A IN" "$tmp/unbound/log" ||
	not_ok "Unbound logs the control question dnsnap forwarded" "$tmp/unbound/log"
# only the forwarded pairs reach Unbound, each once: over TCP they are hits
nf=$(($(echo $fwd_pairs | wc -w) / 2))
n=$(grep -c " meta.example.test. " "$tmp/unbound/log")
ok_if "Unbound was asked only the $nf forwarded questions of meta.example.test, each once ($n asked)" \
	[ "$n" -eq "$nf" ]
for pair in "AXFR IN" "IXFR IN" " CH" " HS" "TYPE41 " "TSIG " "TKEY " "MAILA " "TYPE128 "; do
	ok_if "... never $pair" not_grep -q " meta.example.test. .*$pair" "$tmp/unbound/log"
done

# ------------------------------------------------ 2. the TCP hog
# hog_run NAME PORT [CONNS [EVERY]]: the hog (128 connections, a query on
# each every 3 s) on PORT, settled (it has tried them all), then the probe's
# 72 queries; sets answered
hog_run() {
	# python3 itself in the background, not hog(): $! is then its pid, stopped
	python3 tests/helpers/tcphog.py hog --server "127.0.0.1:$2" --source 127.0.0.2 \
		--conns "${3:-128}" --every "${4:-3}" \
		--status "$tmp/$1.hog" &
	_h=$!
	e2e_procs="$e2e_procs $_h"
	poll_for 20 sh -c "awk '{ exit !(\$6 >= ${3:-128}) }' '$tmp/$1.hog'" ||
		not_ok "$1: the hog opened its connections" "$tmp/$1.hog"
	sleep 2
	hog probe --server "127.0.0.1:$2" --source 127.0.0.3 --count 72 --gap 0.1 --timeout 1 \
		>"$tmp/$1.probe"
	answered=$(sed -n 's/^answered \([0-9]*\) of.*/\1/p' "$tmp/$1.probe")
	echo "# $1: $(cat "$tmp/$1.probe") with the hog at: $(cat "$tmp/$1.hog")"
	stop "$_h"
}
j0=$(fwd_counters fwd "$pid")
hog_run dnsnap "$port"
j1=$(fwd_counters fwd "$pid")
ok_if "128 connections held from 127.0.0.2: $answered of 72 TCP queries from 127.0.0.3 answered (95%: 69)" \
	[ "${answered:-0}" -ge 69 ]
ok_if "... the hog's connections over 16 refused (tcp_refused_source +$(jdelta "$j0" "$j1" tcp_refused_source))" \
	[ "$(jdelta "$j0" "$j1" tcp_refused_source)" -gt 0 ]
hog_run unbound "$ub_port"
ok "Unbound, the same hog (incoming-num-tcp 10, tcp-idle-timeout 30 s by default): $answered of 72 answered (recorded, not checked)"

# ------------------------------------------------ 3. slow metrics clients
for n in 16 64; do
	python3 tests/helpers/tcphog.py slowhttp --server "127.0.0.1:$mport" --source 127.0.0.2 \
		--conns "$n" --status "$tmp/slow.$n" &
	slow=$!
	e2e_procs="$e2e_procs $slow"
	poll_for 10 test -s "$tmp/slow.$n"
	sleep 2
	code=$(curl -s -o "$tmp/scrape.$n" --interface 127.0.0.1 --max-time 10 -w '%{http_code}' \
		"http://127.0.0.1:$mport/metrics")
	ok_if "$n slow HTTP clients from 127.0.0.2 ($(cat "$tmp/slow.$n")): a scrape is a 200 ($code) with the counters" \
		grep -q '^dnsnap_queries_total{transport="tcp"}' "$tmp/scrape.$n"
	stop "$slow"
done

# ------------------------------------------------ 4. the new limits
mport2=$(free_port)
start_fwd small "$tmp/small.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port" \
	--tcp-max 8 --tcp-per-source 0 --metrics "127.0.0.1:$mport2" --metrics-allow 127.0.0.1/32
spid=$fwd_pid
j0=$(fwd_counters small "$spid")
hog_run small "$fwd_port" 8 0.1
j1=$(fwd_counters small "$spid")
ok_if "--tcp-max 8 --tcp-per-source 0, 8 hog connections each asking every 0.1 s: $answered of 72 answered" \
	[ "${answered:-0}" -ge 69 ]
ok_if "... the one idle longest closed for each new one (tcp_evicted +$(jdelta "$j0" "$j1" tcp_evicted))" \
	[ "$(jdelta "$j0" "$j1" tcp_evicted)" -gt 0 ]
code=$(curl -s -o /dev/null --interface 127.0.0.4 --max-time 10 -w '%{http_code}' \
	"http://127.0.0.1:$mport2/metrics")
ok_if "--metrics-allow 127.0.0.1/32: a scrape from 127.0.0.4 closed unanswered ($code)" \
	[ "$code" = 000 ]
code=$(curl -s -o /dev/null --interface 127.0.0.1 --max-time 10 -w '%{http_code}' \
	"http://127.0.0.1:$mport2/metrics")
ok_if "... one from 127.0.0.1 answered ($code)" [ "$code" = 200 ]
finish
