# lib.sh: what the end-to-end scripts share. Source it from the repository
# root with build set (the BUILD directory). It makes a temp dir ($tmp) that
# goes on exit (E2E_KEEP=1 keeps it, to look into), and every process started through it (NSD, tcpdump, Redis, dnsnap
# serve) is stopped on exit, whatever the exit: TERM first, KILL when it
# lingers. Nothing sleeps blindly: waits poll, with limits.
#
# The zones, written by make_zones:
# - example.test: a plain zone of 40-odd names: A and AAAA (RRsets of 1 to
#   3), CNAME chains (in zone, out of zone, to a name that does not exist),
#   MX, TXT (long, several strings, quotes and escapes, several records; an
#   RRset over 1232 bytes), SRV, NAPTR, CAA, PTR, HINFO, a delegation with
#   glue and one without, a wildcard beside an explicit name, an empty
#   non-terminal, a TTL of 2 days and one of 60 s, a mixed-case owner;
# - signed.test: signed with ldns-signzone (NSEC, ECDSA P-256 KSK and ZSK
#   from ldns-keygen): positive answers with RRSIG, NXDOMAIN and NODATA with
#   their NSEC proofs, a wildcard, a CNAME, an insecure delegation.
# queries_example and queries_signed list the questions asked of both.
# shellcheck disable=SC2034 # variables set here are the callers'
set -u
: "${build:?set build before sourcing lib.sh}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dnsnap-e2e.XXXXXX") || exit 2
e2e_procs=""   # "pid" or "-pgid" entries, stopped on exit
fails=0
passes=0

