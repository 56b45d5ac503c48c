#!/bin/sh
# auth_clients.sh: dnsnap against DNS software nobody here wrote.
#
# NSD serves two zones (lib.sh: a plain one of 40-odd names, and one signed
# with ldns-signzone) on 127.0.0.1. tcpdump records on lo while dig asks NSD
# every question, with and without DO, some over TCP; `dnsnap load` turns
# that capture into a snapshot, and `dnsnap serve` answers from it. This IS
# the "from a capture" test: the snapshot holds exactly what went over the
# wire, read by the capture decoder from tcpdump's pcap (Ethernet on lo,
# UDP and TCP, one answer over 1232 bytes truncated over UDP and asked again
# over TCP).
#
# Then the same questions go to NSD and to dnsnap serve from dig, kdig and
# drill (UDP and TCP, with and without DO, without RD, without EDNS), names in mixed case (0x20) for dig and drill (kdig lower-cases the
# names it sends), and every reply of dnsnap must equal NSD's reply to the
# same client: tests/e2e/dnscmp.c says what "equal" is (the records of each
# section as sets, the rcode, the question with the client's case, EDNS and
# DO; AA never set by the cache, RA always; TTLs at most NSD's). drill's
# replies are compared in wire form (drill -w).
#
# Then DNSSEC: DO answers carry the RRSIGs (kdig +dnssec, drill -D), and
# delv (BIND's validating lookup) validates dnsnap's answers, positive and
# negative, from the KSK made for the zone as its trust anchor: the
# signatures and proofs served from the cache still verify. Then time: a second
# server answers as 1000 s later; TTLs must be NSD's less 1000, and answers
# whose life was shorter (negative answers live 300 s) must be gone, and a
# TTL over the cache's max_ttl is served capped, counted down.
#
# Usage (from the repository root): tests/e2e/auth_clients.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
need nsd dig kdig drill delv ldns-keygen ldns-signzone tcpdump setsid "$build/dnsnap" "$cmp"

NOW=$(date +%s)
serial=$NOW
make_zones "$serial"
start_nsd "$serial"
ok "nsd answers on 127.0.0.1:$nsd_port"

# ------------------------------------------------------- the capture
start_capture "$nsd_port" "$tmp/cap.pcap"
ok "tcpdump records port $nsd_port on lo"
record_answers
ok_if "one answer over 1232 bytes made dig retry over TCP" [ "$truncated" -ge 1 ]
stop_capture

"$build/dnsnap" load "$tmp/snap" "$tmp/cap.pcap" --port "$nsd_port" --now "$NOW" \
	>"$tmp/load.out" 2>"$tmp/load.err"
rc=$?
ok_if "dnsnap load of tcpdump's capture: exit 0" [ $rc -eq 0 ] || cat "$tmp/load.err"
# every recorded question, the probe and the last, the TC retries; none refused
# but the truncated UDP answers (TC=1 is never cached)
line=$(grep "responses (" "$tmp/load.err")
responses=$(echo "$line" | sed -n 's/.*: \([0-9]*\) responses.*/\1/p')
distinct=$(echo "$line" | sed -n 's/.*, \([0-9]*\) distinct questions.*/\1/p')
want_q=$(( $(queries_example | wc -l) + $(queries_signed | wc -l) + 1 )) # and zz-end
ok_if "load: $responses responses read, at least the $asked asked and the retries" \
	[ "${responses:-0}" -ge $((asked + truncated)) ]
ok_if "load: $distinct distinct questions (each asked, and the capture's last: $want_q)" \
	[ "${distinct:-0}" -eq "$want_q" ]
ok_if "load: nothing refused but $truncated truncated answer(s)" \
	[ "$(echo "$line" | sed 's/.*queries skipped//')" = "; $truncated truncated (TC=1)" ]
[ $fails -eq 0 ] || sed 's/^/#   /' "$tmp/load.err"
"$build/dnsnap" verify "$tmp/snap" >"$tmp/verify.out" 2>&1
ok_if "dnsnap verify of the loaded snapshot" [ $? -eq 0 ]

