#!/bin/sh
# l2_shared.sh: dnsnap serve --upstream --l2 redis://..., a fleet sharing one
# Redis (issue 14). NSD serves the e2e zones, Unbound resolves them, one
# redis-server (no persistence) holds the shared tier; every process is ours,
# on 127.0.0.1.
#   1. F1, F2, F3 forward to Unbound with --l2 the one Redis. F1 learns every
#      question Unbound can answer: each upstream answer written to Redis
#      (l2.writes and DBSIZE are the questions' count).
#   2. Expiry: a key's PTTL is its entry's TTL (a name of TTL 3, a name of
#      TTL 1 day), and the short one is gone from Redis once it expired.
#   3. Values written by hand under real keys (garbage, a flipped bit, another
#      key's valid value, 10 MB): F2 asked those names gets the upstream's
#      answer, never the bad data; l2.bad (l2.errors for the 10 MB, which the
#      client does not read as a value) counts each.
#   4. export --to then import --from: F1's snapshot pushed under another
#      prefix, a garbage key beside it, read back: dnsnap diff says equal, the
#      garbage skipped and counted.
#   5. Unbound and NSD stopped: F2 and F3 answer every question as F1 does
#      (dnscmp --peer --within 2), all from Redis (l2.hits), nothing asked
#      upstream; F3 with DO the other way round.
#   6. Redis killed (SIGKILL) during a dnsperf flood through F4 (another
#      upstream, fakeup.py, and the default --l2-wait of 10 ms): every query
#      answered NOERROR, none later than 1 s, the breaker open, l2.refused
#      grows; Redis started again on its port: a name written by W is read
#      from Redis by F4 (l2.hits grows again).
# A --l2-wait of 200 ms where the check needs the L2 answer (this machine may
# be loaded; the 10 ms default is for production): a slow Redis reply would
# otherwise turn into an upstream query, or a SERVFAIL with upstream stopped.
#
# Usage (from the repository root): tests/e2e/l2_shared.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
cmp=$build/dnscmp
need nsd unbound dig ldns-keygen ldns-signzone setsid python3 dnsperf redis-server redis-cli \
	"$build/dnsnap" "$cmp"
need_forwarder
"$build/dnsnap" serve --help 2>&1 | grep -q -- '--l2 ' ||
	bail "dnsnap serve has --l2 (its --help names it)"

serial=$(date +%s)
make_zones "$serial"
printf 'ttl3\t3\tA\t192.0.2.33\nforeign\t3600\tA\t192.0.2.202\n' >>"$tmp/zones/example.test.zone"
start_nsd "$serial"
start_unbound
start_redis redis 0
rport=$redis_port
rpid=$redis_pid
l2="redis://127.0.0.1:$rport"
ok "Redis on 127.0.0.1:$rport, Unbound on $ub_port, NSD on $nsd_port"

# the questions Unbound can answer (as forward.sh), each once, DO=0 and DO=1
# in turn; and each with DO the other way round
{
	queries_example
	queries_signed
} | grep -v -e '^sub\.' -e '\.sub\.' -e 'nog\.' -e '^ext\.' >"$tmp/q"
nq=$(wc -l <"$tmp/q")
awk '{ print $1, $2, (NR % 2 ? "+nodnssec" : "+dnssec") }' "$tmp/q" >"$tmp/learn"
awk '{ print $1, $2, (NR % 2 ? "+dnssec" : "+nodnssec") }' "$tmp/q" >"$tmp/other"
cut -d' ' -f1 "$tmp/learn" >"$tmp/learn.names"
cut -d' ' -f1 "$tmp/other" >"$tmp/other.names"
# ask PORT BATCH OUT: every question of BATCH, as dig asks them
ask() { dig @127.0.0.1 -p "$1" +tries=1 +time=5 -f "$2" >"$3" 2>&1; }
# q PORT NAME [TYPE]: one question; the reply in $tmp/r
q() { dig @127.0.0.1 -p "$1" +tries=1 +time=5 "$2" "${3:-A}" >"$tmp/r" 2>&1; }
# upq JSON: the queries sent to every upstream, summed
upq() {
	jget "$1" upstreams | python3 -c 'import json, sys
try:
    print(sum(u["queries"] for u in json.load(sys.stdin)))
except Exception:
    print("none")'
}
# settled NAME PID N: FWD's writes to Redis are done: none queued, at least N
# written (polled: a write is queued once the answer is sent)
settled() {
	_c=$(fwd_counters "$1" "$2")
	[ "$(jget "$_c" l2.write_queue)" = 0 ] && [ "$(jget "$_c" l2.writes)" -ge "$3" ] 2>/dev/null
}
# key_of LABEL: the hex of the one key under dnsnap: holding the label LABEL
# (length-prefixed, as every name is in a key), empty when none or several
key_of() {
	_l=$(printf '%02x%s' "${#1}" "$(printf '%s' "$1" | od -An -tx1 | tr -d ' \n')")
	resp "$rport" scan 'dnsnap:*' | grep "$_l" >"$tmp/keys.$1"
	[ "$(wc -l <"$tmp/keys.$1")" -eq 1 ] && cat "$tmp/keys.$1"
}

