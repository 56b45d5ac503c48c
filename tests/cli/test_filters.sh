#!/bin/sh
# The filters of dump and purge, repeated (--name, --zone, --type, --tag: any
# of each kind given; a key under two prefixes once, in key order), and the
# option conventions of dump, purge, decode and encode (--opt=VALUE, options
# before operands, --, a missing value), over the responses of
# tests/helpers/mkresp.py.
# Usage (from the repository root): tests/cli/test_filters.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
NOW=1700000000
T=$tmp # shorter lines

[ -x "$bin" ] || { echo "not ok - $bin is not built"; exit 1; }
python3 tests/helpers/mkresp.py >"$T/r.dns" || { echo "not ok - mkresp.py"; exit 1; }
expect "load the responses" 0 "$bin" load "$T/p.snap" "$T/r.dns" --now $NOW
ALL=14 # the entries mkresp.py makes

# ------------------------------------------------------------- filters
# count TYPE...: the entries of those types, from the whole dump
"$bin" dump "$T/p.snap" --json --now $NOW >"$T/all.json"
count() {
	python3 -c 'import json, sys
print(sum(json.loads(l)["type"] in sys.argv[2:] for l in open(sys.argv[1])))' "$T/all.json" "$@"
}
ok_if "the whole dump: $ALL entries" [ "$(wc -l <"$T/all.json")" -eq $ALL ]
na=$(count A AAAA)
expect "dump --type A --type AAAA" 0 "$bin" dump "$T/p.snap" --type A --type AAAA --json \
	--now $NOW &&
	ok_if "both types: $na entries" [ "$(wc -l <"$T/out")" -eq "$na" ] && [ "$na" -eq 5 ]
ok_if "in key order (as the whole dump)" \
	sh -c "grep '\"type\":\"A\\(AAA\\)\\{0,1\\}\"' '$T/all.json' |
	cmp -s - '$T/out'"
expect "purge --type A --type AAAA --dry-run" 0 "$bin" purge "$T/p.snap" --type A --type AAAA \
	--dry-run --now $NOW && ok_if "both types purged" \
	grep -qx "$T/p.snap: would purge $na of $ALL entries, $((ALL - na)) left" "$T/out"
expect "dump --type TYPE15 = --type MX" 0 "$bin" dump "$T/p.snap" --type TYPE15 --now $NOW &&
	grep -q "^; mx.example.net. IN MX " "$T/out" && [ "$(grep -c '^; ' "$T/out")" -eq 1 ]
expect "dump --type: unknown" 2 "$bin" dump "$T/p.snap" --type NOSUCH &&
	err_has type "unknown type name"
expect "dump --name=X --name Y" 0 "$bin" dump "$T/p.snap" --name=mx.example.net \
	--name v6.example.net \
	--json --now $NOW && ok_if "two names, two entries" [ "$(wc -l <"$T/out")" -eq 2 ]
expect "dump --zone=X --name under X" 0 "$bin" dump "$T/p.snap" --zone=example.net \
	--name www.example.net --json --now $NOW &&
	ok_if "a key under both is printed once, in key order" cmp -s "$T/out" "$T/all.json"
expect "dump --zone twice" 0 "$bin" dump "$T/p.snap" --zone c\\032d.example.net \
	--name 'a\.b.c\032d.example.net' --zone 'c\032d.example.net.' --json --now $NOW &&
	ok_if "overlapping prefixes: one entry" [ "$(wc -l <"$T/out")" -eq 1 ]
expect "purge --zone --name --dry-run" 0 "$bin" purge "$T/p.snap" --zone example.net \
	--name www.example.net --dry-run && ok_if "overlapping prefixes: each entry counted once" \
	grep -qx "$T/p.snap: would purge $ALL of $ALL entries, 0 left" "$T/out"
expect "dump --name and --type together" 0 "$bin" dump "$T/p.snap" --name example.net --type DS \
	--type DNSKEY --type MX --json --now $NOW &&
	ok_if "name and types: 2" [ "$(wc -l <"$T/out")" -eq 2 ]
expect "dump --tag '' --tag 0a0b" 0 "$bin" dump "$T/p.snap" --tag '' --tag 0a0b --json --now $NOW &&
	ok_if "any tag given: every untagged entry" [ "$(wc -l <"$T/out")" -eq $ALL ]
expect "dump --tag 0a0b: none" 1 "$bin" dump "$T/p.snap" --tag 0a0b --now $NOW
expect "dump: options first, --" 0 "$bin" dump --type MX --now $NOW -- "$T/p.snap" &&
	grep -q "^; mx.example.net. IN MX " "$T/out"
expect "dump: after --, an option is an operand" 2 "$bin" dump --now $NOW -- "$T/p.snap" --json &&
	err_has "after --" "unexpected argument: --json"
expect "dump --name at the end" 2 "$bin" dump "$T/p.snap" --name &&
	err_has "no value" "dnsnap dump: --name needs a value" &&
	ok_if "one line" [ "$(wc -l <"$T/err")" -eq 1 ]
expect "purge --zone at the end" 2 "$bin" purge "$T/p.snap" --zone &&
	err_has "no value" "dnsnap purge: --zone needs a value"
expect "dump --zone: not a name" 2 "$bin" dump "$T/p.snap" --zone 'a..b' &&
	err_has "bad zone" "--zone a..b: not a valid domain name"
expect "dump --json=1: takes no value" 2 "$bin" dump "$T/p.snap" --json=1 &&
	err_has "json=" "--json takes no value"
expect "purge: no filter" 2 "$bin" purge "$T/p.snap" && err_has "no filter" "needs at least one of"
expect "purge: two snapshots" 2 "$bin" purge "$T/p.snap" "$T/p.snap" --type A &&
	err_has "two" "unexpected argument: $T/p.snap"
expect "purge --type A --type AAAA, for real" 0 "$bin" purge "$T/p.snap" --type AAAA --type A \
	--now $NOW && expect "what is left" 0 "$bin" dump "$T/p.snap" --json --now $NOW &&
	ok_if "no A or AAAA left, the rest kept" python3 -c '
import json, sys
types = [json.loads(l)["type"] for l in open(sys.argv[1])]
assert len(types) == int(sys.argv[2]) and "A" not in types and "AAAA" not in types
' "$T/out" $((ALL - na))

# decode and encode through the option parser too
python3 tests/helpers/mkresp.py 3 >"$T/txt.msg"
expect "encode the TXT response" 0 "$bin" encode "$T/txt.msg" --now $NOW -o "$T/txt.bin"
expect "decode: an unknown option" 2 "$bin" decode --bogus "$T/txt.bin" &&
	err_has "bogus" "unknown option --bogus"
expect "decode: --, then the file" 0 "$bin" decode -- "$T/txt.bin"
expect "decode: two files" 2 "$bin" decode "$T/txt.bin" "$T/txt.bin" &&
	err_has "two" "unexpected argument"
expect "encode --now=ISO -o" 0 "$bin" encode --now=2023-11-14T22:13:20Z -o "$T/txt2.bin" \
	"$T/txt.msg" &&
	ok_if "the same bytes as --now $NOW" cmp -s "$T/txt.bin" "$T/txt2.bin"
expect "encode: -o with no value" 2 "$bin" encode "$T/txt.msg" -o && err_has "-o" "-o needs a value"

[ "$fails" -eq 0 ]
