#!/bin/sh
# unbound_module.sh: contrib/unbound/dnsnap.py in Debian's own Unbound
# ("validator python iterator", python3-unbound, the build's libdnsnap.so.1
# through LD_LIBRARY_PATH).
#
# NSD serves the e2e zones (lib.sh), signed.test with an RRset added unsigned
# (bogus.signed.test A: bogus to a validator), example.test with a CNAME of 2
# days before an A of 60 s; Unbound resolves them through stub zones, with
# signed.test's KSK as trust anchor.
#   1. Every e2e question Unbound can answer (as tests/e2e/forward.sh asks
#      them), and two spelt in mixed case (0x20), asked once (the misses),
#      then again as the hit round of forward.sh (DO=0, DO=1, some CD=1, some
#      without AD): Unbound's own answers, kept as "before".
#   2. Unbound stopped: the module published its snapshot at the path
#      DNSNAP_UNBOUND_SNAP names (not the settings file's); dnsnap verify,
#      info, get, dump and export read it.
#   3. With NSD still up, other files at the snapshot path: a byte of LMDB's
#      meta pages changed, a byte of an entry changed, the file cut in half, a
#      text file: Unbound starts and answers every question (NOERROR as
#      before); the module says one line at the start (a cold start and why;
#      a warm start without the damaged entry, which Unbound asks NSD again), and at
#      the stop replaces the damaged and truncated files with a good
#      snapshot, leaves the foreign one as it was.
#   4. Publishing: with publish-interval 0 nothing is published while Unbound
#      runs until PATH.publish appears (then the names are in the file); with
#      publish-interval 1 the names asked are in the file within seconds; a
#      kill -9 after that leaves a whole snapshot holding both sets; a file
#      another writer publishes at the path (dnsnap purge) is taken in.
#   5. The snapshot of 2 back, NSD stopped (and checked gone), Unbound started
#      again: every question of the hit round answered as before
#      (tests/e2e/dnscmp --peer: rcode, every flag, the question's spelling,
#      the records by section, each TTL at most its twin's and at most 60 s
#      below it), the signed answers with AD, all from the module (its count
#      at the stop); the bogus name never with AD, nor its data with CD=0; a
#      reload (SIGHUP: the module's deinit and init) answers them all again.
# Usage (from the repository root): tests/e2e/unbound_module.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
need nsd unbound dig ldns-keygen ldns-signzone setsid ss "$build/dnsnap" "$cmp" \
	"$build/libdnsnap.so.1"
[ -f /usr/lib/python3/dist-packages/unboundmodule.py ] ||
	bail "python3-unbound is installed (make deps installs it)"
unbound -V 2>&1 | grep -q '^Linked modules:.* python' || bail "this Unbound has a python module"

serial=$(date +%s)
make_zones "$serial"
printf 'mixttl\t172800\tCNAME\tshort\n' >>"$tmp/zones/example.test.zone"
printf 'bogus.signed.test.\t3600\tIN\tA\t192.0.2.66\n' >>"$tmp/zones/signed.test.zone"
start_nsd "$serial"

snap=$tmp/unbound/dnsnap.snap
conf=$tmp/dnsnap.conf
cat >"$conf" <<EOF
# the module's settings (DNSNAP_UNBOUND_CONF); DNSNAP_UNBOUND_SNAP names the snapshot
snapshot: $tmp/from-conf.snap
publish-interval: 300
max-bytes: 64M
EOF
ub_modules="validator python iterator"
ub_extra="python:
	python-script: \"$(pwd)/contrib/unbound/dnsnap.py\""
base_env="PYTHONPATH=/usr/lib/python3/dist-packages LD_LIBRARY_PATH=$(cd "$build" && pwd)"
ub_env="$base_env DNSNAP_UNBOUND_CONF=$conf DNSNAP_UNBOUND_SNAP=$snap"
ublog=$tmp/unbound/log
start_unbound

# the questions Unbound can answer (as forward.sh's), and two in mixed case
{
	queries_example
	queries_signed
	echo "mixttl.example.test A"
	echo "WwW.ExAmPlE.TeSt A"
	echo "MaIl.SiGnEd.TeSt MX"
} | grep -v -e '^sub\.' -e '\.sub\.' -e 'nog\.' -e '^ext\.' >"$tmp/q"
nq=$(wc -l <"$tmp/q")
awk '{ print $1, $2, (NR % 2 ? "+nodnssec" : "+dnssec") }' "$tmp/q" >"$tmp/miss.batch"
awk '{ print $1, $2, "+nodnssec"; print $1, $2, "+dnssec"
	if (NR % 3 == 0) print $1, $2, "+dnssec +cdflag"
	if (NR % 4 == 0) print $1, $2, "+nodnssec +noadflag" }' "$tmp/q" >"$tmp/hit.batch"