start_serve "$tmp/snap" "$NOW"
ok "dnsnap serve answers on 127.0.0.1:$serve_port"

# ------------------------------------------------------- the comparison

# mix NAME N: NAME in mixed case, a pattern per N (0x20)
mix() {
	printf '%s' "$1" | awk -v n="$2" '{
		out = ""
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			out = out ((i * 7 + n) % 3 == 0 ? toupper(c) : c)
		}
		print out
	}'
}

# compare_batch LABEL QUESTIONS CLIENT ARGS...: CLIENT (dig, kdig) asks
# QUESTIONS (NAME TYPE lines) of NSD, then of dnsnap, in one run each;
# dnscmp compares the replies pair by pair
compare_batch() {
	label=$1 qfile=$2 client=$3
	shift 3
	cut -d' ' -f1 "$qfile" >"$tmp/names"
	for side in auth cache; do
		port=$nsd_port
		[ $side = cache ] && port=$serve_port
		if [ "$client" = dig ]; then
			dig @127.0.0.1 -p "$port" +tries=2 +time=2 "$@" -f "$qfile" >"$tmp/$side.txt" 2>&1
		else
			# shellcheck disable=SC2046 # the questions, word by word
			kdig @127.0.0.1 -p "$port" +retry=1 +time=2 "$@" $(cat "$qfile") \
				>"$tmp/$side.txt" 2>&1
		fi
	done
	if "$cmp" --batch --qnames "$tmp/names" "$tmp/auth.txt" "$tmp/cache.txt" >"$tmp/cmp.out" 2>&1
	then
		ok "$label: $(wc -l <"$qfile") replies of dnsnap equal NSD's"
	else
		not_ok "$label: dnsnap's replies differ from NSD's" "$tmp/cmp.out" 80
	fi
}

# compare_drill LABEL QUESTIONS ARGS...: drill asks each question of both;
# its wire replies (drill -w) compared
compare_drill() {
	label=$1 qfile=$2
	shift 2
	bad=0 n=0
	: >"$tmp/cmp.all"
	while read -r name type; do
		n=$((n + 1))
		rm -f "$tmp/auth.hex" "$tmp/cache.hex" # no reply: no file, not the last one
		drill "$@" -w "$tmp/auth.hex" -p "$nsd_port" @127.0.0.1 "$name" "$type" >/dev/null 2>&1
		drill "$@" -w "$tmp/cache.hex" -p "$serve_port" @127.0.0.1 "$name" "$type" >/dev/null 2>&1
		if ! "$cmp" --qname "$name" "wire:$tmp/auth.hex" "wire:$tmp/cache.hex" \
			>"$tmp/cmp.out" 2>&1; then
			bad=$((bad + 1))
			{ echo "$name $type:"; cat "$tmp/cmp.out"; } >>"$tmp/cmp.all"
		fi
	done <"$qfile"
	if [ $bad -eq 0 ]; then
		ok "$label: $n replies of dnsnap equal NSD's"
	else
		not_ok "$label: $bad of $n replies of dnsnap differ from NSD's" "$tmp/cmp.all" 80
	fi
}

{ queries_example; queries_signed; } >"$tmp/q.all"
while read -r name type; do echo "$(mix "$name" 1) $type"; done <"$tmp/q.all" >"$tmp/q.all.mixed"

compare_batch "dig UDP, 0x20" "$tmp/q.all.mixed" dig +nodnssec
compare_batch "dig UDP +dnssec, 0x20" "$tmp/q.all.mixed" dig +dnssec
compare_batch "dig TCP" "$tmp/q.all" dig +tcp
compare_batch "dig TCP +dnssec, 0x20" "$tmp/q.all.mixed" dig +tcp +dnssec
compare_batch "dig +noedns (512 bytes: TC, then TCP), 0x20" "$tmp/q.all.mixed" dig +noedns
# dnsnap sends at most 1232 bytes over UDP whatever the client offers: the
# big TXT is TC where NSD sends it whole, and dig's TCP retry must be equal
compare_batch "dig +bufsize=4096 +dnssec (dnsnap: TC over 1232, then TCP)" "$tmp/q.all" \
	dig +bufsize=4096 +dnssec
