#!/bin/sh
# dnsnap diff A B: exact output for entries only in A, only in B and changed
# (records, expiry, rcode, kind, ad, EDE, record order), in key order, as text
# and as JSON lines; --ignore-expiry, --live and --now; equal files print nothing
# and exit 0; 2000-entry files interleave in key order; a damaged entry is an
# error, never a difference; bad usage exits 2.
# Usage (from the repository root): tests/cli/test_diff.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
exp=tests/cli/expected

T=1768464000 # 2026-01-15T08:00:00Z: in the past (a load --now ahead of the clock is refused)
fix=tests/fixtures/unbound-dump_cache.txt
load() { # SNAP TEXT NOW
	"$bin" load "$1" "$2" --now "$3" >/dev/null 2>"$tmp/load.err" ||
		{ echo "not ok - load $2"; cat "$tmp/load.err"; fails=$((fails + 1)); }
}

# A: Unbound's cache text as it is. B: the same with, in key order,
#   dnsnap.example. SOA    validated (security 5): ad
#   dnsnap.example. MX     mail's AAAA in additional with TTL 1000
#   nx -> nx2              only in A, only in B, one after the other
#   www A                  192.0.2.2 -> 192.0.2.3 (also in _sip SRV and alias A)
#   gone A                 NXDOMAIN -> NOERROR (NODATA)
#   mail AAAA              TTL 3598 -> 1000: records and expiry
# C: A's text with www's two A records swapped and mail's AAAA at TTL 1000.
python3 - "$fix" "$tmp" <<'EOF'
import sys
src, tmp = sys.argv[1], sys.argv[2]
a = open(src).read()
def sub(s, old, new):
    assert old in s, old
    return s.replace(old, new)
mail = (";rrset 3598 1 0 8 0\nmail.dnsnap.example.\t3598\tIN\tAAAA",
        ";rrset 1000 1 0 8 0\nmail.dnsnap.example.\t1000\tIN\tAAAA")
mailmsg = ("msg mail.dnsnap.example. IN AAAA 32896 1 3598",
           "msg mail.dnsnap.example. IN AAAA 32896 1 1000")
b = sub(a, "msg dnsnap.example. IN SOA 32896 1 3598 0", "msg dnsnap.example. IN SOA 32896 1 3598 5")
b = sub(b, "msg nx.dnsnap.example.", "msg nx2.dnsnap.example.")
b = sub(b, "IN\tA\t192.0.2.2\n", "IN\tA\t192.0.2.3\n")
b = sub(b, "msg gone.dnsnap.example. IN A 32899", "msg gone.dnsnap.example. IN A 32896")
b = sub(sub(b, *mail), *mailmsg)
open(tmp + "/b.txt", "w").write(b)
www = "www.dnsnap.example.\t3597\tIN\tA\t192.0.2."
c = sub(a, www + "1\n" + www + "2\n", www + "2\n" + www + "1\n")
c = sub(sub(c, *mail), *mailmsg)
open(tmp + "/c.txt", "w").write(c)
EOF
load "$tmp/a.snap" $fix $T
load "$tmp/a2.snap" $fix $T
load "$tmp/b.snap" "$tmp/b.txt" $T
load "$tmp/c.snap" "$tmp/c.txt" $T
load "$tmp/later.snap" $fix $((T + 60))
load "$tmp/late.snap" $fix $((T + 400))

# ------------------------------------------------------------------ equal
expect "diff: a file with itself: exit 0" 0 "$bin" diff "$tmp/a.snap" "$tmp/a.snap"
ok_if "diff: a file with itself prints nothing" not test -s "$tmp/out"
expect "diff: two files of equal entries: exit 0" 0 "$bin" diff "$tmp/a.snap" "$tmp/a2.snap"
ok_if "diff: equal files print nothing" not test -s "$tmp/out"
expect "diff --json: equal: exit 0" 0 "$bin" diff --json "$tmp/a.snap" "$tmp/a2.snap"
ok_if "diff --json: equal files print nothing" not test -s "$tmp/out"

