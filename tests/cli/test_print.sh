#!/bin/sh
# The printers. dnsnap get prints an answer as dig 9.18 prints the same
# answer (dig asking dnsnap serve), byte for byte but for the ID and the lines
# only dig has (banner, Query time, SERVER, WHEN); one record of every type
# dig 9.18 prints (mkresp.py types) as dig prints it, in get and dump, and
# in get --json; names and strings that
# need escaping (tests/helpers/mkresp.py) come out as dig escapes them in get,
# dump, decode and JSON; get --json has RFC 8427's members; the entry line of
# dump and decode (ENTRY FIELDS in dnsnap(1)), also before an entry's
# inception.
# Usage (from the repository root): tests/cli/test_print.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
NOW=1700000000
T=$tmp # shorter lines
TAB=$(printf '\t')

[ -x "$bin" ] || { echo "not ok - $bin is not built"; exit 1; }
command -v dig >/dev/null ||
	{ echo "not ok - dig is missing (package bind9-dnsutils: make deps)"; exit 1; }
python3 tests/helpers/mkresp.py >"$T/r.dns" && python3 tests/helpers/mkresp.py types >>"$T/r.dns" &&
	python3 tests/helpers/mkresp.py typelist >"$T/types" || { echo "not ok - mkresp.py"; exit 1; }
expect "load the awkward responses, one of each type" 0 "$bin" load "$T/p.snap" "$T/r.dns" \
	--now $NOW

# ------------------------------------------------- get as dig prints it
: >"$T/log"
"$bin" serve "$T/p.snap" --listen 127.0.0.1:0 --now $NOW 2>"$T/log" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q "listening on 127.0.0.1:" "$T/log"; do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
	i=$((i + 1))
done
port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
[ -n "$port" ] || { echo "not ok - serve did not start"; cat "$T/log"; exit 1; }

dig_of() {
	dig @127.0.0.1 -p "$port" +tries=2 +time=2 +noadflag "$@" | sed -n '/^;; ->>HEADER<<-/,$p' |
		grep -v '^;; \(Query time\|SERVER\|WHEN\): \|^; COOKIE: ' | noid
}
get_of() { "$bin" get "$T/p.snap" "$@" --now $NOW | grep -v '^;; WHEN: ' | noid; }

h3=0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.net
while read -r what name type do; do
	if [ "$do" = do ]; then
		dig_of "$name" "$type" +dnssec >"$T/dig"
		get_of "$name" "$type" --do >"$T/get"
	else
		dig_of "$name" "$type" >"$T/dig"
		get_of "$name" "$type" >"$T/get"
	fi
	ok_if "get prints as dig: $what ($type)" \
		sh -c "grep -q '^;; MSG SIZE' '$T/dig' && cmp -s '$T/dig' '$T/get'" ||
		diff "$T/dig" "$T/get" | head -10
	cp "$T/get" "$T/get.$what"
done <<LIST
cname-chain www.example.net A -
nxdomain nx.example.net A -
signed signed.example.net A do
txt txt.example.net TXT -
aaaa v6.example.net AAAA -
mx mx.example.net MX -
escaped a\\.b.c\\032d.example.net CNAME -
ds example.net DS -
dnskey example.net DNSKEY -
nsec nsec.example.net NSEC -
nsec3 $h3 NSEC3 -
srv _sip._tcp.example.net SRV -
caa caa.example.net CAA -
ede stale.example.net A -
LIST

# every type dig 9.18 prints (mkresp.py TYPES: the SvcParams, LOC, WKS, NID, L64,
# APL, CERT, HIP, A6, ATMA, the types ldns does not name...), its record line as dig
# prints it, in get and dump (SINK and NSAP-PTR too, which ldns misreads)
while read -r label num; do
	n=$label.types.example.net
	dig_of "$n" "TYPE$num" | sed -n '/^;; ANSWER SECTION:$/{n;p;}' >"$T/dig"
	get_of "$n" "TYPE$num" 2>"$T/get.err" | sed -n '/^;; ANSWER SECTION:$/{n;p;}' >"$T/get"
	"$bin" dump "$T/p.snap" --name "$n" --now $NOW | sed -n '3p' >"$T/dump"
	ok_if "dump prints $label (TYPE$num) as dig" \
		sh -c "[ -s '$T/dig' ] && cmp -s '$T/dig' '$T/dump'" ||
		cat "$T/dig" "$T/dump"
	ok_if "get prints $label (TYPE$num) as dig" \
		sh -c "[ -s '$T/dig' ] && cmp -s '$T/dig' '$T/get'" ||
		cat "$T/dig" "$T/get"