compare_batch "dig +norecurse +dnssec (RD=0)" "$tmp/q.all" dig +norecurse +dnssec
compare_batch "kdig UDP (no EDNS)" "$tmp/q.all" kdig
compare_batch "kdig +dnssec" "$tmp/q.all" kdig +dnssec
compare_batch "kdig TCP +dnssec" "$tmp/q.all" kdig +tcp +dnssec
compare_drill "drill UDP (no EDNS: TC compared as TC), 0x20" "$tmp/q.all.mixed"
compare_drill "drill -D, 0x20" "$tmp/q.all.mixed" -D
compare_drill "drill TCP -D" "$tmp/q.all" -t -D

# CD=1 is a question of its own in the cache (spec/FORMAT.md, "The cache
# key"), and the capture has none (NSD does not copy CD into its responses):
# the CD=0 entry answers it (spec/DECISIONS.md, "CD fallback"), CD echoed,
# with the RRSIG a DO client gets
dig @127.0.0.1 -p "$serve_port" +tries=1 +cd +dnssec www.signed.test A >"$tmp/dig.out" 2>&1
ok_if "dig +cd: answered from the CD=0 entry, CD echoed, with the RRSIG" \
	sh -c "grep -q 'status: NOERROR' '$tmp/dig.out' && grep -q 'flags: qr rd ra cd;' '$tmp/dig.out' &&
	       grep -q 'RRSIG[[:space:]]*A 13 3 3600 ' '$tmp/dig.out'"

# 0x20 with the question's case echoed: by name, one question
dig @127.0.0.1 -p "$serve_port" +tries=1 wWw.ExAmPlE.tEsT A >"$tmp/dig.out" 2>&1
ok_if "dig wWw.ExAmPlE.tEsT: the question echoed as asked" \
	grep -q "^;wWw.ExAmPlE.tEsT.[[:space:]]*IN[[:space:]]*A$" "$tmp/dig.out"
ok_if "dig wWw.ExAmPlE.tEsT: the answer owned by the name as asked (a pointer to it)" \
	grep -q "^wWw.ExAmPlE.tEsT.[[:space:]].*IN[[:space:]]*A[[:space:]]*192.0.2.8[012]$" \
	"$tmp/dig.out"

# ------------------------------------------------------------- DNSSEC
kdig @127.0.0.1 -p "$serve_port" +dnssec www.signed.test A >"$tmp/kdig.out" 2>&1
ok_if "kdig +dnssec: dnsnap's answer has the A's RRSIG" \
	grep -q "^www.signed.test.[[:space:]].*RRSIG[[:space:]]*A 13 3 3600 " "$tmp/kdig.out"
kdig @127.0.0.1 -p "$serve_port" www.signed.test A >"$tmp/kdig.out" 2>&1
ok_if "kdig without DO: no RRSIG" not_grep RRSIG "$tmp/kdig.out"
drill -D -p "$serve_port" @127.0.0.1 nothere.signed.test A >"$tmp/drill.out" 2>&1
ok_if "drill -D, NXDOMAIN: the NSEC proofs and their RRSIGs" \
	sh -c "grep -q 'rcode: NXDOMAIN' '$tmp/drill.out' &&
	       [ \$(grep -c '[[:space:]]NSEC[[:space:]]' '$tmp/drill.out') -ge 1 ] &&
	       grep -q 'RRSIG[[:space:]]*NSEC ' '$tmp/drill.out'"