# ------------------------------------------------------- the differences
expect "diff A B: exit 1" 1 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" &&
	same_as "diff A B" "$exp/diff.txt"
ok_if "diff A B: nothing on stderr" not test -s "$tmp/err"
expect "diff B A: exit 1, - and + swapped, the same key order" 1 "$bin" diff "$tmp/b.snap" \
	"$tmp/a.snap" &&
	same_as "diff B A" "$exp/diff-reverse.txt"

# the filters of dump: only the entries they pass, both sides; repeated ones add up
expect "diff --type A: exit 1" 1 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --type A &&
	awk '/^[-+!] / { keep = ($NF == "A") } keep' "$exp/diff.txt" > "$tmp/want-a" &&
	same_as "diff --type A" "$tmp/want-a"
expect "diff --type A --type SOA: exit 1" 1 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --type A \
	--type=SOA &&
	awk '/^[-+!] / { keep = ($NF == "A" || $NF == "SOA") } keep' "$exp/diff.txt" \
		> "$tmp/want-asoa" && same_as "diff --type A --type SOA" "$tmp/want-asoa"
expect "diff --name nx.dnsnap.example: exit 1" 1 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" \
	--name nx.dnsnap.example && same_as "diff --name" - <<'EOT'
- nx.dnsnap.example. IN A
EOT
expect "diff --name of an equal entry: exit 0" 0 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" \
	--name no-such.dnsnap.example
expect "diff --type BOGUS: exit 2" 2 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --type BOGUS

expect "diff --json A B: exit 1" 1 "$bin" diff --json "$tmp/a.snap" "$tmp/b.snap" &&
	cp "$tmp/out" "$tmp/ab.json"
ok_if "diff --json: every line JSON, the text's keys and changes" \
	python3 - "$tmp/ab.json" "$exp/diff.txt" <<'EOF'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
text = [l.rstrip("\n") for l in open(sys.argv[2]) if l[0] in "-+!"]
mark = {"only_a": "-", "only_b": "+", "changed": "!"}
got = ["%s %s %s %s" % (mark[o["change"]], o["name"], o["class"], o["type"]) for o in objs]
assert got == text, (got, text)
assert all(o["cd"] is False and o["tag"] == "" for o in objs)
by = {(o["name"], o["type"]): o for o in objs}
soa = by[("dnsnap.example.", "SOA")]
assert soa["ad"] == [False, True] and "expiry" not in soa and "only_a" not in soa, soa
mx = by[("dnsnap.example.", "MX")]
assert mx["only_a"] == [{"section": "additional",
                         "rr": "mail.dnsnap.example.\t3598\tIN\tAAAA\t2001:db8::25"}], mx
assert mx["only_b"] == [{"section": "additional",
                         "rr": "mail.dnsnap.example.\t1000\tIN\tAAAA\t2001:db8::25"}], mx
www = by[("www.dnsnap.example.", "A")]
assert [r["rr"].split("\t")[-1] for r in www["only_a"]] == ["192.0.2.2"], www
assert [r["rr"].split("\t")[-1] for r in www["only_b"]] == ["192.0.2.3"], www
gone = by[("gone.dnsnap.example.", "A")]
assert gone["rcode"] == ["NXDOMAIN", "NOERROR"] and gone["kind"] == ["NXDOMAIN", "NODATA"], gone
mail = by[("mail.dnsnap.example.", "AAAA")]
assert mail["expiry"] == ["2026-01-15T08:59:58Z", "2026-01-15T08:16:40Z"], mail
assert "inception" not in mail, mail
assert by[("nx.dnsnap.example.", "A")]["change"] == "only_a"
assert by[("nx2.dnsnap.example.", "A")]["change"] == "only_b"
assert set(by[("nx.dnsnap.example.", "A")]) == {"change", "name", "class", "type", "cd", "tag"}
EOF