done <"$T/types"
# a few of those lines in full: what dig was seen to print
svcb='svcb	300	IN	SVCB	1 svc.example.net. mandatory=alpn,port alpn="h2,h3" no-default-alpn'
svcb="$svcb port=8443 ipv4hint=192.0.2.1,192.0.2.2 ech=BUyT2iFor/Y9hMsSWaDnLnW8A0o="
svcb="$svcb ipv6hint=2001:db8::1,2001:db8::2 key7=\"/dns-query{?dns}\" key65000=\"abc\""
for want in "$svcb" \
	'https 300	IN	HTTPS	1 www.example.net. alpn="h2" port=443' \
	'loc	300	IN	LOC	52 22 23.000 N 4 53 32.000 E -2.00m 1m 10000m 10m' \
	'wks	300	IN	WKS	192.0.2.1 6 25 80' \
	'nid	300	IN	NID	10 14:4fff:ff20:ee64' \
	'l64	300	IN	L64	10 2001:0:0:db8' \
	'ninfo 300	IN	NINFO	"info one" "two"'; do
	label=$(printf '%s' "$want" | sed 's/[ 	].*//')
	num=$(sed -n "s/^$label //p" "$T/types")
	get_of "$label.types.example.net" "TYPE$num" >"$T/get"
	ok_if "$label: the line dig prints" \
		grep -qxF "$label.types.example.net.$(printf '%s' "$want" | sed 's/^[a-z0-9]*//')" \
		"$T/get"
done
expect "get --json of a SINK (ldns cannot read it)" 0 "$bin" get "$T/p.snap" \
	sink.types.example.net SINK --json --now $NOW &&
	ok_if "get --json: the SINK as received, its rdata as dig prints it" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answerRRs"][0]
assert (a["TYPE"], a["TYPEname"], a["RDLENGTH"]) == (40, "SINK", 6), a
assert a["RDATAHEX"] == "010264617461" and a["rdataSINK"] == "1 2 100 YXRh", a
' "$T/out"
expect "get --json of an NSAP-PTR" 0 "$bin" get "$T/p.snap" nsapptr.types.example.net NSAP-PTR \
	--json --now $NOW && ok_if "get --json: the NSAP-PTR's name" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answerRRs"][0]
assert a["rdataNSAP-PTR"] == "nsap.example.net." and a["RDLENGTH"] == 18, a
' "$T/out"
get_of ninfo.types.example.net NINFO >"$T/get"
ok_if "NINFO by name: the question names it as dig does" \
	grep -qxF ";ninfo.types.example.net.${TAB}IN${TAB}NINFO" "$T/get"

# what was compared is what it should be (dig and get both wrong would pass)
txt_line="txt.example.net.${TAB}300${TAB}IN${TAB}TXT${TAB}\"a\\009b\" \"say \\\"hi\\\"\""
txt_line="$txt_line \"back\\\\slash\""
txt_line="$txt_line \"\\255\\000\\127\" \"semi;colon\" \"sp ace\" \"at@dollar\$(paren)\""
ok_if "TXT: a TAB, quotes, a backslash, 0xff escaped as dig escapes them" \
	grep -qxF -- "$txt_line" "$T/get.txt"
esc_line="a\\.b.c\\032d.example.net. 300${TAB}IN${TAB}CNAME${TAB}"
esc_line="${esc_line}q\\\"t\\;\\(p\\).\\@\\\$\\\\.t\\009f\\255.example.net."
ok_if "names: a dot, space, quote, ; ( ) @ dollar, backslash, TAB, 0xff escaped as dig does" \
	grep -qxF -- "$esc_line" "$T/get.escaped"
