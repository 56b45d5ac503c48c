#!/bin/sh
# CLI tests of `dnsnap load` and time (issue 11, items 1, 2 and 8's hint): each
# response cached at its packet's time, expired ones counted and not stored,
# packet times after the load's clamped, the capture's time range reported;
# --now as an override; the keep rule (a DO=1 response's RRSIG survives a later
# DO=0 response); the "try --port" hint; --json; options in any order.
# The timed capture (mkcaptures --timed, tests/helpers/captures.h) is made
# around B, the clock at the start: every packet but the skewed one is before
# the load. Answers are read with get/dump --now B: exact TTLs, no tolerance.
# Usage: test_load_time.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
mk=$build/mkcaptures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh

iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# ttl_of NAME TYPE: the TTL of the first NAME TYPE record of the last stdout
ttl_of() { awk -v n="$1." -v t="$2" '$1 == n && $3 == "IN" && $4 == t { print $2; exit }' "$tmp/out"; }
# err_is NAME TEXT: stderr holds the line TEXT exactly
err_is() {
	if ! grep -qxF -- "$2" "$tmp/err"; then
		echo "not ok - $1: stderr lacks the line '$2':"; sed 's/^/#   /' "$tmp/err"
		fails=$((fails + 1))
	fi
}

B=$(date +%s)
"$mk" --timed "$tmp/t.pcap" "$B" && "$mk" --timed "$tmp/t.pcapng" "$B" &&
	"$mk" --timed "$tmp/p5353.pcap" "$B" 5353 &&
	"$mk" --timed "$tmp/old.pcap" $((B - 100000)) || { echo "not ok - mkcaptures --timed"; exit 1; }
first=$(iso $((B - 600))) last=$(iso $((B + 86400 * 365)))

# ------------------------------------------------------- packet times (item 1)
for f in t.pcap t.pcapng; do
	s=$tmp/$f.snap
	expect "load $f at its packet times" 0 "$bin" load "$s" "$tmp/$f" &&
		ok_if "load $f: 3 entries" [ "$(cat "$tmp/out")" = "$s: 3 entries: 3 loaded, 0 kept" ] &&
		err_is "load $f: the time range" \
			"dnsnap load: $tmp/$f: 6 packets from $first to $last, 6 DNS messages" &&
		err_is "load $f: expired and kept counted, plurals" \
			"dnsnap load: 5 responses (3 loaded, 1 expired before the load, 1 left for an earlier one with DNSSEC records), 4 distinct questions, 1 query skipped" &&
		err_has "load $f: skew reported" \
			"dnsnap load: 1 response timed after the load's time ("
	# a 3600 s TTL captured 600 s before B: 3000 s left at B
	expect "$f: long.example.org is served" 0 "$bin" get "$s" long.example.org --now "$B" &&
		ok_if "$f: long.example.org has 3000 s left at B" [ "$(ttl_of long.example.org A)" = 3000 ]
	# a 30 s TTL captured 540 s before B: expired before the load, not stored at all
	expect "$f: short.example.org (30 s TTL, 9 minutes old) is not served" 1 \
		"$bin" get "$s" short.example.org --now "$B"
	expect "$f: short.example.org is not stored either" 1 \
		"$bin" get "$s" short.example.org --now $((B - 540))
	# the DO=1 response (B-600) stays over the later DO=0 one (B-590): its RRSIG
	expect "$f: signed.example.org with --do" 0 "$bin" get "$s" signed.example.org --do --now "$B" &&
		ok_if "$f: the RRSIG of the earlier DO=1 response is served" \
			[ "$(ttl_of signed.example.org RRSIG)" = 3000 ] &&
		ok_if "$f: its A record too, from B-600" [ "$(ttl_of signed.example.org A)" = 3000 ]
	expect "$f: signed.example.org without --do" 0 "$bin" get "$s" signed.example.org --now "$B" &&
		ok_if "$f: no RRSIG for a DO=0 client" [ -z "$(ttl_of signed.example.org RRSIG)" ]
	# a packet a year ahead is taken as arriving at the load (>= B): dead by B + 1 year
	expect "$f: future.example.org is served" 0 "$bin" get "$s" future.example.org --now "$B" &&
		ok_if "$f: with its whole TTL at B" [ "$(ttl_of future.example.org A)" = 300 ]
	expect "$f: future.example.org was not cached at its packet time" 1 \
		"$bin" get "$s" future.example.org --now $((B + 86400 * 365 + 10))