cut -d' ' -f1 "$tmp/hit.batch" >"$tmp/hit.names"
nh=$(wc -l <"$tmp/hit.batch")

# ask PORT BATCH OUT [TIME]: every question of BATCH, as dig asks them
ask() { dig @127.0.0.1 -p "$1" +tries=1 +time="${4:-5}" -f "$2" >"$3" 2>&1; }
# verified SNAP: dnsnap verify finds every byte as written
verified() { "$build/dnsnap" verify "$1" >/dev/null 2>&1; }
# log_from N: Unbound's log after its first N lines (one run's)
log_from() { tail -n +$(($1 + 1)) "$ublog"; }
# restart_unbound ENV...: Unbound again on the port and config start_unbound
# wrote, with ENV; up when its port is bound (NSD may be down)
restart_unbound() {
	stop "-$ub_pid"
	wait "$ub_pid" 2>/dev/null
	ub_lines=$(wc -l <"$ublog")
	# shellcheck disable=SC2068,SC2086 # words
	setsid env $@ unbound -d -c "$tmp/unbound/unbound.conf" >>"$tmp/unbound/out" 2>&1 &
	ub_pid=$!
	e2e_procs="$e2e_procs -$ub_pid"
	wait_for 20 sh -c "ss -Hlnu '( sport = :$ub_port )' | grep -q ." ||
		bail "unbound starts again on 127.0.0.1:$ub_port" "$ublog"
}
# stop_unbound: SIGTERM, and gone (its final publish is in the log then)
stop_unbound() {
	stop "-$ub_pid"
	wait "$ub_pid" 2>/dev/null
}
# bogus CASE: the bogus name asked with CD=1, then CD=0: its data without AD,
# then SERVFAIL. After the restart, with NSD gone, the validator (which checks
# CD=1 answers too) finds the snapshot's copy bogus and asks again without the
# caches, which no server answers now: never AD, never the data for CD=0, and
# the reply, if one comes in 5 s, SERVFAIL for CD=0.
bogus() {
	dig @127.0.0.1 -p "$ub_port" +tries=1 +time=5 +dnssec +cdflag bogus.signed.test A \
		>"$tmp/bogus1" 2>&1
	dig @127.0.0.1 -p "$ub_port" +tries=1 +time=5 +dnssec bogus.signed.test A >"$tmp/bogus0" 2>&1
	_r0=$(dig_rcode "$tmp/bogus0")
	_a1=$(dig_a "$tmp/bogus1")
	case $1 in
	before*)
		ok_if "$1: bogus.signed.test A with CD=1: its data ($_a1), without AD" \
			eval "[ '$_a1' = '192.0.2.66 ' ] && not_grep -q 'flags:.* ad[; ]' '$tmp/bogus1'"
		ok_if "$1: with CD=0 SERVFAIL ($_r0)" [ "$_r0" = SERVFAIL ] ;;
	*)
		ok_if "$1: bogus.signed.test A never AD (CD=1: ${_a1:-no reply in 5 s})" \
			eval "not_grep -q 'flags:.* ad[; ]' '$tmp/bogus1' '$tmp/bogus0'"
		ok_if "$1: with CD=0 no data (${_r0:-no reply in 5 s})" \
			eval "{ [ '$_r0' = SERVFAIL ] || [ -z '$_r0' ]; } && [ -z '$(dig_a "$tmp/bogus0")' ]" ;;
	esac
}

# ---------------------------------------------------------- 1. before the stop
ask "$ub_port" "$tmp/miss.batch" "$tmp/misses"
ask "$ub_port" "$tmp/hit.batch" "$tmp/before"
ok_if "Unbound with the module answers the $nq questions, none SERVFAIL" \
	eval "not_grep -q 'status: SERVFAIL' '$tmp/misses' && not_grep -q 'status: SERVFAIL' '$tmp/before'"
got=$(grep -c -- '->>HEADER<<-' "$tmp/before")
ok_if "the hit round: $nh replies ($got)" [ "$got" -eq "$nh" ]
nad=$(grep -c 'flags:.* ad[; ]' "$tmp/before")
ok_if "signed.test's answers carry AD ($nad replies)" [ "$nad" -gt 20 ]
grep -q "dnsnap: $snap: no snapshot yet: a cold start" "$ublog" ||
	not_ok "the first start: 'no snapshot yet: a cold start'" "$ublog"
bogus "before the restart"

# ------------------------------------------------------------- 2. the stop
stop_unbound
ok_if "stopped: the module published $snap" \
	grep -q "dnsnap: $snap: published (Unbound's stop or reload): " "$ublog"
