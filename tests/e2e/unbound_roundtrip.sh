#!/bin/sh
# unbound_roundtrip.sh BUILD: Unbound's cache in and out, against the real
# servers, on loopback, everything in a temporary directory.
#
# 1. nsd serves a small zone; unbound (iterator only, a stub zone to nsd)
#    resolves every test name, asked twice with dig (the second answer comes
#    from unbound's cache);
# 2. `unbound-control dump_cache` -> our reader (mkunboundsnap print): every
#    rebuilt response must hold the records dig got from the cache, the same
#    rcode, and no TTL larger;
# 3. the rebuilt responses -> a snapshot (mkunboundsnap load) -> load_cache
#    text (mkunboundsnap export) -> a fresh unbound's `load_cache`; nsd is
#    stopped, and unbound must answer every name from its cache as before
#    (same records and rcode, no TTL larger), and dump all of them again.
#
# Exit 0 when all holds, 1 on a failure, 77 (skipped) when unbound, nsd or
# dig are missing or cannot be started. Ports: DNSNAP_E2E_PORT for nsd (default:
# 53531, or the first free pair 10 up), the next one for unbound;
# unbound-control uses a socket in the directory.
set -u
build=${1:-build}
helper=$build/mkunboundsnap
dnsnap=$build/dnsnap
zone=dnsnap.example

skip() { echo "SKIP unbound_roundtrip: $*"; exit 77; }
# a port nothing listens on (TCP or UDP), as far as ss can tell
port_free() { ! command -v ss >/dev/null 2>&1 || [ -z "$(ss -Hltun "( sport = :$1 )")" ]; }
nsd_port=${DNSNAP_E2E_PORT:-53531}
if [ -z "${DNSNAP_E2E_PORT:-}" ]; then
	while ! { port_free $nsd_port && port_free $((nsd_port + 1)); }; do
		nsd_port=$((nsd_port + 10))
		[ $nsd_port -le 53631 ] || skip "no free pair of ports in 53531-53632"
	done
fi
ub_port=$((nsd_port + 1))
for p in unbound unbound-control nsd dig; do
	command -v $p >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
	command -v $p >/dev/null 2>&1 || skip "$p not installed (make deps)"