done

# a capture a day old: everything expired but the skewed response
expect "load of a day-old capture" 0 "$bin" load "$tmp/old.snap" "$tmp/old.pcap" &&
	err_is "day-old: 3 expired" \
	"dnsnap load: 5 responses (1 loaded, 3 expired before the load, 1 left for an earlier one with DNSSEC records), 4 distinct questions, 1 query skipped" &&
	ok_if "day-old: 1 entry" [ "$(cat "$tmp/out")" = "$tmp/old.snap: 1 entry: 1 loaded, 0 kept" ]
expect "day-old: long.example.org is not served" 1 "$bin" get "$tmp/old.snap" long.example.org --now "$B"

# ------------------------------------------------------- --now overrides (item 3)
expect "load --now: every response arrives at T" 0 "$bin" load "$tmp/n.snap" "$tmp/t.pcap" --now "$B" &&
	ok_if "load --now: 4 entries" [ "$(cat "$tmp/out")" = "$tmp/n.snap: 4 entries: 4 loaded, 0 kept" ] &&
	err_is "load --now: nothing expired, nothing skewed, still one kept" \
	"dnsnap load: 5 responses (4 loaded, 1 left for an earlier one with DNSSEC records), 4 distinct questions, 1 query skipped"
ok_if "load --now: no skew reported" not grep -q "clock skew" "$tmp/err"
expect "load --now: long.example.org at T" 0 "$bin" get "$tmp/n.snap" long.example.org --now "$B" &&
	ok_if "load --now: the whole TTL at T" [ "$(ttl_of long.example.org A)" = 3600 ]
expect "load --now: the tie keeps the DO=1 response" 0 \
	"$bin" get "$tmp/n.snap" signed.example.org --do --now "$B" &&
	ok_if "load --now: its RRSIG" [ "$(ttl_of signed.example.org RRSIG)" = 3600 ]
expect "load --now ISO 8601" 0 "$bin" load "$tmp/iso.snap" "$tmp/t.pcap" --now "$(iso "$B")"
expect "dump of the ISO load" 0 "$bin" dump "$tmp/iso.snap" --now "$B" && cp "$tmp/out" "$tmp/iso.dump"
expect "dump of the Unix-seconds load" 0 "$bin" dump "$tmp/n.snap" --now "$B" &&
	ok_if "--now ISO 8601 and Unix seconds load the same" cmp -s "$tmp/out" "$tmp/iso.dump"
expect "load --now relative (+0s), after the options' end" 0 \
	"$bin" load --now=+0s -- "$tmp/r.snap" "$tmp/t.pcap" &&
	ok_if "load --now +0s: 4 entries" [ "$(cat "$tmp/out")" = "$tmp/r.snap: 4 entries: 4 loaded, 0 kept" ]
expect "load --now: a bad time" 2 "$bin" load "$tmp/x.snap" "$tmp/t.pcap" --now yesterday
expect "load --now: no value" 2 "$bin" load "$tmp/x.snap" "$tmp/t.pcap" --now &&
	err_has "load --now: no value, said" "--now needs a value"
expect "load: an unknown option" 2 "$bin" load "$tmp/x.snap" "$tmp/t.pcap" --frobnicate &&
	err_has "load: the unknown option named" "unknown option --frobnicate"
ok_if "load: refused options write nothing" [ ! -e "$tmp/x.snap" ]