ok_if "the escaped question as dig prints it" \
	grep -qxF ";a\\.b.c\\032d.example.net.${TAB}IN${TAB}CNAME" "$T/get.escaped"
ok_if "header: status NXDOMAIN, the flags, the counts" \
	sh -c "grep -q '^;; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: ID$' \
	       '$T/get.nxdomain' &&
	       grep -qx ';; flags: qr rd ra; QUERY: 1, ANSWER: 0, AUTHORITY: 1, ADDITIONAL: 1' \
	       '$T/get.nxdomain' && ! grep -q 'ANSWER SECTION' '$T/get.nxdomain'"
ok_if "--do: ad, EDNS flags do, the RRSIG's signature in words of 56" \
	sh -c "grep -q '^;; flags: qr rd ra ad;' '$T/get.signed' &&
	       grep -qx '; EDNS: version: 0, flags: do; udp: 1232' '$T/get.signed' &&
	       grep -q 'RRSIG${TAB}A 13 3 3600 .* [^ ]\{56\} [^ ]\{56\} [^ ]*$' '$T/get.signed'"
ok_if "a CNAME chain: three records in order" [ "$(sed -n '/^;; ANSWER SECTION:$/,/^$/p' \
	"$T/get.cname-chain" | grep -c 'IN')" -eq 3 ]
ok_if "EDE: code, name and text" grep -qxF "; EDE: 3 (Stale Answer): (old.data)" "$T/get.ede"
ok_if "the QUESTION's columns: ;mx.example.net. then three tabs" \
	grep -qxF ";mx.example.net.${TAB}${TAB}${TAB}IN${TAB}MX" "$T/get.mx"

# --------------------------------------------------------- get --json
expect "get --json (RFC 8427)" 0 "$bin" get "$T/p.snap" txt.example.net TXT --json --now $NOW &&
	ok_if "get --json: RFC 8427's members and values" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
line = open(sys.argv[2]).read().splitlines()
txt = [l for l in line if "\tTXT\t" in l and not l.startswith(";")][0].split("\t", 4)[4]
a = m["answerRRs"][0]
opt = m["additionalRRs"][-1]
assert 0 <= m["ID"] <= 65535
assert m["QR"] is True and m["RD"] is True and m["RA"] is True and m["AD"] is False
assert m["AA"] is False and m["TC"] is False and m["CD"] is False
assert (m["Opcode"], m["RCODE"]) == (0, 0)
assert (m["QDCOUNT"], m["ANCOUNT"], m["NSCOUNT"], m["ARCOUNT"]) == (1, 1, 0, 1)
assert (m["QNAME"], m["QTYPE"], m["QTYPEname"], m["QCLASS"], m["QCLASSname"]) == \
	("txt.example.net.", 16, "TXT", 1, "IN")
assert (a["NAME"], a["TYPE"], a["TYPEname"], a["CLASS"], a["TTL"]) == \
	("txt.example.net.", 16, "TXT", 1, 300)
assert a["RDATAHEX"].startswith("03610962") and a["RDLENGTH"] * 2 == len(a["RDATAHEX"])
assert a["rdataTXT"] == txt, (a["rdataTXT"], txt)
assert (opt["NAME"], opt["TYPE"], opt["CLASS"]) == (".", 41, 1232)
assert m["authorityRRs"] == []
size = [l for l in line if l.startswith(";; MSG SIZE")][0].split()[-1]
assert len(m["messageOctetsHEX"]) == 2 * int(size)
' "$T/out" "$T/get.txt"
expect "get --json --do" 0 "$bin" get "$T/p.snap" signed.example.net --do --json --now $NOW &&
	ok_if "get --json --do: AD, the RRSIG, DO in the OPT's TTL" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["AD"] is True