# ------------------------------------------------------------------- hits
# The stream vector's www.example.com A has 42 hits; the same response
# loaded at the same time has none: hits are not data, the entry is equal.
python3 -c 'import struct, sys; m = open(sys.argv[1], "rb").read()
sys.stdout.buffer.write(struct.pack(">H", len(m)) + m)' spec/vectors/valid/001-a.msg \
	>"$tmp/a.framed"
"$bin" import spec/vectors/valid/302-stream-four-entries.dnsx -o "$tmp/hits.snap" --now 1700000000 \
	2>/dev/null && load "$tmp/nohits.snap" "$tmp/a.framed" 1700000000
expect "dump: the vector's entry has 42 hits" 0 "$bin" dump "$tmp/hits.snap" \
	--name www.example.com --type A --now 1700000000 && ok_if "42 hits" grep -q ' hits 42 ' "$tmp/out"
expect "diff: entries that differ in hits only are equal" 1 "$bin" diff "$tmp/hits.snap" \
	"$tmp/nohits.snap"
printf -- '- %s\n' 'example.com. IN MX' 'www.example.com. IN AAAA' 'www.example.org. IN A' \
	>"$tmp/hits"
same_as "diff: www.example.com A not among the differences" "$tmp/hits"

# ------------------------------------------------------------ EDE and CD
# A: 001-a's response, and the same with CD set and an Extended DNS Error
# (3, with a '"' in its text); B: only the CD one, without the EDE.
python3 - spec/vectors/valid/001-a.msg "$tmp" <<'EOF'
import struct, sys
m = open(sys.argv[1], "rb").read()
assert m[-2:] == b"\0\0"  # its OPT, with no options
cd = m[:2] + struct.pack(">H", struct.unpack(">H", m[2:4])[0] | 0x10) + m[4:]
text = b'stale "old"'
opt = struct.pack(">HHH", 15, 2 + len(text), 3) + text
ede = cd[:-2] + struct.pack(">H", len(opt)) + opt
framed = lambda *ms: b"".join(struct.pack(">H", len(x)) + x for x in ms)
open(sys.argv[2] + "/ede-a.bin", "wb").write(framed(m, ede))
open(sys.argv[2] + "/ede-b.bin", "wb").write(framed(cd))
EOF
load "$tmp/ede-a.snap" "$tmp/ede-a.bin" 1700000000
load "$tmp/ede-b.snap" "$tmp/ede-b.bin" 1700000000
expect "diff: an EDE dropped, CD in the key" 1 "$bin" diff "$tmp/ede-a.snap" "$tmp/ede-b.snap"
printf '%s\n' '- www.example.com. IN A' '! www.example.com. IN A cd' '  ede 3 -> none' >"$tmp/ede"
same_as "diff: EDE codes, the cd key after the plain one" "$tmp/ede"
expect "diff --json: EDE" 1 "$bin" diff --json "$tmp/ede-a.snap" "$tmp/ede-b.snap"
ok_if "diff --json: EDE code and text, cd true" python3 -c '
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1])]
assert a["change"] == "only_a" and a["cd"] is False, a
assert b["change"] == "changed" and b["cd"] is True, b
assert b["ede"] == [[{"code": 3, "text": "stale \"old\""}], []], b
assert set(b) == {"change", "name", "class", "type", "cd", "tag", "ede"}, b
' "$tmp/out"

# ------------------------------------------------------ times and order
expect "diff: a refresh a minute later: exit 1" 1 "$bin" diff "$tmp/a.snap" "$tmp/later.snap"
ok_if "diff: every one of the 17 entries changed, inception and expiry" \
	[ "$(grep -c '^! ' "$tmp/out")" -eq 17 ] && [ "$(grep -c '^  inception ' "$tmp/out")" -eq 17 ] &&
	[ "$(grep -c '^  expiry ' "$tmp/out")" -eq 17 ] && [ "$(wc -l < "$tmp/out")" -eq 51 ]
ok_if "diff: the inception line names both times" \
	grep -qx '  inception 2026-01-15T08:00:00Z -> 2026-01-15T08:01:00Z' "$tmp/out"
