#!/bin/sh
# CLI tests: expected stdout, stderr and exit codes. Usage: test_cli.sh BUILD
set -u
bin=${1:-build}/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh

expect "--version" 0 "$bin" --version && grep -q '^dnsnap .* (entries and export stream 1\.0, snapshots 2\.1)$' "$tmp/out" ||
	{ echo "not ok - version line"; fails=$((fails + 1)); }
expect "--help" 0 "$bin" --help
expect "no command is bad usage" 2 "$bin"
expect "unknown command is bad usage" 2 "$bin" frobnicate && err_has unknown "unknown command 'frobnicate'"
expect "decode: missing file" 2 "$bin" decode "$tmp/none.bin" && err_has missing "$tmp/none.bin: No such file"

# every valid vector decodes to its expected text; encode reproduces its bytes
for m in spec/vectors/valid/*.msg; do
	v=${m%.msg}
	expect "decode $(basename "$v")" 0 "$bin" decode "$v.bin" && same_as "decode $v" "$v.txt"
	expect "encode $(basename "$v")" 0 "$bin" encode "$m" --now 1700000000 -o "$tmp/e.bin" &&
		{ cmp -s "$tmp/e.bin" "$v.bin" || { echo "not ok - encode $v: bytes differ"; fails=$((fails + 1)); }; }
done
# stdin and stdout as -
expect "encode from stdin to stdout" 0 sh -c "'$bin' encode - --now 1700000000 < spec/vectors/valid/001-a.msg"
same_as "encode stdin" spec/vectors/valid/001-a.bin

# bad data: exit 2, the file, the code and the offset named
expect "decode: invalid entry" 2 "$bin" decode spec/vectors/invalid/107-auth-off-not-on-a-record.bin &&
	err_has "invalid entry" "107-auth-off-not-on-a-record.bin: DNSNAP_EFIELD in the entry at offset 14"
expect "decode: invalid key" 2 "$bin" decode spec/vectors/invalid/131-key-upper-case.bin &&
	err_has "invalid key" "DNSNAP_EFIELD in the key at offset 1"
expect "encode: malformed message" 2 "$bin" encode spec/vectors/invalid/202-msg-label-over-63.msg &&
	err_has "malformed message" "202-msg-label-over-63.msg: DNSNAP_ELABEL at offset 12"
printf 'x' > "$tmp/short.bin"
expect "decode: one byte" 2 "$bin" decode "$tmp/short.bin" && err_has short "DNSNAP_ETRUNC"
expect "encode: bad --now" 2 "$bin" encode spec/vectors/valid/001-a.msg --now soon && err_has now "--now"

# export stream vectors (expect sets name, code and got: other names here):
# the valid ones import with all their entries; the
# invalid ones exit 2 with one line naming the file once, and write nothing
# (test_vectors checks each one's code and offset)
for s in spec/vectors/valid/3*-stream-*.dnsx; do
	vec=$(basename "$s")
	want=$(grep -c '^; .* rcode ' "${s%.dnsx}.txt")
	expect "import $vec" 0 "$bin" import "$s" -o "$tmp/v.snap" --now 1700000000 &&
		expect "info of the import of $vec" 0 "$bin" info "$tmp/v.snap" --json --now 1700000000 &&
		grep -q "\"entries\":$want,\"live\":$want," "$tmp/out" ||
		{ echo "not ok - $vec: not $want live entries"; fails=$((fails + 1)); }
	rm -f "$tmp/v.snap"
done
for s in spec/vectors/invalid/3*-stream-*.dnsx; do
	vec=$(basename "$s")
	expect "import $vec" 2 "$bin" import "$s" -o "$tmp/i.snap" --now 1700000000 &&
		err_has "$vec" "dnsnap import: $s: " &&
		ok_if "$vec: one line" [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
		ok_if "$vec: the file named once" not grep -q "$s: .*$s\|: import: " "$tmp/err" &&
		{ [ ! -e "$tmp/i.snap" ] || { echo "not ok - $vec left a snapshot"; fails=$((fails + 1)); }; }
done
expect "import: another major version" 2 "$bin" import spec/vectors/invalid/314-stream-major-2.dnsx \
	-o "$tmp/i.snap" && err_has "major 2" "export stream format 2.0, this dnsnap reads 1.x"

# the demo runs over the worked examples
nmsg=$(ls spec/vectors/valid/*.msg | wc -l)
expect "demo" 0 "$bin" demo spec/vectors/valid/*.msg && grep -q "^$nmsg responses: " "$tmp/out" ||
	{ echo "not ok - demo summary"; fails=$((fails + 1)); }

# snapshots: info, verify, export, import (a snapshot made by the resolver demo)
demo=${1:-build}/resolver_demo
if [ -x "$demo" ]; then
	qname=$("$demo" fill "$tmp/a.snap" 2000 | sed -n 's/^  query 0 (\(.*\)):.*/\1/p')
	live=1700000100 # before the demo ran: every entry still live then
	expect "get: a hit" 0 "$bin" get "$tmp/a.snap" "$qname" A --now $live &&
		grep -q '^;; ANSWER SECTION:$' "$tmp/out" &&
		grep -q "^$qname[[:space:]]*[0-9]*	IN	A	" "$tmp/out" &&
		grep -q 'status: NOERROR' "$tmp/out" ||
		{ echo "not ok - get output"; cat "$tmp/out"; fails=$((fails + 1)); }
	expect "get --do: DO echoed" 0 "$bin" get "$tmp/a.snap" "$qname" --do --now $live &&
		grep -q '; EDNS: version: 0, flags: do; udp: 1232' "$tmp/out" ||
		{ echo "not ok - get --do"; fails=$((fails + 1)); }
	expect "get: a miss" 1 "$bin" get "$tmp/a.snap" nothere.example --now $live &&
		err_has "miss" "not in"
	expect "get: expired is a miss" 1 "$bin" get "$tmp/a.snap" "$qname" --now 1900000000
	expect "get: unknown type name" 2 "$bin" get "$tmp/a.snap" "$qname" NOSUCHTYPE &&
		err_has "type" "unknown type name"
	expect "get: invalid domain name" 2 "$bin" get "$tmp/a.snap" \
		"$(printf 'a%.0s' $(seq 1 70)).example" && err_has "name" "not a valid domain name"
	expect "get: bad --tag" 2 "$bin" get "$tmp/a.snap" "$qname" --tag xyz
	expect "dump --name" 0 "$bin" dump "$tmp/a.snap" --name "$qname" --now $live &&
		[ "$(grep -c '^; ' "$tmp/out")" -eq 1 ] && grep -q "^; $qname IN A " "$tmp/out" ||
		{ echo "not ok - dump --name"; fails=$((fails + 1)); }
	expect "dump everything live" 0 "$bin" dump "$tmp/a.snap" --json --now $live &&
		[ "$(wc -l < "$tmp/out")" -eq 2000 ] ||
		{ echo "not ok - dump count"; fails=$((fails + 1)); }
	cp "$tmp/out" "$tmp/all.json"
	zone=$(echo "$qname" | sed 's/^[^.]*\.//') # the name's parent, e.g. bidi.net.
	want=$(grep -c "^{\"name\":\"\([^\"]*\.\)\{0,1\}$(echo "$zone" | sed 's/\./\\./g')\"" "$tmp/all.json")
	expect "dump --zone" 0 "$bin" dump "$tmp/a.snap" --zone "$zone" --json --now $live &&
		[ "$(wc -l < "$tmp/out")" -eq "$want" ] && [ "$want" -ge 1 ] ||
		{ echo "not ok - dump --zone $zone: $(wc -l < "$tmp/out") lines, want $want"; fails=$((fails + 1)); }
	expect "dump --type AAAA" 0 "$bin" dump "$tmp/a.snap" --type AAAA --json --now $live &&
		! grep -v '"type":"AAAA"' "$tmp/out" | grep -q . ||
		{ echo "not ok - dump --type"; fails=$((fails + 1)); }
	expect "dump: nothing live later" 1 "$bin" dump "$tmp/a.snap" --now 1900000000
	expect "dump --expired" 0 "$bin" dump "$tmp/a.snap" --expired --json --now 1900000000 &&
		[ "$(wc -l < "$tmp/out")" -eq 2000 ] ||
		{ echo "not ok - dump --expired"; fails=$((fails + 1)); }
	expect "dump --zone: invalid name" 2 "$bin" dump "$tmp/a.snap" --zone "a..b"
	expect "info" 0 "$bin" info "$tmp/a.snap" --now $live &&
		grep -q '^entries: *2000 (live 2000, expired 0)$' "$tmp/out" ||
		{ echo "not ok - info counts"; fails=$((fails + 1)); }
	expect "info --json, all expired later" 0 "$bin" info "$tmp/a.snap" --json --now 1900000000 &&
		grep -q '"entries":2000,"live":0,"expired":2000' "$tmp/out" ||
		{ echo "not ok - info --json"; fails=$((fails + 1)); }
	digest=$(sed -n 's/.*"digest":"\([0-9a-f]*\)".*/\1/p' "$tmp/out")
	expect "verify a good snapshot" 0 "$bin" verify "$tmp/a.snap" &&
		grep -q "good: 2000 entries, digest $digest" "$tmp/out" ||
		{ echo "not ok - verify output"; fails=$((fails + 1)); }
	expect "export" 0 "$bin" export "$tmp/a.snap" -o "$tmp/a.dnsx" --level 5
	expect "import" 0 "$bin" import "$tmp/a.dnsx" -o "$tmp/b.snap" --now $live
	expect "imported digest" 0 "$bin" info "$tmp/b.snap" --json --now $live &&
		grep -q "\"entries\":2000,.*\"digest\":\"$digest\"" "$tmp/out" ||
		{ echo "not ok - export/import changed the digest"; fails=$((fails + 1)); }
	expect "export - | import -" 0 sh -c "'$bin' export '$tmp/a.snap' -o - |
		'$bin' import - -o '$tmp/c.snap' --now $live"
	expect "piped digest" 0 "$bin" info "$tmp/c.snap" --json --now $live &&
		grep -q "\"digest\":\"$digest\"" "$tmp/out" ||
		{ echo "not ok - piped round trip"; fails=$((fails + 1)); }
	head -c 1000 "$tmp/a.dnsx" > "$tmp/cut.dnsx"
	expect "import of a cut stream" 2 "$bin" import "$tmp/cut.dnsx" -o "$tmp/d.snap" &&
		err_has "cut stream" "cut.dnsx" &&
		{ [ ! -e "$tmp/d.snap" ] || { echo "not ok - a cut stream left a file"; fails=$((fails + 1)); }; }
	cp "$tmp/a.snap" "$tmp/f.snap"
	printf '\377' | dd of="$tmp/f.snap" bs=1 seek=20000 conv=notrunc 2>/dev/null
	expect "verify finds a changed byte" 2 "$bin" verify "$tmp/f.snap" &&
		err_has "flipped" "DNSNAP_ECHECKSUM"
	expect "info of a file that is not a snapshot" 2 "$bin" info spec/vectors/valid/001-a.bin &&
		err_has "not a snapshot" "001-a.bin"
	expect "export needs -o" 2 "$bin" export "$tmp/a.snap"
	expect "export --level out of range" 2 "$bin" export "$tmp/a.snap" -o "$tmp/x" --level 99
else
	echo "not ok - $demo not built"; fails=$((fails + 1))
fi

[ "$fails" -eq 0 ]