ok_if "DNSNAP_UNBOUND_SNAP over the settings file (no $tmp/from-conf.snap)" \
	[ ! -e "$tmp/from-conf.snap" ]
ok_if "dnsnap verify: the module's snapshot is whole" verified "$snap"
n=$("$build/dnsnap" info --json "$snap" | sed -n 's/.*"entries": *\([0-9]*\).*/\1/p')
ok_if "dnsnap info: $n entries (the $nq questions and the validator's DNSKEY)" \
	[ "${n:-0}" -gt "$nq" ]
"$build/dnsnap" get "$snap" www.signed.test A >"$tmp/get" 2>&1
ok_if "dnsnap get www.signed.test A: the two addresses" \
	eval "[ \"\$(dig_a '$tmp/get')\" = '192.0.2.80 192.0.2.81 ' ]"
ok_if "dnsnap dump --zone signed.test: the RRSIGs and the DNSKEY" \
	sh -c "'$build/dnsnap' dump '$snap' --zone signed.test | grep -q 'IN	DNSKEY	257 ' &&
		'$build/dnsnap' dump '$snap' --zone signed.test | grep -q 'IN	RRSIG	A '"
ok_if "dnsnap export: the stream" "$build/dnsnap" export "$snap" -o "$tmp/module.dnsx"
cp "$snap" "$tmp/good.snap"