# ------------------------------------------------------- the port hint (item 8)
expect "load: DNS on another port only" 1 "$bin" load "$tmp/h.snap" "$tmp/p5353.pcap" &&
	err_is "load: the hint names the port" \
	"dnsnap load: $tmp/p5353.pcap: no DNS messages on port 53; the capture has DNS-like UDP traffic on port 5353: try --port 5353" &&
	err_is "load: nothing written" "dnsnap load: $tmp/h.snap: no usable response; no snapshot written"
expect "load --port=5353: the hint followed" 0 "$bin" load --port=5353 "$tmp/h.snap" "$tmp/p5353.pcap" &&
	ok_if "load --port=5353: 3 entries" [ "$(cat "$tmp/out")" = "$tmp/h.snap: 3 entries: 3 loaded, 0 kept" ]
expect "load: the other port asked, both hinted" 1 "$bin" load "$tmp/h2.snap" "$tmp/p5353.pcap" --port 8053 &&
	err_is "load: the hint for --port 8053" \
	"dnsnap load: $tmp/p5353.pcap: no DNS messages on port 8053; the capture has DNS-like UDP traffic on port 5353: try --port 5353"
expect "load: DNS on port 53, no hint" 0 "$bin" load "$tmp/f.snap" "$tmp/t.pcap" &&
	ok_if "load: no hint when DNS was found" not grep -q "try --port" "$tmp/err"

# plurals of the Unbound text's report (item 8)
expect "load: an Unbound dump of one line" 1 sh -c \
	"echo START_RRSET_CACHE | '$bin' load '$tmp/u.snap' -" &&
	err_is "load: one line, singular" \
	"dnsnap load: -: Unbound cache dump: 1 line, 0 RRsets, 0 messages, 0 responses rebuilt; 1 dump without its EOF line"

# ------------------------------------------------------- --json (item 7)
expect "load --json" 0 "$bin" load "$tmp/j.snap" "$tmp/t.pcap" --json &&
	ok_if "load --json: the summary" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
i = j["inputs"][0]
assert j["snapshot"] == sys.argv[2] and "arrival" not in j, j
assert i["file"] == sys.argv[3] and i["format"] == "capture", i
assert i["arrival"] == "packet times", i
assert (i["packets"], i["messages"]) == (6, 6), i
assert (i["first_packet"], i["last_packet"]) == (sys.argv[4], sys.argv[5]), i
assert (j["responses"], j["queries"], j["cached"], j["questions"]) == (5, 1, 3, 4), j
assert (j["expired"], j["kept_earlier_dnssec"], j["future_times"]) == (1, 1, 1), j
assert j["written"] is True and (j["entries"], j["loaded"], j["kept"]) == (3, 3, 0), j
assert j["refused"] == {} and i["skipped"] == {}, j
' "$tmp/out" "$tmp/j.snap" "$tmp/t.pcap" "$first" "$last" &&
	ok_if "load --json: the text report is not on stderr" not grep -q "DNS messages" "$tmp/err"
expect "load --json into the same snapshot" 0 "$bin" load "$tmp/j.snap" "$tmp/t.pcap" --json &&
	ok_if "load --json: the merge counted" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["entries"], j["loaded"], j["kept"], j["replaced"], j["base_expired"]) == (3, 3, 0, 3, 0), j
' "$tmp/out"
expect "load --json: nothing usable" 1 "$bin" load "$tmp/j2.snap" "$tmp/p5353.pcap" --json &&
	ok_if "load --json: written false" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["written"] is False and j["responses"] == 0 and "entries" not in j, j
assert j["inputs"][0]["skipped"] == {"other port": 6}, j
' "$tmp/out"
q="$tmp/a\"b.snap"
expect "load --json: a path with a quote" 0 "$bin" load "$q" "$tmp/t.pcap" --json &&
	ok_if "load --json: the quote escaped" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["snapshot"] == sys.argv[2]
' "$tmp/out" "$q"

[ $fails -eq 0 ] && echo "# all load-time tests passed" || echo "# $fails load-time test(s) failed"
[ $fails -eq 0 ]