# Unbound once, to warm it: F1's misses then get Unbound's cached answers
ask "$ub_port" "$tmp/learn" "$tmp/ub.warm"
ok_if "Unbound answers the $nq questions (none SERVFAIL)" \
	not_grep -q 'status: SERVFAIL' "$tmp/ub.warm"

fargs="--listen 127.0.0.1:0 --upstream 127.0.0.1:$ub_port --upstream-timeout 1000
	--upstream-tries 1 --l2 $l2 --l2-wait 200"
# shellcheck disable=SC2086 # $fargs: words
start_fwd f1 "$tmp/f1.snap" $fargs
f1=$fwd_port
f1_pid=$fwd_pid
# shellcheck disable=SC2086
start_fwd f2 "$tmp/f2.snap" $fargs
f2=$fwd_port
f2_pid=$fwd_pid
# shellcheck disable=SC2086
start_fwd f3 "$tmp/f3.snap" $fargs
f3=$fwd_port
f3_pid=$fwd_pid
ok "F1, F2, F3: dnsnap serve --upstream Unbound --l2 $l2 (ports $f1 $f2 $f3)"

# ------------------------------------------------------- 1. F1 learns, writes
c0=$(fwd_counters f1 "$f1_pid")
ask "$f1" "$tmp/learn" "$tmp/f1.learn"
ok_if "F1 answers the $nq questions (none SERVFAIL)" not_grep -q 'status: SERVFAIL' "$tmp/f1.learn"
wait_for 10 settled f1 "$f1_pid" "$nq"
c1=$(fwd_counters f1 "$f1_pid")
m=$(jdelta "$c0" "$c1" misses)
w=$(jgdelta "$c0" "$c1" l2.writes)
we=$(jgdelta "$c0" "$c1" l2.write_errors)
wd=$(jgdelta "$c0" "$c1" l2.write_drops)
lm=$(jgdelta "$c0" "$c1" l2.misses)
ok_if "F1: $nq misses ($m), each looked up in Redis and not found (l2.misses +$lm)" \
	[ "$m" = "$nq" -a "$lm" = "$nq" ]
ok_if "F1: the $nq answers written to Redis (l2.writes +$w, write_errors +$we, drops +$wd)" \
	[ "$w" = "$nq" -a "$we" = 0 -a "$wd" = 0 ]
n=$(redis_dbsize "$rport")
nk=$(resp "$rport" scan 'dnsnap:*' | wc -l)
ok_if "Redis holds $nq keys (DBSIZE $n), all under dnsnap: ($nk)" [ "$n" = "$nq" -a "$nk" = "$nq" ]

# ------------------------------------------------------------ 2. expiry
q "$f1" ttl3.example.test
kt=$(key_of ttl3)
wait_for 5 settled f1 "$f1_pid" "$((nq + 1))"
pt=$(resp "$rport" call PTTL "x:$kt")
q "$f1" ttl3.example.test
t3=$(dig_ttls "$tmp/r")
# PTTL is the entry's time left in ms; dnsnap's answer gives it in seconds,
# rounded down: they differ by less than 1.5 s (a second of rounding, and the
# time between the two reads)
close_ms() { [ "$1" -gt 0 ] && [ "$1" -gt $(($2 * 1000 - 1500)) ] && [ "$1" -lt $(($2 * 1000 + 1500)) ]; }
ok_if "expiry: ttl3 (TTL 3) has one key (${kt:-none}), its PTTL ${pt:-none} ms ~ the entry's TTL ${t3:-none}s" \
	close_ms "${pt:-0}" "${t3:-0}" 2>/dev/null
kl=$(key_of longttl)
pl=$(resp "$rport" call PTTL "x:$kl")
q "$f1" longttl.example.test
tl=$(dig_ttls "$tmp/r")
ok_if "expiry: longttl (TTL $tl) has its PTTL ${pl:-none} ms" close_ms "${pl:-0}" "${tl:-0}" 2>/dev/null