# stop PID|-PGID: TERM, then KILL after 5 s (a group: its leader too, in
# case it is killed before it made its group). dash's kill takes no "--".
# NSD runs under setsid: its group and session are its PID.
# running PID|-SID: the process, or one of the session's, has not ended
# (zombies, ended but not yet reaped, do not count)
running() {
	case $1 in
	-*) ps -o stat= -s "${1#-}" ;;
	*) ps -o stat= -p "$1" ;;
	esac 2>/dev/null | grep -q '^[^Z]'
}
stop() {
	kill -TERM "$1" "${1#-}" 2>/dev/null
	_i=0
	while running "$1" && [ $_i -lt 50 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -KILL "$1" "${1#-}" 2>/dev/null
}
e2e_cleanup() {
	for p in $e2e_procs; do
		stop "$p"
	done
	if [ -n "${E2E_KEEP:-}" ]; then
		echo "# kept: $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap e2e_cleanup EXIT
trap 'exit 2' INT TERM HUP

# ok_if NAME COMMAND...: one check
# (sh has no local variables: the helpers' own start with _)
ok_if() {
	_what=$1
	shift
	if "$@"; then
		echo "ok - $_what"
		passes=$((passes + 1))
	else
		echo "not ok - $_what"
		fails=$((fails + 1))
	fi
}
# not_ok NAME [FILE]: a failed check, with FILE's lines as details
not_ok() {
	echo "not ok - $1"
	[ $# -gt 1 ] && sed 's/^/#   /' "$2" | head -n "${3:-60}"
	fails=$((fails + 1))
}
ok() { echo "ok - $1"; passes=$((passes + 1)); }
# todo_if NAME COMMAND...: a check of a known difference (see the reason);
# failing, it prints "not ok - NAME # TODO" and is not counted as a failure
todo_if() {
	_what=$1
	shift
	if "$@"; then
		echo "ok - $_what # TODO passes now: make it a check"
		passes=$((passes + 1))
	else
		echo "not ok - $_what # TODO known"
	fi
}
# not_grep ARGS...: grep -q ARGS finds nothing
not_grep() { ! grep -q "$@"; }
# bail NAME [FILE]: a failure the rest cannot go on from
bail() {
	not_ok "$@"
	echo "# bailing out"
	exit 1
}
finish() {
	echo "# $passes passed, $fails failed"
	[ "$fails" -eq 0 ]
}

# need TOOL PACKAGE...: fail at once when a tool is missing
need() {
	for t in "$@"; do
		case $t in
		*/*) [ -x "$t" ] || bail "$t is not built (make test-e2e builds it)" ;;
		*) command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] ||
			bail "$t is missing (make deps installs it: nsd ldnsutils knot-dnsutils bind9-dnsutils tcpdump)" ;;
		esac
	done
}

# pick_port: a random port in 20000-59999 (each user checks it is free by
# binding it, and picks another when not)
# pick_port: a port from 10000 to below the kernel's ephemeral range: Linux
# gives a port of that range to a client socket with SO_REUSEPORT (dig sets
# it) even while a server of ours listens there with SO_REUSEPORT (Unbound,
# dnsnap serve): dig then reads its own query as the reply (seen in CI)
pick_port() {
	_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	[ "${_lo:-0}" -gt 11000 ] 2>/dev/null || _lo=32768
	echo $((10000 + $(od -An -N2 -tu2 /dev/urandom) % (_lo - 10000)))
}

# wait_for SECONDS COMMAND...: poll COMMAND every 50 ms until it succeeds
wait_for() {
	_limit=$(($1 * 20))
	shift
	_i=0
	while [ $_i -lt $_limit ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

# poll_for SECONDS COMMAND...: wait_for by the clock (for a COMMAND that may
# itself take a while, as a python3 start does on a loaded machine)
poll_for() {
	_end=$(($(date +%s) + $1))
	shift
	while :; do
		"$@" 2>/dev/null && return 0
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.1
	done
}

# ------------------------------------------------------------------ zones

# make_zones SERIAL: the two zone files in $tmp/zones, signed.test signed;
# the KSK's public key in $tmp/zones/ksk.key (the trust anchor)
make_zones() {
	z=$tmp/zones
	mkdir -p "$z"
	long1=$(printf 'a%.0s' $(seq 250))
	long2=$(printf 'b%.0s' $(seq 250))
	cat >"$z/example.test.zone" <<EOF
\$ORIGIN example.test.
\$TTL 3600
@		SOA	ns1 hostmaster $1 7200 3600 1209600 300
@		NS	ns1
@		NS	ns2
@		A	192.0.2.1
@		AAAA	2001:db8::1
@		MX	10 mail
@		MX	20 mail2
@		TXT	"v=spf1 mx -all"
@		CAA	0 issue "ca.example.net"
ns1		A	192.0.2.53
ns2		A	192.0.2.54
ns2		AAAA	2001:db8::54
www		A	192.0.2.80
www		A	192.0.2.81
www		A	192.0.2.82
www		AAAA	2001:db8::80
alias		CNAME	www
c1		CNAME	c2
c2		CNAME	c3
c3		CNAME	www
dangling	CNAME	nothere
ext		CNAME	www.elsewhere.test.
mail		A	192.0.2.25
mail		AAAA	2001:db8::25
mail2		A	192.0.2.26
long		TXT	"$long1" "$long2" "and a third string"
multi		TXT	"first" "second string" "with \"quotes\", a \\\\ backslash; and a semicolon"
multi		TXT	"another record"
bytes		TXT	"caf\195\169 \000\255 tab\009end"
big		TXT	"$long1"
big		TXT	"$long2"
big		TXT	"c$long1"
big		TXT	"d$long2"
big		TXT	"e$long1"
_sip._tcp	SRV	10 60 5060 sip
_sip._tcp	SRV	20 0 5061 sip2
sip		A	192.0.2.60
naptr		NAPTR	100 10 "S" "SIP+D2U" "" _sip._tcp
ptr		PTR	www
hinfo		HINFO	"PC" "Linux"
sub		NS	ns.sub
sub		NS	ns2.sub
ns.sub		A	192.0.2.99
ns.sub		AAAA	2001:db8::99
ns2.sub		A	192.0.2.98
nog		NS	ns.elsewhere.test.
*.wild		A	192.0.2.200
*.wild		TXT	"wildcard"
host.wild	A	192.0.2.201
a.b.ent		A	192.0.2.7
longttl	172800	A	192.0.2.172
short	60	A	192.0.2.61
MiXeD		A	192.0.2.77
zz-end		TXT	"end of capture $1"
EOF
	cat >"$z/signed.test.in" <<EOF
\$ORIGIN signed.test.
\$TTL 3600
@		SOA	ns1 hostmaster $1 7200 3600 1209600 300
@		NS	ns1
@		MX	10 mail
ns1		A	192.0.2.53
www		A	192.0.2.80
www		A	192.0.2.81
www		AAAA	2001:db8::80
alias		CNAME	www
mail		A	192.0.2.25
txt		TXT	"signed text" "two strings"
*.wild		TXT	"signed wildcard"
*.wild		A	192.0.2.210
sub		NS	ns.sub
ns.sub		A	192.0.2.99
EOF
	# signatures valid from an hour ago: no validator sees them as future
	inception=$(date -u -d "@$(($(date +%s) - 3600))" +%Y%m%d%H%M%S)
	(
		cd "$z" || exit 1
		ksk=$(ldns-keygen -a ECDSAP256SHA256 -k signed.test) &&
			zsk=$(ldns-keygen -a ECDSAP256SHA256 signed.test) &&
			ldns-signzone -i "$inception" -o signed.test -f signed.test.zone signed.test.in \
				"$ksk" "$zsk" &&
			cp "$ksk.key" ksk.key
	) >"$tmp/signzone.log" 2>&1 || bail "ldns-keygen and ldns-signzone sign signed.test" \
		"$tmp/signzone.log"
}

# The questions: NAME TYPE, one a line. NOERROR, NXDOMAIN, NODATA, referrals.
queries_example() {
	cat <<'EOF'
example.test SOA
example.test NS
example.test A
example.test AAAA
example.test MX
example.test TXT
example.test CAA
example.test SRV
www.example.test A
www.example.test AAAA
www.example.test TXT
alias.example.test A
alias.example.test AAAA
alias.example.test CNAME
c1.example.test A
c2.example.test AAAA
dangling.example.test A
ext.example.test A
mail.example.test A
mail.example.test AAAA
mail.example.test MX
long.example.test TXT
multi.example.test TXT
bytes.example.test TXT
big.example.test TXT
_sip._tcp.example.test SRV
naptr.example.test NAPTR
ptr.example.test PTR
hinfo.example.test HINFO
sub.example.test NS
host.sub.example.test A
ns.sub.example.test A
nog.example.test A
x.nog.example.test AAAA
any.wild.example.test A
any.wild.example.test TXT
any.wild.example.test AAAA
a.b.wild.example.test A
host.wild.example.test A
host.wild.example.test TXT
b.ent.example.test A
a.b.ent.example.test A
longttl.example.test A
short.example.test A
mixed.example.test A
nothere.example.test A
deep.nothere.example.test AAAA
nothere.example.test MX
EOF
}
queries_signed() {
	cat <<'EOF'
signed.test SOA
signed.test NS
signed.test DNSKEY
signed.test MX
www.signed.test A
www.signed.test AAAA
www.signed.test TXT
alias.signed.test A
mail.signed.test A
txt.signed.test TXT
x.wild.signed.test TXT
x.wild.signed.test A
x.wild.signed.test AAAA
host.sub.signed.test A
nothere.signed.test A
nothere.signed.test TXT
www.signed.test RRSIG
www.signed.test NSEC
EOF
}

# ------------------------------------------------------------------- NSD

# start_nsd: NSD serving both zones on 127.0.0.1 at a free port; sets
# nsd_port. Its own process group, so that its children go with it.
start_nsd() {
	serial=$1
	mkdir -p "$tmp/nsd"
	for _try in 1 2 3 4 5 6; do
		nsd_port=$(pick_port)
		cat >"$tmp/nsd/nsd.conf" <<EOF
server:
	ip-address: 127.0.0.1@$nsd_port
	port: $nsd_port
	do-ip6: no
	username: ""
	chroot: ""
	zonesdir: "$tmp/zones"
	pidfile: "$tmp/nsd/nsd.pid"
	database: ""
	xfrdfile: "$tmp/nsd/xfrd.state"
	zonelistfile: "$tmp/nsd/zone.list"
	logfile: "$tmp/nsd/log"
	server-count: 1
	verbosity: 1
	hide-version: yes
remote-control:
	control-enable: no
EOF
		# every zone file made: example.test, signed.test, and a test's own
		for _zf in "$tmp/zones"/*.zone; do
			_zn=$(basename "$_zf" .zone)
			printf 'zone:\n\tname: %s\n\tzonefile: %s.zone\n' "$_zn" "$_zn" \
				>>"$tmp/nsd/nsd.conf"
		done
		setsid nsd -d -c "$tmp/nsd/nsd.conf" >"$tmp/nsd/out" 2>&1 &
		nsd_pid=$!
		e2e_procs="$e2e_procs -$nsd_pid"
		# up when it answers with this run's serial (not some other server)
		i=0
		while [ $i -lt 200 ] && kill -0 "$nsd_pid" 2>/dev/null; do
			dig @127.0.0.1 -p "$nsd_port" +tries=1 +time=1 +short example.test SOA \
				2>/dev/null | grep -q " $serial " && return 0
			sleep 0.05
			i=$((i + 1))
		done
		stop "-$nsd_pid"
		wait "$nsd_pid" 2>/dev/null
		cat "$tmp/nsd/out" "$tmp/nsd/log" >>"$tmp/nsd/tries" 2>/dev/null
	done
	bail "nsd starts on 127.0.0.1 (6 ports tried)" "$tmp/nsd/tries"
}

# --------------------------------------------------------------- tcpdump

# start_capture PORT FILE: tcpdump on lo writing FILE, packet by packet,
# the traffic of PORT; returns once packets to PORT are really captured
start_capture() {
	cap_port=$1
	cap_file=$2
	# as root, tcpdump would become user tcpdump before opening FILE in
	# our private temp dir: stay who we are
	zflag=
	[ "$(id -u)" = 0 ] && zflag="-Z root"
	# -s 8192 -B 32768: the ring holds a slot per packet of snaplen bytes in
	# a buffer of 2 MiB by default, so -s 0 (256 KiB) left room for 8: a
	# burst dropped our packets. Our largest message is under 2 KB; the load
	# counts a cut packet, and checks there are none.
	# shellcheck disable=SC2086
	tcpdump -i lo -n -U --immediate-mode -s 8192 -B 32768 $zflag -w "$cap_file" \
		"udp port $cap_port or tcp port $cap_port" 2>"$cap_file.log" &
	cap_pid=$!
	e2e_procs="$e2e_procs $cap_pid"
	wait_for 10 grep -q "listening on lo" "$cap_file.log" ||
		bail "tcpdump captures on lo (as $(id -un); it needs root or CAP_NET_RAW)" \
			"$cap_file.log"
	# listening: and writing? a query to the port must reach the file
	i=0
	while [ $i -lt 100 ]; do
		dig @127.0.0.1 -p "$cap_port" +tries=1 +time=1 example.test SOA >/dev/null 2>&1
		[ "$(wc -c <"$cap_file")" -gt 24 ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	bail "tcpdump writes what it captures" "$cap_file.log"
}

# stop_capture: the last exchange (zz-end, whose answer holds this run's
# serial) must be in the file before tcpdump stops: then all before it is
stop_capture() {
	dig @127.0.0.1 -p "$cap_port" +tries=1 +time=1 zz-end.example.test TXT >/dev/null 2>&1
	wait_for 10 grep -aq "end of capture $serial" "$cap_file" ||
		not_ok "the capture's last answer reached the file"
	kill -INT "$cap_pid"
	wait "$cap_pid"
	# (packets of others that happen to use the port count here too)
	if grep -q "^0 packets dropped by kernel" "$cap_file.log"; then
		ok "tcpdump: no packet dropped by the kernel"
	else
		not_ok "tcpdump: no packet dropped by the kernel" "$cap_file.log"
	fi
}

# ------------------------------------------------------------- dnsnap serve

# start_serve SNAP NOW [LOG]: dnsnap serve on 127.0.0.1, a port the kernel
# picks; sets serve_port and serve_pid
start_serve() {
	serve_log=${3:-$tmp/serve.log}
	"$build/dnsnap" serve "$1" --listen 127.0.0.1:0 --threads 2 --now "$2" 2>"$serve_log" &
	serve_pid=$!
	e2e_procs="$e2e_procs $serve_pid"
	wait_for 10 grep -q "listening on 127.0.0.1:" "$serve_log" ||
		bail "dnsnap serve starts" "$serve_log"
	serve_port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' \
		"$serve_log")
	[ -n "$serve_port" ] || bail "dnsnap serve names its port" "$serve_log"
}

# counters: the last SIGUSR1 line of the serve log after a fresh SIGUSR1
counters() {
	before=$(grep -c " info: counters: " "$serve_log")
	kill -USR1 "$serve_pid"
	wait_for 5 sh -c "[ \$(grep -c ' info: counters: ' '$serve_log') -gt $before ]" ||
		{ echo "no counters"; return 1; }
	grep " info: counters: " "$serve_log" | tail -1
}
# counter LINE NAME: one number of a counters line
counter() { printf '%s' "$1" | sed -n "s/.*[ (]$2 \([0-9][0-9]*\).*/\1/p"; }

# --------------------------------------------------------- the recording

# record_answers: ask NSD every question of both zones with dig, as the
# capture runs: without DO, then with DO (a resolver's cache keeps the
# later answer for a question: the one with the signatures), every third
# over TCP. dig -f: one process for many questions. (No CD: NSD 4.6 does
# not copy CD into its responses, RFC 4035 3.1.6 notwithstanding, so a
# CD=1 question cannot be told from the capture.)
record_answers() {
	: >"$tmp/rec.batch"
	k=0
	for q in $(queries_example | tr ' ' ':') $(queries_signed | tr ' ' ':'); do
		k=$((k + 1))
		tcp=
		[ $((k % 3)) -eq 0 ] && tcp=+tcp
		echo "${q%:*} ${q#*:} $tcp +nodnssec" >>"$tmp/rec.batch"
		echo "${q%:*} ${q#*:} $tcp +dnssec" >>"$tmp/rec.batch"
	done
	dig @127.0.0.1 -p "$nsd_port" +tries=2 +time=2 -f "$tmp/rec.batch" >"$tmp/rec.out" 2>&1
	asked=$(wc -l <"$tmp/rec.batch")
	got=$(grep -c -- '->>HEADER<<-' "$tmp/rec.out")
	ok_if "NSD answered all $asked recorded questions ($got)" [ "$got" -eq "$asked" ]
	truncated=$(grep -c "Truncated, retrying in TCP mode" "$tmp/rec.out")
}

# ------------------------------------------- the forwarder (serve --upstream)

# port_free PORT: nothing listens on PORT, UDP or TCP, as far as ss tells
# (without ss: any port; a server that cannot bind it says so)
port_free() { [ -z "$(ss -Hltun "( sport = :$1 )" 2>/dev/null)" ]; }
# free_port: a random port nothing listens on
free_port() {
	_p=$(pick_port)
	while ! port_free "$_p"; do
		_p=$(pick_port)
	done
	echo "$_p"
}

# need_forwarder: bail when this dnsnap has no serve --upstream
need_forwarder() {
	"$build/dnsnap" serve --help 2>&1 | grep -q -- '--upstream' ||
		bail "dnsnap serve has --upstream (its --help names it)"
}

# start_unbound: Unbound on 127.0.0.1, resolving example.test and
# signed.test through stub zones to NSD ($nsd_port), validating signed.test
# with the KSK of make_zones as its trust anchor; sets ub_port and ub_pid
start_unbound() {
	mkdir -p "$tmp/unbound"
	for _try in 1 2 3 4 5 6; do
		ub_port=$(free_port)
		cat >"$tmp/unbound/unbound.conf" <<UEOF
server:
	interface: 127.0.0.1
	port: $ub_port
	do-ip6: no
	do-not-query-localhost: no
	username: ""
	chroot: ""
	directory: "$tmp/unbound"
	pidfile: "$tmp/unbound/unbound.pid"
	logfile: "$tmp/unbound/log"
	use-syslog: no
	verbosity: 1
	num-threads: 1
	module-config: "validator iterator"
	trust-anchor-file: "$tmp/zones/ksk.key"
	access-control: 127.0.0.0/8 allow
	qname-minimisation: no
	prefetch: no
	aggressive-nsec: no
	# test. is one of Unbound's default local zones (RFC 6761: NXDOMAIN)
	local-zone: "test." nodefault
remote-control:
	control-enable: no
stub-zone:
	name: "example.test."
	stub-addr: 127.0.0.1@$nsd_port
stub-zone:
	name: "signed.test."
	stub-addr: 127.0.0.1@$nsd_port
UEOF
		setsid unbound -d -c "$tmp/unbound/unbound.conf" >"$tmp/unbound/out" 2>&1 &
		ub_pid=$!
		e2e_procs="$e2e_procs -$ub_pid"
		_i=0
		while [ $_i -lt 200 ] && kill -0 "$ub_pid" 2>/dev/null; do
			dig @127.0.0.1 -p "$ub_port" +tries=1 +time=1 +short example.test SOA \
				2>/dev/null | grep -q " $serial " && return 0
			sleep 0.05
			_i=$((_i + 1))
		done
		stop "-$ub_pid"
		wait "$ub_pid" 2>/dev/null
		cat "$tmp/unbound/out" "$tmp/unbound/log" >>"$tmp/unbound/tries" 2>/dev/null
	done
	bail "unbound starts on 127.0.0.1 (6 ports tried)" "$tmp/unbound/tries"
}

# start_fwd NAME SNAP ARG...: dnsnap serve SNAP --json --threads 2 ARG...
# (ARG should hold a --listen; 127.0.0.1:0 lets the kernel pick), its log in
# $tmp/NAME.log, its JSON counters in $tmp/NAME.out; returns once it logged
# "ready"; sets fwd_pid and fwd_port (the first 127.0.0.1 port it names)
start_fwd() {
	_name=$1
	_snap=$2
	shift 2
	"$build/dnsnap" serve "$_snap" --json --threads 2 "$@" >"$tmp/$_name.out" \
		2>"$tmp/$_name.log" &
	fwd_pid=$!
	e2e_procs="$e2e_procs $fwd_pid"
	wait_for 10 grep -q "ready" "$tmp/$_name.log" ||
		bail "dnsnap serve $_name starts (logs ready): serve $_snap $*" "$tmp/$_name.log"
	fwd_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' \
		"$tmp/$_name.log" | head -n 1)
	[ -n "$fwd_port" ] || bail "dnsnap serve $_name names its port" "$tmp/$_name.log"
}

# stop_fwd PID: SIGTERM, and its exit status once it ended (a child of ours)
stop_fwd() {
	kill -TERM "$1"
	wait "$1"
}

# fwd_counters NAME PID: SIGUSR1, then the JSON counters line it printed
fwd_counters() {
	_before=$(grep -c '"event":"counters"' "$tmp/$1.out")
	kill -USR1 "$2"
	wait_for 5 sh -c "[ \$(grep -c '\"event\":\"counters\"' '$tmp/$1.out') -gt $_before ]" ||
		{ echo '{}'; return 1; }
	grep '"event":"counters"' "$tmp/$1.out" | tail -n 1
}
# jnum JSON KEY: a number of a JSON object, at the top (KEY) or summed over
# every object under it that has KEY (*KEY), "none" when it has none
jnum() {
	printf '%s' "$1" | python3 -c '
import json, sys
key = sys.argv[1]
o = json.load(sys.stdin)
def walk(v):
    if isinstance(v, dict):
        yield v
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)
if key.startswith("*"):
    vals = [d[key[1:]] for d in walk(o) if key[1:] in d]
    print(sum(vals) if vals else "none")
else:
    print(o.get(key, "none"))' "$2"
}

# What dig printed: the rcode, the EDE code, the A records, their TTLs
dig_rcode() { sed -n 's/.*->>HEADER<<-.* status: \([A-Z]*\),.*/\1/p' "$1" | tail -n 1; }
dig_ede() { sed -n 's/^; EDE: \([0-9]*\).*/\1/p' "$1" | tail -n 1; }
dig_a() { awk '!/^;/ && NF == 5 && $4 == "A" { print $5 }' "$1" | sort | tr '\n' ' '; }
dig_ttls() { awk '!/^;/ && NF >= 5 && $3 == "IN" { print $2 }' "$1" | tr '\n' ' '; }
# jdelta JSON0 JSON1 KEY: how much KEY (as jnum reads it) grew, "none" when
# either lacks it (then a test [ ... -eq N ] fails)
jdelta() {
	_a=$(jnum "$1" "$3")
	_b=$(jnum "$2" "$3")
	case "$_a$_b" in
	*none*) echo none ;;
	*) echo $((_b - _a)) ;;
	esac
}

# start_fakeup NAME ARG...: a fake upstream, its control file $tmp/NAME.ctl,
# its query log $tmp/NAME.qlog; sets fk_port
start_fakeup() {
	_n=$1
	shift
	: >"$tmp/$_n.qlog"
	python3 tests/helpers/fakeup.py serve --port-file "$tmp/$_n.port" --log "$tmp/$_n.qlog" \
		--control "$tmp/$_n.ctl" "$@" 2>"$tmp/$_n.err" &
	e2e_procs="$e2e_procs $!"
	wait_for 10 test -s "$tmp/$_n.port" || bail "fakeup $_n starts" "$tmp/$_n.err"
	fk_port=$(cat "$tmp/$_n.port")
}
# mode NAME WORDS...: what fakeup NAME does from now on
mode() {
	_n=$1
	shift
	echo "$*" >"$tmp/$_n.ctl"
}
# asked NAME QNAME: how many queries fakeup NAME got for QNAME (any case)
asked() { awk -v n="$2." '{ if (tolower($2) == tolower(n)) c++ } END { print c + 0 }' \
	"$tmp/$1.qlog"; }

# jget JSON PATH: a value of a JSON object by its dotted PATH (l2.breaker),
# a string as it is, a number, true/false, an object or array as JSON;
# "none" when the path is not there
jget() {
	printf '%s' "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if not isinstance(v, dict) or k not in v:
        print("none")
        sys.exit(0)
    v = v[k]
if isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, (dict, list)):
    print(json.dumps(v, sort_keys=True))
else:
    print(v)' "$2"
}
# jgdelta JSON0 JSON1 PATH: how much the number at PATH (as jget reads it)
# grew, "none" when either lacks it
jgdelta() {
	_a=$(jget "$1" "$3")
	_b=$(jget "$2" "$3")
	case "$_a$_b" in
	*[!0-9]*) echo none ;;
	*) echo $((_b - _a)) ;;
	esac
}
# l2_settled NAME PID N: forwarder NAME's writes to Redis are done: none
# queued (l2.write_queue 0), at least N written (l2.writes); one python3
l2_settled() {
	fwd_counters "$1" "$2" | python3 -c 'import json, sys
try:
    l2 = json.load(sys.stdin)["l2"]
    sys.exit(not (l2["write_queue"] == 0 and l2["writes"] >= int(sys.argv[1])))
except (ValueError, KeyError):
    sys.exit(1)' "$3"
}
# hist_over JSON NAME US: the count of histogram NAME (answer_latency_l2...)
# above US microseconds (US one of its bounds), "none" without the histogram
hist_over() {
	printf '%s' "$1" | python3 -c '
import json, sys
h = json.load(sys.stdin).get(sys.argv[1])
us = int(sys.argv[2])
if not isinstance(h, dict) or us not in h.get("le_us", []):
    print("none")
else:
    i = h["le_us"].index(us)
    print(sum(h["counts"][i + 1:]))' "$2" "$3"
}

