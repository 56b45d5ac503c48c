#!/bin/sh
# forward.sh: dnsnap serve --upstream in front of a real resolver.
#
# NSD serves the e2e zones (lib.sh), Unbound resolves them (stub zones to
# NSD, validating signed.test with its KSK as trust anchor), and dnsnap
# serve forwards to Unbound. Every e2e question whose answer Unbound can
# give (not those under the delegations to addresses that answer nothing)
# plus a CNAME with a 2-day TTL in front of a 60 s A, asked of dnsnap must
# get Unbound's own answer (tests/e2e/dnscmp --peer: rcode, every flag,
# the records by section; each TTL at most Unbound's and at most 2 s
# below it: Unbound is asked first, dnsnap right after):
#   1. the misses, each question once, DO=0 and DO=1 in turn: the counters
#      count every one a miss;
#   2. the hits: every question with DO=0 and with DO=1, some with CD=1,
#      some with DO=0 and AD=0; no miss more;
#   3. the metrics endpoint counts the hits; every log line has a time and
#      a level;
#   4. --allow 127.0.0.2/32: REFUSED from 127.0.0.1, answered from
#      127.0.0.2; and the default answers 127.0.0.2;
#   5. --user nobody (as root only): the process runs as nobody, answers,
#      and writes its snapshot at exit;
#   6. the restart: SIGTERM (exit 0, SNAP published), Unbound and NSD
#      stopped, dnsnap started again: every question answered as before, all
#      from the map, nothing asked upstream.
#
# Usage (from the repository root): tests/e2e/forward.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
need nsd unbound dig ldns-keygen ldns-signzone setsid python3 "$build/dnsnap" "$cmp"
need_forwarder

serial=$(date +%s)
make_zones "$serial"
# a CNAME of 2 days (Unbound keeps 1) before an A of 60 s: each keeps its own
printf 'mixttl\t172800\tCNAME\tshort\n' >>"$tmp/zones/example.test.zone"
start_nsd "$serial"
start_unbound

# the questions Unbound can answer: not below sub. and nog. (their servers,
# 192.0.2.x, answer nothing) nor ext. (out of the zones, no root to ask)
{
	queries_example
	queries_signed
	echo "mixttl.example.test A"
} | grep -v -e '^sub\.' -e '\.sub\.' -e 'nog\.' -e '^ext\.' >"$tmp/q"
nq=$(wc -l <"$tmp/q")
# the miss round: each question once, DO=0 and DO=1 in turn
awk '{ print $1, $2, (NR % 2 ? "+nodnssec" : "+dnssec") }' "$tmp/q" >"$tmp/miss.batch"
# the hit round: each with DO=0 and DO=1; every third also CD=1 with DO=1,
# every fourth also DO=0 without AD (dig sets AD by default)
awk '{ print $1, $2, "+nodnssec"; print $1, $2, "+dnssec"
	if (NR % 3 == 0) print $1, $2, "+dnssec +cdflag"
	if (NR % 4 == 0) print $1, $2, "+nodnssec +noadflag" }' "$tmp/q" >"$tmp/hit.batch"
cut -d' ' -f1 "$tmp/miss.batch" >"$tmp/miss.names"
cut -d' ' -f1 "$tmp/hit.batch" >"$tmp/hit.names"

# ask PORT BATCH OUT: every question of BATCH, as dig asks them
ask() { dig @127.0.0.1 -p "$1" +tries=1 +time=5 -f "$2" >"$3" 2>&1; }

# Unbound once, to warm it: dnsnap's misses then get what Unbound's cache gives
ask "$ub_port" "$tmp/hit.batch" "$tmp/ub.warm"
ok_if "Unbound answers the $nq questions (none SERVFAIL)" \
	not_grep -q 'status: SERVFAIL' "$tmp/ub.warm"

snap=$tmp/fwd.snap
mport=$(free_port)
start_fwd fwd "$snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port" \
	--metrics "127.0.0.1:$mport"
pid=$fwd_pid
port=$fwd_port
ok "dnsnap serve --upstream 127.0.0.1:$ub_port on 127.0.0.1:$port (cold: no $snap)"