# ------------------------------------------- 3. bad files at the snapshot path
bad=$tmp/bad.snap
# damage KIND: the file KIND at $bad
damage() {
	rm -f "$bad"
	case $1 in
	meta) # the main database's root in both of LMDB's meta pages
		cp "$tmp/good.snap" "$bad"
		for off in 132 4228; do
			printf '\125' | dd of="$bad" bs=1 seek=$off conv=notrunc 2>/dev/null
		done ;;
	entry) # the first entry holding the A record 192.0.2.80: its last byte
		cp "$tmp/good.snap" "$bad"
		off=$(LC_ALL=C grep -obUaP '\xc0\x00\x02\x50' "$bad" | head -n 1 | cut -d: -f1)
		printf '\121' | dd of="$bad" bs=1 seek=$((${off:-0} + 3)) conv=notrunc 2>/dev/null ;;
	truncated) head -c $(($(stat -c %s "$tmp/good.snap") / 2)) "$tmp/good.snap" >"$bad" ;;
	foreign) cp "$tmp/zones/example.test.zone" "$bad" ;;
	esac
	cp "$bad" "$tmp/bad.orig"
}
# kind, what the start's one line must say
for k in "meta:damaged.*a cold start" "entry:damaged (.*a warm start" "truncated:truncated.*a cold start" \
	"foreign:not a snapshot.*a cold start"; do
	kind=${k%%:*}
	want=${k#*:}
	damage "$kind"
	restart_unbound "$base_env" "DNSNAP_UNBOUND_CONF=$conf" "DNSNAP_UNBOUND_SNAP=$bad"
	ask "$ub_port" "$tmp/miss.batch" "$tmp/bad.$kind"
	log_from "$ub_lines" >"$tmp/log.$kind"
	grep 'dnsnap: ' "$tmp/log.$kind" >"$tmp/said.$kind"
	ok_if "$kind file: Unbound answers the $nq questions, none SERVFAIL" \
		eval "[ \$(grep -c 'status: NOERROR\|status: NXDOMAIN' '$tmp/bad.$kind') -eq $nq ]"
	ok_if "$kind file: one line from the module, '$want'" \
		eval "[ \$(wc -l <'$tmp/said.$kind') -eq 1 ] && grep -q '$want' '$tmp/said.$kind'"
	ok_if "$kind file: no exception" not_grep -q -e Traceback -e Exception "$tmp/log.$kind"
	stop_unbound
	log_from "$ub_lines" >"$tmp/log.$kind"
	if [ "$kind" = foreign ]; then
		ok_if "foreign file: left as it was, and said so" eval "cmp -s '$bad' '$tmp/bad.orig' &&
			grep -q 'not a snapshot.*left as it is' '$tmp/log.$kind'"
	else
		ok_if "$kind file: replaced at the stop by a whole snapshot" verified "$bad"
	fi
done

# ---------------------------------------------------------- 4. publishing
k9=$tmp/k9.snap
printf 'publish-interval: 0\n' >"$tmp/every0.conf"
printf 'publish-interval: 1\n' >"$tmp/every1.conf"
set_a="www.example.test:A mail.example.test:A alias.example.test:A www.signed.test:A txt.signed.test:TXT"
set_b="www.example.test:AAAA mail.example.test:AAAA mail.example.test:MX www.signed.test:AAAA multi.example.test:TXT"
# ask_set SET: each question of SET once; in_snap SET: each in $k9 (dnsnap get)
ask_set() {
	for q in $1; do
		dig @127.0.0.1 -p "$ub_port" +tries=1 +time=5 "${q%:*}" "${q#*:}" >/dev/null 2>&1
	done
}
in_snap() {
	for q in $1; do
		"$build/dnsnap" get "$k9" "${q%:*}" "${q#*:}" >/dev/null 2>&1 || return 1
	done
}
restart_unbound "$base_env" "DNSNAP_UNBOUND_CONF=$tmp/every0.conf" "DNSNAP_UNBOUND_SNAP=$k9"
ask_set "$set_a"
sleep 2
ok_if "publish-interval 0: nothing published while Unbound runs" [ ! -e "$k9" ]
: >"$k9.publish"
# demanded: the request taken (the file gone) and set A in the snapshot
demanded() { [ ! -e "$k9.publish" ] && in_snap "$set_a"; }
ok_if "PATH.publish: published on demand, the file removed, every name in it" wait_for 10 demanded
ok_if "the log says so" grep -q "dnsnap: $k9: published (on demand): " "$ublog"
kill -KILL "-$ub_pid"
wait "$ub_pid" 2>/dev/null
restart_unbound "$base_env" "DNSNAP_UNBOUND_CONF=$tmp/every1.conf" "DNSNAP_UNBOUND_SNAP=$k9"
ask_set "$set_b"
wait_for 10 in_snap "$set_b"
ok_if "publish-interval 1: the names asked are in the file within 10 s" in_snap "$set_b"
"$build/dnsnap" purge "$k9" --name signed.test --type DNSKEY >/dev/null 2>&1
ok_if "a file another writer published (dnsnap purge) is taken in" \
	wait_for 10 grep -q "dnsnap: taken in (replaced by another writer): $k9: " "$ublog"
kill -KILL "-$ub_pid"
wait "$ub_pid" 2>/dev/null
ok_if "kill -9: a whole snapshot is left" verified "$k9"
ok_if "kill -9: every name published before it is there (both sets)" \
	eval "in_snap '$set_a' && in_snap '$set_b'"

# ---------------------------------------------- 5. the restart, NSD gone
cp "$tmp/good.snap" "$snap.new"
mv "$snap.new" "$snap"
stop "-$nsd_pid"
ok_if "NSD stopped" eval "! running -$nsd_pid"
restart_unbound "$ub_env"
ask "$ub_port" "$tmp/hit.batch" "$tmp/after"
if "$cmp" --batch --peer --within 60 --qnames "$tmp/hit.names" "$tmp/before" "$tmp/after" \
	>"$tmp/cmp.after" 2>&1; then
	ok "restart, NSD gone: the $nh answers are Unbound's before the stop (flags, records, TTLs aged)"
else
	not_ok "restart, NSD gone: the $nh answers are Unbound's before the stop" "$tmp/cmp.after" 200
fi
nad2=$(grep -c 'flags:.* ad[; ]' "$tmp/after")
ok_if "restart: the signed answers validated again, AD on $nad2 (as before: $nad)" \
	[ "$nad2" -eq "$nad" ]
grep -q "dnsnap: $snap: .* entries, written .*: a warm start" "$ublog" ||
	not_ok "restart: 'a warm start' logged" "$ublog"
stop_unbound
log_from "$ub_lines" | sed -n 's/.*dnsnap: .*: \([0-9]*\) answers from dnsnap, \([0-9]*\) queries passed on.*/\1 \2/p' \
	>"$tmp/counts"
read -r hits passed <"$tmp/counts"
ok_if "restart: $hits answers from the snapshot, none passed on ($passed)" \
	[ "${hits:-0}" -ge "$nq" -a "${passed:-1}" -eq 0 ]
restart_unbound "$ub_env"
bogus "after the restart"
# a reload (SIGHUP): the module's deinit and init, Unbound's cache emptied
warm0=$(grep -c "dnsnap: $snap: .*: a warm start" "$ublog")
kill -HUP "$ub_pid"
wait_for 10 sh -c "[ \$(grep -c 'dnsnap: $snap: .*: a warm start' '$ublog') -gt $warm0 ]"
ask "$ub_port" "$tmp/miss.batch" "$tmp/reloaded"
ok_if "a reload: published and mapped again, the $nq questions answered from it, NSD gone" \
	eval "[ \$(grep -c 'status: NOERROR\|status: NXDOMAIN' '$tmp/reloaded') -eq $nq ] &&
		grep -q 'published (Unbound.s stop or reload)' '$ublog'"
stop_unbound
finish