# ------------------------------------------------------ 3. bad values by hand
# each name is learned by F1 (a good value in Redis), the value replaced by
# hand (the key's expiry kept), then asked of F2, which never saw it; the
# right answer is the wildcard's 192.0.2.200 (from Unbound)
for l in badgarbage badflip badforeign badbig; do
	echo "$l.wild.example.test A"
done >"$tmp/bad.batch"
echo "foreign.example.test A" >>"$tmp/bad.batch"
ask "$f1" "$tmp/bad.batch" "$tmp/bad.learn"
wait_for 5 settled f1 "$f1_pid" "$((nq + 6))"
ks=$(key_of foreign)
resp "$rport" get "$ks" "$tmp/foreign.val"
# the bad values: garbage; a bit flipped in the address (192.0.2.200 becomes
# .201: served, it would show); foreign.example.test's value (192.0.2.202),
# valid for its own key; a
# value of 10 MB behind a right magic and version
head -c 300 /dev/urandom >"$tmp/val.badgarbage"
kf=$(key_of badflip)
resp "$rport" get "$kf" "$tmp/badflip.val"
python3 -c 'import sys
v = bytearray(open(sys.argv[1], "rb").read())
i = v.find(bytes([192, 0, 2, 200]))
v[i + 3] ^= 1
open(sys.argv[2], "wb").write(v)
sys.exit(0 if i >= 0 else 1)' "$tmp/badflip.val" "$tmp/val.badflip" ||
	not_ok "badflip: its value holds 192.0.2.200 (to flip a bit of)"
cp "$tmp/foreign.val" "$tmp/val.badforeign"
{
	printf '\325NSL\001\000'
	head -c 10485760 /dev/zero
} >"$tmp/val.badbig"
for l in badgarbage badflip badforeign badbig; do
	k=$(key_of $l)
	if [ -z "$k" ] || ! resp "$rport" call SET "x:$k" "@$tmp/val.$l" KEEPTTL >/dev/null; then
		not_ok "$l: its key found and its value replaced (key ${k:-none})"
		continue
	fi
	c0=$(fwd_counters f2 "$f2_pid")
	q "$f2" "$l.wild.example.test"
	c1=$(fwd_counters f2 "$f2_pid")
	cp "$tmp/r" "$tmp/r.$l"
	what=l2.bad
	[ $l = badbig ] && what=l2.errors
	d=$(jgdelta "$c0" "$c1" "$what")
	u=$(jdelta "$c0" "$c1" upstream_answers)
	h=$(jgdelta "$c0" "$c1" l2.hits)
	got="$(dig_rcode "$tmp/r") $(dig_a "$tmp/r")"
	ok_if "$l: F2 answers from upstream ($got, upstream_answers +$u), $what +$d, l2.hits +$h" \
		[ "$got" = "NOERROR 192.0.2.200 " -a "$u" = 1 -a "$d" = 1 -a "$h" = 0 ]
	# F2's own answer is then written over the bad value
	wait_for 5 sh -c "python3 tests/helpers/resp.py $rport get $k '$tmp/now.$l' &&
		! cmp -s '$tmp/now.$l' '$tmp/val.$l'"
	ok_if "$l: F2's write replaced the bad value in Redis" eval "! cmp -s '$tmp/now.$l' '$tmp/val.$l'"
done
c=$(fwd_counters f2 "$f2_pid")
ok_if "F2: no hit from Redis so far (l2.hits $(jget "$c" l2.hits), hits_l2 $(jget "$c" hits_l2))" \
	[ "$(jget "$c" l2.hits)" = 0 -a "$(jget "$c" hits_l2)" = 0 ]

# a name of TTL 3 is gone from Redis once its entry expired (3 s after F1
# learned it, which is long past: polled for up to 10 s more)
gone() { [ "$(resp "$rport" call EXISTS "x:$kt")" = 0 ]; }
ok_if "expiry: ttl3's key is gone from Redis once its entry expired" wait_for 10 gone

# ------------------------------------------------ 4. export --to, import --from
c0=$(fwd_counters f1 "$f1_pid")
kill -USR2 "$f1_pid"
published() {
	_c=$(fwd_counters f1 "$f1_pid")
	[ "$(jdelta "$c0" "$_c" snapshot_writes)" -ge 1 ] 2>/dev/null
}
wait_for 10 published || not_ok "F1 publishes its snapshot on SIGUSR2"
cp "$tmp/f1.snap" "$tmp/rt.snap"
live=$(jget "$("$build/dnsnap" info "$tmp/rt.snap" --json)" live)
"$build/dnsnap" export "$tmp/rt.snap" --to "$l2" --l2-prefix rt: >"$tmp/export.out" 2>&1
rc=$?
nrt=$(resp "$rport" scan 'rt:*' | wc -l)
ok_if "export --to $l2 --l2-prefix rt: (exit $rc): the $live live entries, $nrt keys" \
	[ "$rc" = 0 -a "$nrt" = "$live" -a "$live" -gt "$nq" ]
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/export.out"
rcli "$rport" set rt:garbage 'not a dnsnap value' >/dev/null
"$build/dnsnap" import --from "$l2" --l2-prefix rt: -o "$tmp/rt2.snap" --json \
	>"$tmp/import.out" 2>"$tmp/import.err"