# round NAME BATCH: Unbound, then dnsnap, each every question of BATCH;
# dnsnap's answers must be Unbound's
round() {
	ask "$ub_port" "$2" "$tmp/ub.$1"
	_n=$(wc -l <"$2")
	# A reply without QR (the query's own flags and counts, seen in CI against
	# both servers) was dig reading its own query: its SO_REUSEPORT socket had
	# been given the server's port; servers now listen below the ephemeral
	# range (pick_port in lib.sh; serve's port 0 likewise), so no retry here
	ask "$port" "$2" "$tmp/fwd.$1"
	if "$cmp" --batch --peer --within 2 --qnames "$2.names" "$tmp/ub.$1" "$tmp/fwd.$1" \
		>"$tmp/cmp.$1" 2>&1; then
		ok "$1: dnsnap's $_n answers are Unbound's (flags, records, TTLs within 2 s)"
	else
		not_ok "$1: dnsnap's $_n answers are Unbound's" "$tmp/cmp.$1" 200
	fi
}
cp "$tmp/miss.names" "$tmp/miss.batch.names"
cp "$tmp/hit.names" "$tmp/hit.batch.names"

c0=$(fwd_counters fwd "$pid")
round misses "$tmp/miss.batch"
c1=$(fwd_counters fwd "$pid")
m=$(jdelta "$c0" "$c1" misses)
ok_if "misses: the $nq questions were $m misses" [ "$m" -eq "$nq" ]
round hits "$tmp/hit.batch"
c2=$(fwd_counters fwd "$pid")
m=$(jdelta "$c1" "$c2" misses)
h=$(jdelta "$c1" "$c2" hits)
nh=$(wc -l <"$tmp/hit.batch")
ok_if "hits: no miss more ($m), $nh questions, $h hits" [ "$m" -eq 0 -a "$h" -ge "$nh" ]
# the 2-day CNAME keeps its day (Unbound's cap), the A its minute
grep -A 3 'ANSWER SECTION' "$tmp/fwd.hits" | grep -i '^mixttl' | head -n 1 >"$tmp/mixttl"
# shellcheck disable=SC2016 # the awk and python programs' own $
ok_if "the CNAME before a 60 s A keeps its own TTL ($(cut -f2 "$tmp/mixttl" | tr -s '\t' ' '))" \
	awk -F'\t+' '$2 > 86000 { found = 1 } END { exit !found }' "$tmp/mixttl"

# ------------------------------------------------------------------ metrics
python3 -c 'import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except Exception as e:
    print("GET %s: %s" % (sys.argv[1], e))' \
	"http://127.0.0.1:$mport/metrics" >"$tmp/metrics" 2>&1
# shellcheck disable=SC2016 # the awk and python programs' own $
ok_if "GET /metrics: dnsnap_cache_hits_total counts the hits" \
	awk '$1 ~ /^dnsnap_cache_hits_total($|{)/ { s += $NF } END { exit !(s > 0) }' \
	"$tmp/metrics"
grep -q '^dnsnap_cache_hits_total' "$tmp/metrics" || sed 's/^/#   /' "$tmp/metrics" | head -20
ok_if "every log line has a time and a level" not_grep -Ev \
	'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (debug|info|warning|error): ' \
	"$tmp/fwd.log"

# ------------------------------------------------------------------- --allow
dig @127.0.0.1 -p "$port" -b 127.0.0.2 +tries=1 +time=5 www.example.test A >"$tmp/d.allow0" 2>&1
ok_if "default --allow (loopback): 127.0.0.2 answered" [ "$(dig_rcode "$tmp/d.allow0")" = NOERROR ]
start_fwd allow "$tmp/allow.snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port" \
	--allow 127.0.0.2/32
dig @127.0.0.1 -p "$fwd_port" -b 127.0.0.1 +tries=1 +time=5 www.example.test A >"$tmp/d.allow1" 2>&1
dig @127.0.0.1 -p "$fwd_port" -b 127.0.0.2 +tries=1 +time=5 www.example.test A >"$tmp/d.allow2" 2>&1
ok_if "--allow 127.0.0.2/32: a query from 127.0.0.1 REFUSED ($(dig_rcode "$tmp/d.allow1"))" \
	[ "$(dig_rcode "$tmp/d.allow1")" = REFUSED ]