expect "diff --ignore-expiry: a refresh is equal" 0 "$bin" diff --ignore-expiry "$tmp/a.snap" \
	"$tmp/later.snap"
ok_if "diff --ignore-expiry: nothing printed" not test -s "$tmp/out"
expect "diff: records in another order, a TTL changed" 1 "$bin" diff "$tmp/a.snap" "$tmp/c.snap" &&
	same_as "diff A C" "$exp/diff-order.txt"
printf '%s\n  the same records in another order\n' '! www.dnsnap.example. IN A' \
	'! _sip._tcp.dnsnap.example. IN SRV' '! alias.dnsnap.example. IN A' >"$tmp/order"
expect "diff --ignore-expiry: the order still counts, the TTLs not" 1 "$bin" diff "$tmp/a.snap" \
	"$tmp/c.snap" --ignore-expiry && same_as "diff --ignore-expiry A C" "$tmp/order"
expect "diff --json: reordered" 1 "$bin" diff --json "$tmp/a.snap" "$tmp/c.snap" --ignore-expiry
ok_if "diff --json: reordered is true, no records listed" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert len(objs) == 3 and all(o["reordered"] is True and "only_a" not in o for o in objs), objs
' "$tmp/out"

# --live: the entries expired at T count as absent. At T+350 the 300-second
# answers of A are gone, those of the file loaded at T+400 are live.
expect "diff --live --ignore-expiry" 1 "$bin" diff "$tmp/a.snap" "$tmp/late.snap" --live \
	--ignore-expiry --now $((T + 350)) && same_as "diff --live" "$exp/diff-live.txt"
expect "diff --live --now ISO 8601" 1 "$bin" diff "$tmp/a.snap" "$tmp/late.snap" --live \
	--ignore-expiry --now 2026-01-15T08:05:50Z && same_as "diff --live ISO" "$exp/diff-live.txt"
expect "diff --live: both expired is equal" 0 "$bin" diff "$tmp/a.snap" "$tmp/a2.snap" --live \
	--now $((T + 86400))
expect "diff --live: at T+100 only the later refresh differs" 1 "$bin" diff "$tmp/a.snap" \
	"$tmp/late.snap" --live --now $((T + 100))
ok_if "diff --live at T+100: every entry changed, none only in one" \
	[ "$(grep -c '^! ' "$tmp/out")" -eq 17 ] && not grep -q '^[-+] ' "$tmp/out"

# ------------------------------- many entries: the queue, key order kept
demo=$build/resolver_demo
"$demo" fill "$tmp/d.snap" 2000 >/dev/null ||
	{ echo "not ok - resolver_demo"; fails=$((fails + 1)); }
"$build"/mksnapseeds "$tmp/seeds" >/dev/null ||
	{ echo "not ok - mksnapseeds"; fails=$((fails + 1)); }
now=$(date +%s)
"$bin" dump "$tmp/d.snap" --expired >"$tmp/d.dump" 2>/dev/null
awk '/^; /{ print $2, $3, $4 }' "$tmp/d.dump" >"$tmp/d.keys"
ok_if "the demo snapshot has 2000 entries" [ "$(wc -l < "$tmp/d.keys")" -eq 2000 ]
expect "diff: 2000 entries with themselves" 0 "$bin" diff "$tmp/d.snap" "$tmp/d.snap"
expect "diff: 2000 entries against none" 1 "$bin" diff "$tmp/d.snap" "$tmp/seeds/empty.snap" &&
	sed 's/^/- /' "$tmp/d.keys" >"$tmp/d.only" && same_as "2000 only in A, in key order" "$tmp/d.only"
expect "diff: none against 2000 entries" 1 "$bin" diff "$tmp/seeds/empty.snap" "$tmp/d.snap" &&
	sed 's/^/+ /' "$tmp/d.keys" >"$tmp/d.only" && same_as "2000 only in B, in key order" "$tmp/d.only"