rc=$?
j=$(tail -n 1 "$tmp/import.out")
ok_if "import --from (exit $rc): $(jget "$j" entries) entries, $(jget "$j" skipped) skipped (the garbage)" \
	[ "$rc" = 0 -a "$(jget "$j" entries)" = "$live" -a "$(jget "$j" skipped)" = 1 ]
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/import.err"
if "$build/dnsnap" diff "$tmp/rt.snap" "$tmp/rt2.snap" --live >"$tmp/diff.out" 2>&1; then
	ok "dnsnap diff --live: the snapshot read back from Redis equals F1's"
else
	not_ok "dnsnap diff --live: the snapshot read back from Redis equals F1's" "$tmp/diff.out"
fi

# ---------------------------------------- 5. the upstream gone: from Redis
stop "-$ub_pid"
stop "-$nsd_pid"
ok_if "Unbound and NSD stopped" eval "! running -$ub_pid && ! running -$nsd_pid"
# share NAME PORT PID BATCH: F1 asked BATCH (its answers from memory), then
# NAME: the same answers, each a hit from Redis, nothing sent upstream
share() {
	ask "$f1" "$4" "$tmp/f1.$1"
	_c0=$(fwd_counters "$1" "$3")
	ask "$2" "$4" "$tmp/$1.out"
	_c1=$(fwd_counters "$1" "$3")
	if "$cmp" --batch --peer --within 2 --qnames "$4.names" "$tmp/f1.$1" "$tmp/$1.out" \
		>"$tmp/cmp.$1" 2>&1; then
		ok "$1: the $nq answers are F1's, upstream gone (flags, records, TTLs within 2 s)"
	else
		not_ok "$1: the $nq answers are F1's, upstream gone" "$tmp/cmp.$1" 200
	fi
	_h=$(jdelta "$_c0" "$_c1" hits_l2)
	_lh=$(jgdelta "$_c0" "$_c1" l2.hits)
	_u=$(upq "$_c1")
	ok_if "$1: $nq hits from Redis (hits_l2 +$_h, l2.hits +$_lh), upstream asked nothing (queries $_u)" \
		[ "$_h" = "$nq" -a "$_lh" = "$nq" -a "$_u" = "$(upq "$_c0")" ]
}
share f2 "$f2" "$f2_pid" "$tmp/learn"
share f3 "$f3" "$f3_pid" "$tmp/other"

# ------------------------------------------ 6. Redis killed during a flood
start_fakeup up --mode answer --ttl 3600 --addr 192.0.2.9
fargs="--listen 127.0.0.1:0 --upstream 127.0.0.1:$fk_port --upstream-timeout 1000
	--upstream-tries 2 --l2 $l2"
# shellcheck disable=SC2086
start_fwd w "$tmp/w.snap" $fargs --l2-wait 200
w=$fwd_port
w_pid=$fwd_pid
# shellcheck disable=SC2086
start_fwd f4 "$tmp/f4.snap" $fargs
f4=$fwd_port
f4_pid=$fwd_pid
# W learns the flood's names (each once, written to Redis); F4 then asks
# each once: a miss in memory, a hit in Redis until Redis dies, then upstream
seq 1 5000 | sed 's/.*/f&.flood.test A/' >"$tmp/flood"
dnsperf -s 127.0.0.1 -p "$w" -d "$tmp/flood" -n 1 -c 4 -Q 2000 -t 3 >"$tmp/learnflood.out" 2>&1
wait_for 20 settled w "$w_pid" 5000
c=$(fwd_counters w "$w_pid")
ok_if "W learned the 5000 flood names, written to Redis (l2.writes $(jget "$c" l2.writes))" \
	[ "$(jget "$c" l2.writes)" = 5000 ]