assert [r["TYPEname"] for r in m["answerRRs"]] == ["A", "RRSIG"]
assert m["answerRRs"][0]["RDATAHEX"] == "C0000209" and m["answerRRs"][0]["rdataA"] == "192.0.2.9"
assert m["additionalRRs"][-1]["TTL"] & 0x8000
' "$T/out"
expect "get --json: NXDOMAIN" 0 "$bin" get "$T/p.snap" nx.example.net --json --now $NOW &&
	ok_if "get --json: RCODE 3, the SOA" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["RCODE"] == 3 and m["answerRRs"] == []
assert m["authorityRRs"][0]["TYPEname"] == "SOA" and m["authorityRRs"][0]["NAME"] == "example.net."
' "$T/out"
expect "get --json of an escaped name" 0 "$bin" get "$T/p.snap" 'a\.b.c\032d.example.net' CNAME \
	--json --now $NOW &&
	ok_if "get --json: QNAME and rdataCNAME in presentation form" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["QNAME"] == "a\\.b.c\\032d.example.net.", m["QNAME"]
assert m["answerRRs"][0]["rdataCNAME"] == "q\\\"t\\;\\(p\\).\\@\\$\\\\.t\\009f\\255.example.net."
' "$T/out"

# --------------------------------------------- get: arguments, messages
expect "get: a miss" 1 "$bin" get "$T/p.snap" nothere.example.net --now $NOW &&
	err_has "miss" "dnsnap get: $T/p.snap: nothere.example.net IN A: not in the snapshot"
expect "get: no name" 2 "$bin" get "$T/p.snap" && err_has "no name" "needs a snapshot and a name"
expect "get: four operands" 2 "$bin" get "$T/p.snap" mx.example.net MX extra &&
	err_has "extra" "unexpected argument: extra"
expect "get: options first, --now=ISO" 0 "$bin" get --now=2023-11-14T22:13:20Z --class=IN \
	"$T/p.snap" mx.example.net MX && grep -q "^;; WHEN: Tue Nov 14 22:13:20 UTC 2023$" "$T/out"
expect "get: --tag with no value" 2 "$bin" get "$T/p.snap" mx.example.net --tag &&
	err_has "no value" "dnsnap get: --tag needs a value"
expect "get: TYPE65537 (over 16 bits, never wrapped to A)" 2 "$bin" get "$T/p.snap" \
	www.example.net TYPE65537 --now $NOW &&
	ok_if "TYPE65537: one line naming it, nothing printed" sh -c "[ \"\$(cat '$T/err')\" = \
	'dnsnap get: TYPE65537: unknown type name (a mnemonic such as AAAA, or TYPE1 to TYPE65535)' ] &&
	[ ! -s '$T/out' ]"
expect "get: CLASS65537" 2 "$bin" get "$T/p.snap" www.example.net A --class CLASS65537 \
	--now $NOW && ok_if "CLASS65537: named" [ "$(cat "$T/err")" = \
	"dnsnap get: CLASS65537: unknown class name (a mnemonic such as IN, or CLASS1 to CLASS65535)" ]
expect "get: TYPE65535 is a type (a miss)" 1 "$bin" get "$T/p.snap" www.example.net TYPE65535 \
	--now $NOW
