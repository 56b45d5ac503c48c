#!/bin/sh
# tcp_hog.sh: one allowed source holding every TCP slot it can, and how
# many of another client's TCP queries are answered meanwhile; dnsnap serve
# (forwarding to Unbound) and Unbound itself, in turn.
#
# NSD serves the e2e zones, Unbound resolves them, dnsnap serve forwards to
# Unbound (options: only those every version has, so an older build is
# measured the same way). The hog (tests/helpers/tcphog.py) holds HOG
# connections from 127.0.0.2, each sending a query every EVERY seconds and
# opened again when closed; once it has tried them all for a few seconds,
# the probe from 127.0.0.3 sends COUNT queries, each on a new connection
# with 2 s for the answer. Prints one line per server:
#   dnsnap: answered A of COUNT (hog open K)
#   unbound: answered A of COUNT (hog open K)
#
# REOPEN "no": the hog does not open again what the server closed (it
# tries HOG connections once, in its first second).
#
# Usage (from the repository root):
#   bench/hostile/tcp_hog.sh [BUILD [HOG [EVERY [COUNT [REOPEN]]]]]
build=${1:-build}
HOG=${2:-128}
EVERY=${3:-3}
COUNT=${4:-72}
REOPEN=${5:-yes}
noreopen=
[ "$REOPEN" = no ] && noreopen=--no-reopen
. tests/e2e/lib.sh
need nsd unbound dig ldns-keygen ldns-signzone setsid python3 "$build/dnsnap"
serial=$(date +%s)
make_zones "$serial"
start_nsd "$serial"
start_unbound
start_fwd hog "$tmp/hog.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port"
dig @127.0.0.1 -p "$fwd_port" +tcp +short www.example.test A >/dev/null

# run NAME PORT: the hog on PORT for a while, then the probe; one line
run() {
	python3 tests/helpers/tcphog.py hog --server "127.0.0.1:$2" --source 127.0.0.2 \
		--conns "$HOG" --every "$EVERY" --status "$tmp/$1.hog" $noreopen &
	_hog=$!
	e2e_procs="$e2e_procs $_hog"
	sleep 4
	_r=$(python3 tests/helpers/tcphog.py probe --server "127.0.0.1:$2" --source 127.0.0.3 \
		--count "$COUNT" --gap 0.1 --timeout 2)
	echo "$1: $_r ($(cat "$tmp/$1.hog"))"
	stop "$_hog"
}
run dnsnap "$fwd_port"
run unbound "$ub_port"