c0=$(fwd_counters f4 "$f4_pid")
dnsperf -s 127.0.0.1 -p "$f4" -d "$tmp/flood" -n 1 -c 4 -Q 1000 -t 3 >"$tmp/flood.out" 2>&1 &
perf_pid=$!
e2e_procs="$e2e_procs $perf_pid"
sleep 2 # a third of the flood from Redis
stop_redis "$rpid" KILL
ok_if "Redis killed (SIGKILL) during the flood" eval "! running $rpid"
wait "$perf_pid"
rc=$?
c1=$(fwd_counters f4 "$f4_pid")
sed -n 's/^ *\(Queries [a-z]*\|Response codes\): */\1: /p' "$tmp/flood.out" | sed 's/^/# /'
lost=$(sed -n 's/^ *Queries lost: *\([0-9][0-9]*\).*/\1/p' "$tmp/flood.out")
done_=$(sed -n 's/^ *Queries completed: *\([0-9][0-9]*\).*/\1/p' "$tmp/flood.out")
codes=$(sed -n 's/^ *Response codes: *//p' "$tmp/flood.out")
ok_if "the flood: dnsperf ran (exit $rc), 5000 queries completed (${done_:-none}), lost ${lost:-none}" \
	[ "$rc" = 0 -a "${done_:-0}" = 5000 -a "${lost:-x}" = 0 ]
all_noerror=no
case "$codes" in "NOERROR 5000 (100.00%)") all_noerror=yes ;; esac
ok_if "the flood: every reply NOERROR ($codes)" [ "$all_noerror" = yes ]
h=$(jgdelta "$c0" "$c1" l2.hits)
u=$(jdelta "$c0" "$c1" upstream_answers)
ok_if "the flood: answers from Redis before the kill (l2.hits +$h), from upstream after (+$u)" \
	[ "$h" -gt 0 -a "$u" -gt 0 -a $((h + u)) -ge 5000 ] 2>/dev/null
# No answer waited on the dead Redis: with --l2-wait 10 a query waits 10 ms at
# most for Redis, then its upstream (fakeup, on loopback); a bound of 1 s is
# about behaviour (a blocked connect or a read waiting for a reply that never
# comes would take seconds), not speed on a loaded machine. The histograms
# count every answer of each path.
for p in cache l2 upstream; do
	a=$(hist_over "$c0" answer_latency_$p 1000000)
	b=$(hist_over "$c1" answer_latency_$p 1000000)
	ok_if "the flood: no answer from $p took over 1 s (answer_latency_$p above 1 s: $a, then $b)" \
		[ "$a" != none -a "$a" = "$b" ]
done
br=$(jget "$c1" l2.breaker)
rf=$(jgdelta "$c0" "$c1" l2.refused)
e=$(jgdelta "$c0" "$c1" l2.errors)
t=$(jgdelta "$c0" "$c1" l2.timeouts)
ok_if "Redis dead: the breaker not closed ($br), l2.refused +$rf, l2.errors +$e, timeouts +$t" \
	[ "$br" != closed -a "$br" != none -a "$rf" -gt 0 -a $((e + t)) -gt 0 ] 2>/dev/null

# Redis again on its port (empty): a name learned by W is read from Redis by
# F4 once its breaker lets a GET through (half-open after at most 30 s) and
# its connection is back (the backoff's step is at most 5 s)
start_redis redis "$rport"
rpid=$redis_pid
ok "Redis started again on 127.0.0.1:$rport"
c0=$(fwd_counters f4 "$f4_pid")
i=0
resumed=no
deadline=$(($(date +%s) + 45))
while [ "$(date +%s)" -lt "$deadline" ]; do
	i=$((i + 1))
	q "$w" "r$i.resume.test"
	wait_for 3 sh -c "[ \"\$(python3 tests/helpers/resp.py $rport call DBSIZE)\" -gt 0 ]"
	q "$f4" "r$i.resume.test"
	c1=$(fwd_counters f4 "$f4_pid")
	if [ "$(jgdelta "$c0" "$c1" l2.hits)" -gt 0 ] 2>/dev/null; then
		resumed=yes
		break
	fi
	rcli "$rport" flushall >/dev/null # the next name's key alone
	sleep 0.5
done
ok_if "Redis back: F4 reads from it again (l2.hits +$(jgdelta "$c0" "$c1" l2.hits) at name $i, \
l2.breaker $(jget "$c1" l2.breaker), reconnects $(jget "$c1" l2.reconnects))" [ $resumed = yes ]
ok_if "F4 counted its reconnections ($(jget "$c1" l2.reconnects))" \
	[ "$(jget "$c1" l2.reconnects)" -gt 0 ] 2>/dev/null

for p in $f1_pid $f2_pid $f3_pid $w_pid $f4_pid; do
	stop_fwd "$p"
	ok_if "dnsnap serve $p: SIGTERM, exit 0" [ $? -eq 0 ]
done
finish
