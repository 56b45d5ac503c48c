#!/bin/sh
# CLI tests of load's report (issue 11 review, items 9, 10, 21): the capture's
# unusable packets counted in nouns that take the plural; each response
# counted once, so that the counts add up to the responses and "loaded" is
# what reached SNAP (a response replaced by a later one, or left for SNAP's
# own entry, is not "loaded"); --json says per input how its responses were
# timed. Usage: test_load_report.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
V=spec/vectors/valid
T=1700000000

# err_is NAME TEXT: stderr holds the line TEXT exactly
err_is() {
	if grep -qxF -- "$2" "$tmp/err"; then
		echo "ok - $1"
	else
		echo "not ok - $1: stderr lacks the line '$2':"; sed 's/^/#   /' "$tmp/err"
		fails=$((fails + 1))
	fi
}
# out_is NAME TEXT: stdout is exactly TEXT
out_is() {
	if [ "$(cat "$tmp/out")" = "$2" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1: stdout is not '$2':"; sed 's/^/#   /' "$tmp/out"
		fails=$((fails + 1))
	fi
}

"$build"/mkcaptures "$tmp/cap" > /dev/null &&
	"$build"/mkcaptures --timed "$tmp/p5353.pcap" "$(date +%s)" 5353 ||
	{ echo "not ok - mkcaptures"; exit 1; }

# ------------------------------------- the capture's report: plurals (9)
expect "load: a capture with DNS on another port only" 1 "$bin" load "$tmp/a.snap" "$tmp/p5353.pcap"
ok_if "6 packets on other ports (plural)" grep -q ", 0 DNS messages; 6 packets on other ports$" "$tmp/err"
expect "load: framed, one zero length, one cut" 0 "$bin" load "$tmp/b.snap" "$tmp/cap/framed-cut.bin" --now $T
err_is "1 zero-length framed message (singular)" \
	"dnsnap load: $tmp/cap/framed-cut.bin: 2 DNS messages; 1 zero-length framed message; 1 framed message cut by the end of the file"
# (load-malformed.err in test_ops.sh has "2 malformed IP headers", "3 IP
# fragments (not reassembled)", "1 packet on another port")

# ---------------------------------------------- counts that add up (21)
# 001 three times: the last is loaded, the two before it replaced
frame $V/001-a.msg $V/001-a.msg $V/001-a.msg $V/005-nxdomain.msg \
	spec/vectors/invalid/214-msg-truncated-tc.msg > "$tmp/rep.dns"
expect "load: one question answered three times" 0 "$bin" load "$tmp/c.snap" "$tmp/rep.dns" --now $T
err_is "replaced responses are not counted loaded" \
	"dnsnap load: 5 responses (2 loaded, 2 replaced by a later one, 1 refused), 2 distinct questions, 0 queries skipped; 1 truncated (TC=1)"
out_is "the entries are the loaded" "$tmp/c.snap: 2 entries: 2 loaded, 0 kept"
# the line's shape tests/e2e/auth_clients.sh parses (its sed expressions)
line=$(grep "responses (" "$tmp/err")
ok_if "e2e's parse: the responses" [ "$(echo "$line" | sed -n 's/.*: \([0-9]*\) responses.*/\1/p')" = 5 ]
ok_if "e2e's parse: the questions" [ "$(echo "$line" | sed -n 's/.*, \([0-9]*\) distinct questions.*/\1/p')" = 2 ]
ok_if "e2e's parse: the refusals last" [ "$(echo "$line" | sed 's/.*queries skipped//')" = "; 1 truncated (TC=1)" ]
# an older load into it: SNAP's newer entries stay, the load's are left
frame $V/001-a.msg $V/008-mx.msg > "$tmp/old.dns"
expect "load: older responses into a newer snapshot" 0 "$bin" load "$tmp/c.snap" "$tmp/old.dns" --now $((T - 60))
err_is "a response SNAP's entry wins over is not loaded" \
	"dnsnap load: 2 responses (1 loaded, 1 left for the snapshot's own entry), 2 distinct questions, 0 queries skipped"
out_is "and SNAP's entry is kept" "$tmp/c.snap: 3 entries: 1 loaded, 2 kept (0 replaced, 0 expired dropped)"
# again: the MX entry is as old as the load's (the load's wins), 001's newer
expect "load --json: the same counts" 0 "$bin" load "$tmp/c.snap" "$tmp/old.dns" --now $((T - 60)) --json
ok_if "load --json: the counts add up to the responses" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["responses"], j["cached"], j["left_for_snapshot"], j["replaced_later"]) == (2, 1, 1, 0), j
assert j["cached"] + j["left_for_snapshot"] + j["replaced_later"] + j["expired"] + \
	j["kept_earlier_dnssec"] + j["refused_total"] == j["responses"], j
assert j["loaded"] == j["cached"], j
' "$tmp/out"
expect "load --json: replaced and refused" 0 "$bin" load "$tmp/d.snap" "$tmp/rep.dns" --now $T --json
ok_if "load --json: replaced_later, refused_total" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["responses"], j["cached"], j["replaced_later"], j["refused_total"]) == (5, 2, 2, 1), j
assert j["refused"] == {"truncated (TC=1)": 1} and j["questions"] == 2, j
' "$tmp/out"

# ----------------------------------------- --json: arrival per input (10)
expect "load --json: Unbound text, a framed file and a capture" 0 sh -c \
	"printf 'START_RRSET_CACHE\nEND_RRSET_CACHE\nSTART_MSG_CACHE\nEND_MSG_CACHE\nEOF\n' |
	'$bin' load '$tmp/e.snap' - '$tmp/rep.dns' '$tmp/cap/ipv4.pcap' --json"
ok_if "load --json: each input says how its responses were timed" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
got = [(i["format"], i["arrival"]) for i in j["inputs"]]
assert got == [("unbound", "load time"), ("framed", "load time"), ("capture", "packet times")], got
assert "arrival" not in j, j
' "$tmp/out"
expect "load --json --now: every input at --now" 0 "$bin" load "$tmp/f.snap" "$tmp/rep.dns" \
	"$tmp/cap/ipv4.pcap" --now $T --json
ok_if "load --json --now: arrival --now" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert [i["arrival"] for i in j["inputs"]] == ["--now", "--now"], j
' "$tmp/out"

[ "$fails" -eq 0 ]