done
[ -x "$helper" ] || { echo "unbound_roundtrip: $helper missing (make $helper)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dnsnap-e2e.XXXXXX") || exit 1
nsd_pid= ub_pid= serve_pid=
stop() { # PID: end a server we started, and wait for it
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
cleanup() {
	stop "$serve_pid"
	stop "$ub_pid"
	stop "$nsd_pid"
	if [ -n "${DNSNAP_E2E_KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fails=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fails=$((fails + 1)); }

# ---------------------------------------------------------------- the zone
cat >"$tmp/zone" <<EOF
\$ORIGIN $zone.
\$TTL 3600
@		SOA	ns1 hostmaster 2026113001 7200 900 1209600 300
@		NS	ns1
@		MX	10 mail
ns1		A	127.0.0.1
mail		A	192.0.2.25
mail		AAAA	2001:db8::25
www		A	192.0.2.1
www		A	192.0.2.2
www		AAAA	2001:db8::1
alias		CNAME	alias2
alias2		CNAME	www
txt		TXT	"hello world" "second string"
short	300	TXT	"a shorter TTL"
_sip._tcp	SRV	0 5 5060 www
dangling	CNAME	gone
deep.sub	A	192.0.2.9
v6only		AAAA	2001:db8::6
EOF
# NAME TYPE: what each is
queries="www A
www AAAA
alias A
@ MX
@ NS
@ SOA
txt TXT
short TXT
mail AAAA
_sip._tcp SRV
deep.sub A
nx A
www MX
sub A
v6only A
dangling A
gone A"
# www A: two records; alias: a CNAME chain; MX, NS: additional data; nx: NXDOMAIN;
# www MX, sub A (an empty non-terminal), v6only A: NODATA; dangling: CNAME to
# NXDOMAIN, whose target (gone A) unbound caches as a message of its own

cat >"$tmp/nsd.conf" <<EOF
server:
	ip-address: 127.0.0.1
	port: $nsd_port
	username: ""
	chroot: ""
	database: ""
	zonesdir: "$tmp"
	zonelistfile: "$tmp/zone.list"
	xfrdfile: "$tmp/xfrd.state"
	xfrdir: "$tmp"
	pidfile: "$tmp/nsd.pid"
	logfile: "$tmp/nsd.log"
	server-count: 1
	verbosity: 1
remote-control:
	control-enable: no
zone:
	name: "$zone."
	zonefile: "$tmp/zone"
EOF

cat >"$tmp/unbound.conf" <<EOF
server:
	interface: 127.0.0.1
	port: $ub_port
	do-ip6: no
	do-not-query-localhost: no
	username: ""
	chroot: ""
	directory: "$tmp"
	pidfile: "$tmp/unbound.pid"
	logfile: "$tmp/unbound.log"
	use-syslog: no
	verbosity: 1
	num-threads: 1
	module-config: "iterator"
	access-control: 127.0.0.0/8 allow
	minimal-responses: no
	qname-minimisation: no
remote-control:
	control-enable: yes
	control-interface: "$tmp/unbound.ctl"
	control-use-cert: no
stub-zone:
	name: "$zone."
	stub-addr: 127.0.0.1@$nsd_port
EOF

ctl() { unbound-control -c "$tmp/unbound.conf" "$@"; }

start_nsd() {
	nsd -d -c "$tmp/nsd.conf" >>"$tmp/nsd.out" 2>&1 &
	nsd_pid=$!
	i=0
	while [ $i -lt 50 ]; do
		if [ -n "$(dig +short +time=1 +tries=1 -p "$nsd_port" @127.0.0.1 "$zone" SOA 2>/dev/null)" ]
		then return 0; fi
		kill -0 "$nsd_pid" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	cat "$tmp/nsd.out" "$tmp/nsd.log" 2>/dev/null | tail -5
	skip "nsd did not start on 127.0.0.1 port $nsd_port"
}

start_unbound() {
	unbound -d -c "$tmp/unbound.conf" >>"$tmp/unbound.out" 2>&1 &
	ub_pid=$!
	i=0
	while [ $i -lt 50 ]; do
		ctl status >/dev/null 2>&1 && return 0
		kill -0 "$ub_pid" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	cat "$tmp/unbound.out" "$tmp/unbound.log" 2>/dev/null | tail -5
	skip "unbound did not start on 127.0.0.1 port $ub_port"
}

# NAME TYPE -> the file name mkunboundsnap print gives that question
fname() {
	if [ "$1" = @ ]; then n=$zone; else n=$1.$zone; fi
	echo "${n}_$2.txt"
}
fqdn() { if [ "$1" = @ ]; then echo "$zone."; else echo "$1.$zone."; fi; }

ask() { # NAME TYPE OUT
	dig +time=2 +tries=1 +nocookie -p "$ub_port" @127.0.0.1 +noall +comments +answer \
		+authority +additional "$(fqdn "$1")" "$2" >"$3" 2>&1
}

# A response printed by dig or by ldns -> sorted lines "SECTION OWNER CLASS TYPE
# RDATA<tab>TTL" and "RCODE X<tab>0"; owners lower-cased, blanks collapsed.
norm() {
	awk '
	/->>HEADER<<-/ { for (i = 1; i <= NF; i++) if ($i == "status:" || $i == "rcode:") {
		r = $(i + 1); sub(/,$/, "", r); print "RCODE " r "\t0" } }
	/^;; QUESTION SECTION/ { s = ""; next }
	/^;; ANSWER SECTION/ { s = "AN"; next }
	/^;; AUTHORITY SECTION/ { s = "NS"; next }
	/^;; ADDITIONAL SECTION/ { s = "AR"; next }
	/^;/ || NF < 5 || s == "" { next }
	{ rd = ""; for (i = 5; i <= NF; i++) rd = rd " " $i
	  print s " " tolower($1) " " $3 " " $4 rd "\t" $2 }' "$1" | sort
}

# same WHAT EXPECTED GOT: the same records and rcode, no TTL of GOT above EXPECTED's
same() {
	norm "$2" >"$tmp/a"
	norm "$3" >"$tmp/b"
	if ! grep -q '^RCODE' "$tmp/a" || [ "$(grep -c . "$tmp/a")" -lt 1 ]; then
		notok "$1: no answer to compare with"; return
	fi
	cut -f1 "$tmp/a" >"$tmp/a1"
	cut -f1 "$tmp/b" >"$tmp/b1"
	if ! cmp -s "$tmp/a1" "$tmp/b1"; then
		notok "$1: records differ"; diff "$tmp/a1" "$tmp/b1" | sed 's/^/#   /'; return
	fi
	if ! awk -F'\t' 'NR == FNR { t[$1] = $2; next }
		$2 + 0 > t[$1] + 0 { print "#   TTL " $2 " > " t[$1] ": " $1; bad = 1 }
		END { exit bad }' "$tmp/a" "$tmp/b"; then
		notok "$1: a TTL grew"; return
	fi
	ok "$1 ($(grep -c -v '^RCODE' "$tmp/b") records, $(grep '^RCODE' "$tmp/b" | cut -f1))"
}

nq=$(echo "$queries" | grep -c .)
start_nsd
start_unbound

# ---------------------------------------------- 1. resolve, dump, rebuild
mkdir -p "$tmp/dig1" "$tmp/rebuilt" "$tmp/dig2"
echo "$queries" | while read -r n t; do
	ask "$n" "$t" /dev/null                           # fills the cache
	ask "$n" "$t" "$tmp/dig1/$(fname "$n" "$t")"      # answered from it
done
if ctl dump_cache >"$tmp/dump1.txt" 2>"$tmp/ctl.err" && head -1 "$tmp/dump1.txt" |
	grep -qx START_RRSET_CACHE; then
	ok "dump_cache: $(grep -c '^;rrset' "$tmp/dump1.txt") RRsets, $(grep -c '^msg ' \
		"$tmp/dump1.txt") messages"
else
	notok "dump_cache"; cat "$tmp/ctl.err"
fi
if "$helper" print "$tmp/dump1.txt" "$tmp/rebuilt" 2>"$tmp/print.err"; then
	ok "read the dump: $(grep '^responses' "$tmp/print.err" | cut -d' ' -f2) responses"
else
	notok "read the dump"; cat "$tmp/print.err"
fi
grep '^skipped' "$tmp/print.err" | sed 's/^/#   /'
grep -q '^skipped' "$tmp/print.err" && notok "the reader skipped parts of a real dump"
echo "$queries" | while read -r n t; do
	f=$(fname "$n" "$t")
	if [ -f "$tmp/rebuilt/$f" ]; then
		same "rebuilt $(fqdn "$n") $t" "$tmp/dig1/$f" "$tmp/rebuilt/$f"
	else
		notok "rebuilt $(fqdn "$n") $t: not in the dump"
	fi
done >"$tmp/phase1.log"
cat "$tmp/phase1.log"
fails=$((fails + $(grep -c '^not ok' "$tmp/phase1.log")))
extra=0
for f in "$tmp/rebuilt"/*.txt; do
	[ -f "$tmp/dig1/$(basename "$f")" ] || { echo "#   not asked: $(basename "$f")"; extra=1; }
done
[ $extra -eq 0 ] && ok "every rebuilt response answers a question asked" ||
	notok "rebuilt responses nobody asked for"

# ------------------------------- 2. snapshot, load_cache, answer without nsd
# the dump through the tool, from standard input as an operator pipes it
if "$dnsnap" load "$tmp/cache.snap" - <"$tmp/dump1.txt" >"$tmp/load.out" 2>"$tmp/load.err" &&
	grep -q ": $nq entries: $nq loaded, 0 kept" "$tmp/load.out" &&
	grep -q "Unbound cache dump: .* $nq responses rebuilt$" "$tmp/load.err"; then
	ok "dnsnap load of the dump: $nq entries"
else
	notok "dnsnap load of the dump"; cat "$tmp/load.out" "$tmp/load.err"
fi
if "$dnsnap" export "$tmp/cache.snap" --format unbound -o "$tmp/load.txt" 2>"$tmp/export.err" &&
	grep -q ": $nq messages, " "$tmp/export.err"; then
	ok "dnsnap export --format unbound: $(sed 's/^[^:]*: [^:]*: //' "$tmp/export.err")"
else
	notok "dnsnap export --format unbound"; cat "$tmp/export.err"
fi

stop "$ub_pid"
ub_pid=
rm -f "$tmp/unbound.ctl"
start_unbound
if out=$(ctl load_cache <"$tmp/load.txt" 2>&1) && [ "$out" = ok ]; then
	ok "load_cache"
else
	notok "load_cache: $out"
fi
stop "$nsd_pid"
nsd_pid=

# dnsnap serve answers every name as Unbound did, nsd stopped
"$dnsnap" serve "$tmp/cache.snap" --listen 127.0.0.1:0 --threads 1 2>"$tmp/serve.log" &
serve_pid=$!
i=0
until grep -q 'listening on' "$tmp/serve.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] && kill -0 "$serve_pid" 2>/dev/null || { cat "$tmp/serve.log"; skip "dnsnap serve did not start"; }
	sleep 0.05
done
serve_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/serve.log" | head -1)
mkdir -p "$tmp/dig3"
echo "$queries" | while read -r n t; do
	f=$(fname "$n" "$t")
	dig +time=2 +tries=1 +nocookie -p "$serve_port" @127.0.0.1 +noall +comments +answer \
		+authority +additional "$(fqdn "$n")" "$t" >"$tmp/dig3/$f" 2>&1
	same "dnsnap serve of the loaded dump, nsd stopped: $(fqdn "$n") $t" "$tmp/dig1/$f" "$tmp/dig3/$f"
done >"$tmp/phase3.log"
cat "$tmp/phase3.log"
fails=$((fails + $(grep -c '^not ok' "$tmp/phase3.log")))
stop "$serve_pid"
serve_pid=

echo "$queries" | while read -r n t; do
	f=$(fname "$n" "$t")
	ask "$n" "$t" "$tmp/dig2/$f"
	same "from the loaded cache, nsd stopped: $(fqdn "$n") $t" "$tmp/dig1/$f" "$tmp/dig2/$f"
done >"$tmp/phase2.log"
cat "$tmp/phase2.log"
fails=$((fails + $(grep -c '^not ok' "$tmp/phase2.log")))
ctl dump_cache >"$tmp/dump2.txt" 2>&1
m=$(grep -c '^msg ' "$tmp/dump2.txt")
[ "$m" -eq "$nq" ] && ok "unbound holds the $nq messages loaded" ||
	notok "unbound holds $m messages, not $nq"

echo "unbound_roundtrip: $fails failed"
[ $fails -eq 0 ]