ok_if "--allow 127.0.0.2/32: from 127.0.0.2 answered ($(dig_a "$tmp/d.allow2"))" \
	[ "$(dig_a "$tmp/d.allow2")" = "192.0.2.80 192.0.2.81 192.0.2.82 " ]
dig @127.0.0.1 -p "$fwd_port" -b 127.0.0.1 +tcp +tries=1 +time=5 www.example.test A \
	>"$tmp/d.allow3" 2>&1
ok_if "--allow 127.0.0.2/32: over TCP from 127.0.0.1 REFUSED ($(dig_rcode "$tmp/d.allow3"))" \
	[ "$(dig_rcode "$tmp/d.allow3")" = REFUSED ]
stop_fwd "$fwd_pid"

# -------------------------------------------------------------------- --user
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir "$tmp/nobody"
	chown nobody "$tmp/nobody"
	chmod 755 "$tmp"
	uport=53
	port_free 53 || uport=$(free_port)
	start_fwd user "$tmp/nobody/snap" --listen "127.0.0.1:$uport" \
		--upstream "127.0.0.1:$ub_port" --user nobody
	uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$fwd_pid/status")
	nuid=$(id -u nobody)
	ok_if "--user nobody: runs as uid $nuid (Uid: $uid), on port $uport" \
		[ "$uid" = "$nuid $nuid $nuid $nuid" ]
	dig @127.0.0.1 -p "$uport" +tries=1 +time=5 mail.example.test A >"$tmp/d.user" 2>&1
	ok_if "--user nobody: answers ($(dig_a "$tmp/d.user"))" \
		[ "$(dig_a "$tmp/d.user")" = "192.0.2.25 " ]
	stop_fwd "$fwd_pid"
	rc=$?
	ok_if "--user nobody: exit 0 ($rc) and its snapshot written" \
		[ "$rc" -eq 0 -a -s "$tmp/nobody/snap" ]
	ok_if "--user nobody: the snapshot holds mail.example.test" \
		"$build/dnsnap" get "$tmp/nobody/snap" mail.example.test A
else
	echo "# --user: not root (or no user nobody), not tested"
fi

# ------------------------------------------------------------------- restart
stop_fwd "$pid"
rc=$?
ok_if "SIGTERM: exit 0 ($rc)" [ "$rc" -eq 0 ]
ok_if "SIGTERM: $snap published" [ -s "$snap" ]
stop "-$ub_pid"
stop "-$nsd_pid"
ok_if "Unbound and NSD stopped" eval "! running -$ub_pid && ! running -$nsd_pid"
start_fwd again "$snap" --listen 127.0.0.1:0 --upstream "127.0.0.1:$ub_port" \
	--upstream-timeout 200 --upstream-tries 1
pid=$fwd_pid
port=$fwd_port
c0=$(fwd_counters again "$pid")
ask "$port" "$tmp/hit.batch" "$tmp/fwd.restart"
c1=$(fwd_counters again "$pid")
# the same answers as before the restart (TTLs no larger: time went on)
if "$cmp" --batch --peer --qnames "$tmp/hit.names" "$tmp/fwd.hits" "$tmp/fwd.restart" \
	>"$tmp/cmp.restart" 2>&1; then
	ok "restart, upstream gone: the $nh answers are the ones before"
else
	not_ok "restart, upstream gone: the $nh answers are the ones before" "$tmp/cmp.restart" 200
fi
for k in misses upstream_answers; do
	d=$(jdelta "$c0" "$c1" $k)
	ok_if "restart: $k +$d (none)" [ "$d" -eq 0 ]
done
# each question at least once from the map (the next asks of a key may come
# from memory, if map hits are copied there)
d=$(jdelta "$c0" "$c1" hits_map)
ok_if "restart: from the map (hits_map +$d, $nq questions)" [ "$d" -ge "$nq" ]
stop_fwd "$pid"
ok_if "restart: exit 0" [ $? -eq 0 ]
finish