# ------------------------------------------------------------------- Redis
# (redis-server and redis-cli from Debian's redis-server and redis-tools.
# Each server: no persistence, 127.0.0.1 only, its files in $tmp/NAME, its
# log $tmp/NAME/log; stopped by PID like the rest.)

# rcli PORT ARG...: redis-cli against our Redis at PORT (text in, text out;
# binary keys and values: tests/helpers/resp.py, which prints them as hex)
rcli() {
	_p=$1
	shift
	redis-cli -h 127.0.0.1 -p "$_p" "$@"
}
# resp PORT CMD ARG...: tests/helpers/resp.py (call, scan, get)
resp() { python3 tests/helpers/resp.py "$@"; }

# redis_is_ours PORT PID: the Redis answering at PORT is process PID (not
# another user's server on a port we took for free)
redis_is_ours() { rcli "$1" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$2"; }

# start_redis NAME PORT [ARG...]: redis-server NAME on 127.0.0.1:PORT (0: a
# free port, tried up to 6 times) with the extra config ARGs (--key value);
# returns once it answers PING as itself; sets redis_port and redis_pid.
# Started again with the PORT it had, it is a restart (empty: no persistence).
start_redis() {
	_rn=$1
	_rport=$2
	shift 2
	mkdir -p "$tmp/$_rn"
	for _try in 1 2 3 4 5 6; do
		redis_port=$_rport
		[ "$redis_port" = 0 ] && redis_port=$(free_port)
		redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
			--dir "$tmp/$_rn" --logfile "$tmp/$_rn/log" --daemonize no "$@" \
			>"$tmp/$_rn/out" 2>&1 &
		redis_pid=$!
		e2e_procs="$e2e_procs $redis_pid"
		_i=0
		while [ $_i -lt 200 ] && running "$redis_pid"; do
			redis_is_ours "$redis_port" "$redis_pid" && return 0
			sleep 0.05
			_i=$((_i + 1))
		done
		stop "$redis_pid"
		wait "$redis_pid" 2>/dev/null
		cat "$tmp/$_rn/out" "$tmp/$_rn/log" >>"$tmp/$_rn/tries" 2>/dev/null
		[ "$_rport" = 0 ] || break
	done
	bail "redis-server $_rn starts on 127.0.0.1:$redis_port" "$tmp/$_rn/tries"
}
# stop_redis PID [KILL]: SIGTERM (SIGKILL with KILL: a crash), and reaped
stop_redis() {
	if [ "${2:-}" = KILL ]; then
		kill -KILL "$1" 2>/dev/null
	else
		stop "$1"
	fi
	wait "$1" 2>/dev/null
	return 0
}
# redis_dbsize PORT: the number of keys of our Redis at PORT
redis_dbsize() {
	_n=$(rcli "$1" dbsize 2>/dev/null | tr -dc 0-9)
	echo "$_n"
}

# start_redis_cluster N: a Redis Cluster of N masters (3 at least: redis-cli
# --cluster create wants 3), no replicas, the slots spread evenly; sets
# cluster_ports ("P1 P2 ...") and cluster_pids, and returns once every node
# says the cluster is ok and covers every slot. Each node's bus port is
# picked free too (not PORT+10000, which could be in the ephemeral range).
start_redis_cluster() {
	cluster_ports=""
	cluster_pids=""
	_addrs=""
	_k=1
	while [ "$_k" -le "$1" ]; do
		start_redis "rc$_k" 0 --cluster-enabled yes --cluster-port "$(free_port)" \
			--cluster-config-file "$tmp/rc$_k/nodes.conf" --cluster-node-timeout 5000
		cluster_ports="$cluster_ports $redis_port"
		cluster_pids="$cluster_pids $redis_pid"
		_addrs="$_addrs 127.0.0.1:$redis_port"
		_k=$((_k + 1))
	done
	# shellcheck disable=SC2086 # $_addrs: words
	redis-cli --cluster create $_addrs --cluster-replicas 0 --cluster-yes \
		>"$tmp/cluster-create.log" 2>&1 ||
		bail "redis-cli --cluster create:$_addrs" "$tmp/cluster-create.log"
	wait_for 20 cluster_ok ||
		bail "the Redis Cluster ($cluster_ports) is ok on every node" "$tmp/cluster-create.log"
}
# cluster_ok: every node of $cluster_ports says cluster_state:ok, all 16384
# slots assigned and ok, and knows every master (the gossip has settled)
cluster_ok() {
	_nm=$(echo "$cluster_ports" | wc -w)
	for _p in $cluster_ports; do
		rcli "$_p" cluster info 2>/dev/null | tr -d '\r' >"$tmp/cluster-info" || return 1
		grep -qx 'cluster_state:ok' "$tmp/cluster-info" &&
			grep -qx 'cluster_slots_ok:16384' "$tmp/cluster-info" &&
			grep -qx "cluster_known_nodes:$_nm" "$tmp/cluster-info" || return 1
	done
}
# node_id PORT: the cluster node id of our Redis at PORT
node_id() { rcli "$1" cluster myid | tr -d '\r'; }
# reshard FROM_PORT TO_PORT NSLOTS LOG: move NSLOTS slots and their keys from
# one master to another with redis-cli --cluster reshard (MIGRATING and
# IMPORTING, MIGRATE of the keys, then SETSLOT NODE: clients see MOVED after,
# ASK during); waits until the cluster is ok again
reshard() {
	redis-cli --cluster reshard "127.0.0.1:$1" --cluster-from "$(node_id "$1")" \
		--cluster-to "$(node_id "$2")" --cluster-slots "$3" --cluster-yes \
		--cluster-pipeline 50 >"$4" 2>&1 &&
		wait_for 20 cluster_ok
}
# slot_owner SLOT: the port of the master that owns SLOT, as the first node
# of $cluster_ports sees it (CLUSTER NODES: "ID IP:PORT@BUS FLAGS MASTER
# PING PONG EPOCH STATE SLOT|FIRST-LAST...")
slot_owner() {
	# shellcheck disable=SC2086
	set -- "$1" $cluster_ports
	rcli "$2" cluster nodes | tr -d '\r' | awk -v s="$1" '
		{
			for (i = 9; i <= NF; i++) {
				if ($i ~ /^\[/)
					continue
				n = split($i, r, "-")
				if (n == 1)
					r[2] = r[1]
				if (r[1] + 0 <= s + 0 && s + 0 <= r[2] + 0) {
					sub(/@.*/, "", $2)
					sub(/.*:/, "", $2)
					print $2
					exit
				}
			}
		}'
}