# delv validates dnsnap's answers from the KSK made for the zone (the
# trust anchor): the DNSKEY RRset, the signatures and the NSEC proofs, all
# served from the cache, must verify.
key=$(sed 's/;.*//' "$tmp/zones/ksk.key" | awk '{ for (i = 7; i <= NF; i++) printf "%s", $i }')
printf 'trust-anchors {\n\tsigned.test. static-key 257 3 13 "%s";\n};\n' "$key" >"$tmp/anchor"
for q in "www.signed.test A" "www.signed.test AAAA" "txt.signed.test TXT" "x.wild.signed.test TXT" \
	 "alias.signed.test A" "signed.test MX" "nothere.signed.test A" "www.signed.test TXT"; do
	# shellcheck disable=SC2086
	delv @127.0.0.1 -p "$serve_port" -a "$tmp/anchor" +root=signed.test $q >"$tmp/delv.out" 2>&1
	if grep -q "^; \(negative response, \)\{0,1\}fully validated" "$tmp/delv.out"; then
		ok "delv, trust anchor the KSK: dnsnap's $q is fully validated"
	else
		not_ok "delv, trust anchor the KSK: dnsnap's $q is fully validated" "$tmp/delv.out" 20
	fi
done
# the check can fail: with another key as the anchor, nothing validates
(cd "$tmp" && ldns-keygen -a ECDSAP256SHA256 -k signed.test >"$tmp/other.name" 2>/dev/null)
key=$(sed 's/;.*//' "$tmp/$(cat "$tmp/other.name").key" | awk '{ for (i = 7; i <= NF; i++) printf "%s", $i }')
printf 'trust-anchors {\n\tsigned.test. static-key 257 3 13 "%s";\n};\n' "$key" >"$tmp/anchor"
delv @127.0.0.1 -p "$serve_port" -a "$tmp/anchor" +root=signed.test www.signed.test A \
	>"$tmp/delv.out" 2>&1
ok_if "delv with another KSK as the anchor: not validated" not_grep "fully validated" \
	"$tmp/delv.out"

# ------------------------------------------------------------- time
AGE=1000
start_serve "$tmp/snap" $((NOW + AGE)) "$tmp/serve-aged.log"
aged_port=$serve_port
qf=$tmp/q.all
cut -d' ' -f1 "$qf" >"$tmp/names"
dig @127.0.0.1 -p "$nsd_port" +tries=2 +time=2 +dnssec -f "$qf" >"$tmp/auth.txt" 2>&1
dig @127.0.0.1 -p "$aged_port" +tries=2 +time=2 +dnssec -f "$qf" >"$tmp/cache.txt" 2>&1
if "$cmp" --batch --age $AGE --max-ttl 86400 --qnames "$tmp/names" "$tmp/auth.txt" "$tmp/cache.txt" \
	>"$tmp/cmp.out" 2>&1; then
	ok "$AGE s later: every TTL is NSD's less $AGE, what lived less is gone (REFUSED)"
else
	not_ok "$AGE s later: TTLs aged, short-lived answers gone" "$tmp/cmp.out" 80
fi
# A cache keeps an answer at most max_ttl (1 day, dnsnap's default as
# Unbound's), and a client should not keep it longer: BIND and Unbound cap
# the TTLs they serve. dnsnap caps each record's TTL at max_ttl before aging
# it (engine/answer.c).
ttl=$(dig @127.0.0.1 -p "$aged_port" +noall +answer longttl.example.test A | awk '{ print $2 }')
ok_if "$AGE s later: longttl (TTL 2 days, kept 1 day) served with TTL at most 86400 - $AGE \
(got ${ttl:-none})" [ "${ttl:-999999}" -le $((86400 - AGE)) ]
gone=$(grep -c "status: REFUSED" "$tmp/cache.txt")
ok_if "$AGE s later: $gone answers gone (the negative ones, the 60 s one), others kept" \
	[ "$gone" -ge 5 ] && [ "$gone" -lt "$(wc -l <"$qf")" ]

# ---------------------------------------------------------------- the end
kill -TERM "$serve_pid"
wait "$serve_pid"
ok_if "dnsnap serve (aged): SIGTERM, exit 0" [ $? -eq 0 ]
finish