# get --now before an entry's inception: the whole TTLs, and a note where dig puts its own
expect "get --now before the inception" 0 "$bin" get "$T/p.snap" mx.example.net MX \
	--now $((NOW - 10000)) &&
	ok_if "get: the note after the flags line, the whole TTL" sh -c "
	[ \"\$(sed -n 3p '$T/out')\" = \
	  ';; not yet cached at --now (inception 2023-11-14T22:13:20Z): whole TTLs' ] &&
	grep -q '^mx.example.net.${TAB}${TAB}300${TAB}IN${TAB}MX${TAB}10 mail.example.net.$' '$T/out'"
expect "get at the inception" 0 "$bin" get "$T/p.snap" mx.example.net MX --now $NOW &&
	ok_if "get: no note at the inception" not grep -q "not yet cached" "$T/out"
expect "get --json --now before the inception" 0 "$bin" get "$T/p.snap" mx.example.net MX \
	--json --now $((NOW - 10000)) &&
	ok_if "get --json: the note on stderr, the JSON whole" sh -c "[ \"\$(cat '$T/err')\" = \
	'dnsnap get: $T/p.snap: mx.example.net IN MX: not yet cached at --now (inception \
2023-11-14T22:13:20Z): whole TTLs' ] && python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))[\"answerRRs\"][0][\"TTL\"] == 300' '$T/out'"
expect "get: two random IDs" 0 sh -c "for i in 1 2 3 4; do
	'$bin' get '$T/p.snap' mx.example.net MX \
	--now $NOW | sed -n 's/.*, id: //p'; done | sort -u | wc -l | grep -qv '^1$'"

# --------------------------------------- dump, decode: the entry line
entry_line() { sed -n '1p' "$T/out"; }
at="inception 2023-11-14T22:13:20Z expiry"
e300="$at 2023-11-14T22:18:20Z"
expect "dump --name: a signed entry" 0 "$bin" dump "$T/p.snap" --name signed.example.net \
	--now $((NOW + 60)) &&
	ok_if "the entry line: flags ad do, ttl left, no 'auth'" [ "$(entry_line)" = \
	"; signed.example.net. IN A tag - rcode NOERROR kind ANSWER flags ad do ttl 3540 hits 0 \
$at 2023-11-14T23:13:20Z" ]
ok_if "dump: the sections as dig heads them, the empty ones left out" \
	[ "$(grep '^;;' "$T/out" | tr '\n' '|')" = ";; ANSWER SECTION:|" ]
expect "dump --name: NXDOMAIN" 0 "$bin" dump "$T/p.snap" --name nx.example.net --now $NOW &&
	ok_if "the entry line: kind NXDOMAIN, flags -" [ "$(entry_line)" = \
	"; nx.example.net. IN A tag - rcode NXDOMAIN kind NXDOMAIN flags - ttl 300 hits 0 $e300" ]
expect "dump: an EDE" 0 "$bin" dump "$T/p.snap" --name stale.example.net --now $NOW &&
	ok_if "dump: the EDE line, its text escaped" \
	[ "$(sed -n 2p "$T/out")" = '; ede 3 "old\009data"' ]
# the records of dump and decode are get's (dig's) lines, with the same TTLs at inception
for e in txt escaped signed; do
	sed -n '/^;; ANSWER SECTION:$/,/^$/p' "$T/get.$e" | sed '1d;$d' >"$T/want.$e"
done
expect "dump of the TXT entry" 0 "$bin" dump "$T/p.snap" --name txt.example.net --now $NOW &&
	sed '1,2d' "$T/out" >"$T/dump.txt" &&
	ok_if "dump's TXT record = get's = dig's" cmp -s "$T/dump.txt" "$T/want.txt"
expect "dump of an escaped name" 0 "$bin" dump "$T/p.snap" --name 'a\.b.c\032d.example.net' \
	--now $NOW && sed '1,2d' "$T/out" >"$T/dump.esc" &&
	ok_if "dump's escaped CNAME = get's = dig's" cmp -s "$T/dump.esc" "$T/want.escaped"
expect "dump --json of both" 0 "$bin" dump "$T/p.snap" --name txt.example.net \
	--name 'a\.b.c\032d.example.net' --json --now $NOW &&
	ok_if "dump --json: the record lines with one tab between fields, the name escaped, \
the entry fields" python3 -c '
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
by = {o["name"]: o for o in objs}
assert len(objs) == 2
t, e = by["txt.example.net."], by["a\\.b.c\\032d.example.net."]
def plain(path):  # dig lines, their column padding as one tab
	return ["\t".join(re.split("[ \t]+", l, maxsplit=4)) for l in open(path).read().splitlines()]
assert t["answer"] == plain(sys.argv[2]), (t["answer"], plain(sys.argv[2]))
assert e["answer"] == plain(sys.argv[3]), (e["answer"], plain(sys.argv[3]))
assert t["answer"][0].startswith("txt.example.net.\t300\tIN\tTXT\t\"a\\009b\" ")
assert e["answer"][0].startswith("a\\.b.c\\032d.example.net.\t300\tIN\tCNAME\tq")
assert (t["rcode"], t["kind"], t["ad"], t["cd"], t["do"], t["ttl"]) == \
	("NOERROR", "ANSWER", False, False, False, 300)
assert "auth" not in t and "dnssec" not in t and "not_yet_cached" not in t
' "$T/out" "$T/want.txt" "$T/want.escaped"
python3 tests/helpers/mkresp.py 3 >"$T/txt.msg"
expect "encode the TXT response" 0 "$bin" encode "$T/txt.msg" --now $NOW -o "$T/txt.bin"
expect "decode it" 0 "$bin" decode "$T/txt.bin" &&
	ok_if "decode: dump's entry line at inception, and dig's record" sh -c "
	[ \"\$(sed -n 1p '$T/out')\" = \
	  '; txt.example.net. IN TXT tag - rcode NOERROR kind ANSWER flags - ttl 300 hits 0 $e300' \
	] &&
	sed '1,2d' '$T/out' | cmp -s - '$T/want.txt'"

# diff --json: a changed record's line with one tab between the fields, as dump --json
python3 tests/helpers/mkresp.py 5 >"$T/mx.msg" && python3 -c 'import struct, sys
m = open(sys.argv[1], "rb").read()
i = m.index(b"\x00\x0a\x04mail")  # the MX preference: 10, then 20
for pref, out in ((10, sys.argv[2]), (20, sys.argv[3])):
	w = m[:i] + struct.pack(">H", pref) + m[i + 2:]
	open(out, "wb").write(struct.pack(">H", len(w)) + w)' "$T/mx.msg" "$T/mx10.dns" "$T/mx20.dns"
expect "a snapshot with MX 10" 0 "$bin" load "$T/mx10.snap" "$T/mx10.dns" --now $NOW
expect "one with MX 20" 0 "$bin" load "$T/mx20.snap" "$T/mx20.dns" --now $NOW
expect "diff --json of the two" 1 "$bin" diff "$T/mx10.snap" "$T/mx20.snap" --json &&
	ok_if "diff --json: the records with one tab between fields (dump is padded)" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["only_a"] == [{"section": "answer",
                        "rr": "mx.example.net.\t300\tIN\tMX\t10 mail.example.net."}], o
assert o["only_b"][0]["rr"] == "mx.example.net.\t300\tIN\tMX\t20 mail.example.net.", o
' "$T/out"

# dump --now before an entry's inception: the whole TTL, said so
early="; www.example.net. IN A tag - rcode NOERROR kind ANSWER flags - ttl 300 hits 0 $e300"
early="$early (not yet cached at --now)"
expect "dump --now before the inception" 0 "$bin" dump "$T/p.snap" --name www.example.net \
	--now $((NOW - 10000)) &&
	ok_if "ttl 300 (the whole TTL, not expiry - now = 10300), and said" \
	[ "$(entry_line)" = "$early" ] &&
	ok_if "the records at their whole TTL" \
	[ "$(grep -c "${TAB}300${TAB}IN${TAB}" "$T/out")" -eq 3 ]
expect "dump --now before the inception, ISO 8601" 0 "$bin" dump "$T/p.snap" \
	--name www.example.net --now 2023-11-14T19:26:40Z &&
	ok_if "the same line" [ "$(entry_line)" = "$early" ]
expect "dump --json --now before the inception" 0 "$bin" dump "$T/p.snap" --name www.example.net \
	--json --now $((NOW - 10000)) && ok_if "JSON: ttl 300, not_yet_cached" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["ttl"] == 300 and o["not_yet_cached"] is True
' "$T/out"
expect "dump at the inception: not said" 0 "$bin" dump "$T/p.snap" --name www.example.net \
	--now $NOW &&
	ok_if "no 'not yet cached' at the inception" not grep -q "not yet cached" "$T/out"

[ "$fails" -eq 0 ]