# A without the AAAA answers, B without the TXT ones: their differences
# interleave, - for TXT and + for AAAA, in the dump's order
cp "$tmp/d.snap" "$tmp/noaaaa.snap" && cp "$tmp/d.snap" "$tmp/notxt.snap"
"$bin" purge "$tmp/noaaaa.snap" --type AAAA >/dev/null 2>&1 &&
	"$bin" purge "$tmp/notxt.snap" --type TXT >/dev/null 2>&1 ||
	{ echo "not ok - purge for the interleaving test"; fails=$((fails + 1)); }
expect "diff: interleaved only-in-A and only-in-B" 1 "$bin" diff "$tmp/noaaaa.snap" \
	"$tmp/notxt.snap" &&
	awk '$3 == "TXT" { print "- " $0 } $3 == "AAAA" { print "+ " $0 }' "$tmp/d.keys" >"$tmp/d.mix" &&
	same_as "interleaved in key order" "$tmp/d.mix"
ok_if "interleaved: both kinds present, alternating somewhere" \
	sh -c "cut -c1 '$tmp/out' | uniq | wc -l | awk '\$1 > 100 { ok = 1 } END { exit !ok }'"

# ------------------------------------------------------------------ damage
good=$tmp/seeds/big.snap
cp "$good" "$tmp/bad.snap"
off=$(grep -abo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "$good" | head -1 | cut -d: -f1)
printf 'b' | dd of="$tmp/bad.snap" bs=1 seek=$((off + 100)) conv=notrunc 2>/dev/null
expect "diff: a damaged entry in B: exit 2" 2 "$bin" diff "$good" "$tmp/bad.snap" &&
	err_has "damage in B counted" \
		"dnsnap diff: $tmp/bad.snap: 1 damaged entry skipped (the first: entry" &&
	err_has "damage in B named" "dnsnap diff: $tmp/bad.snap: the entry of " &&
	err_has "damage in B not compared" " is damaged: not compared (run dnsnap verify)"
ok_if "diff: the damaged entry is not printed as only in A" not test -s "$tmp/out"
expect "diff: a damaged entry in A: exit 2" 2 "$bin" diff "$tmp/bad.snap" "$good" &&
	err_has "damage in A counted" "1 damaged entry skipped"
ok_if "diff: the damaged entry is not printed as only in B" not test -s "$tmp/out"
expect "diff: a damaged file with itself: exit 2" 2 "$bin" diff "$tmp/bad.snap" "$tmp/bad.snap"
ok_if "diff: a damaged file with itself prints nothing" not test -s "$tmp/out"

# ------------------------------------------------------------------- usage
expect "diff: a missing file" 2 "$bin" diff "$tmp/a.snap" "$tmp/none.snap" &&
	err_has "missing named" "dnsnap diff: $tmp/none.snap: No such file or directory"
ok_if "diff: a missing file prints nothing" not test -s "$tmp/out"
expect "diff: not a snapshot" 2 "$bin" diff $fix "$tmp/a.snap" && err_has "not a snapshot" "$fix"
expect "diff: one operand" 2 "$bin" diff "$tmp/a.snap" &&
	err_has "one operand" "needs two snapshots"
expect "diff: three operands" 2 "$bin" diff "$tmp/a.snap" "$tmp/a.snap" "$tmp/b.snap" &&
	err_has "three operands" "unexpected argument: $tmp/b.snap"
expect "diff: unknown option" 2 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --brief &&
	err_has "unknown option" "unknown option --brief"
expect "diff: --now without --live" 2 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --now $T &&
	err_has "--now alone" "--now is the time of --live: it needs --live"
expect "diff: --live --now: not a time" 2 "$bin" diff "$tmp/a.snap" "$tmp/b.snap" --live \
	--now soon &&
	err_has "bad --now" "--now: not a time: soon"
expect "diff: options after --, --now=T" 1 "$bin" diff --live --now=$T --json -- "$tmp/a.snap" \
	"$tmp/b.snap"
ok_if "diff: --now=T and -- parsed: all live at T, the same JSON as without" \
	cmp -s "$tmp/out" "$tmp/ab.json"

[ "$fails" -eq 0 ]
