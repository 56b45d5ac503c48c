#!/bin/sh
# CLI tests of load, stats, dump, purge, export | import and progress, on a
# snapshot loaded from the worked examples at a fixed time: exact output is
# compared with tests/cli/expected/. Usage: test_ops.sh BUILD
# Regenerate the expected files (then review the diff!) with
#   DNSNAP_UPDATE_EXPECTED=1 sh tests/cli/test_ops.sh build
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exp=tests/cli/expected
. tests/cli/lib.sh
T=1700000000 # the vectors' time: everything is live then

# same_as_expected NAME FILE: the last stdout, with the temporary directory
# written as TMP, equals $exp/FILE
same_as_expected() {
	sed "s|$tmp|TMP|g" "$tmp/out" > "$tmp/out.n" && mv "$tmp/out.n" "$tmp/out"
	if [ -n "${DNSNAP_UPDATE_EXPECTED:-}" ]; then cp "$tmp/out" "$exp/$2"; fi
	same_as "$1" "$exp/$2"
}

# the worked examples 001-012 (the counts below are theirs)
frame $(ls spec/vectors/valid/*.msg | head -12) > "$tmp/valid.dns"
# the responses of 001 and 005 again, a query, a truncated and a malformed one
frame spec/vectors/valid/001-a.msg spec/vectors/invalid/213-msg-query-not-response.msg \
	spec/vectors/invalid/214-msg-truncated-tc.msg spec/vectors/invalid/202-msg-label-over-63.msg \
	spec/vectors/valid/005-nxdomain.msg > "$tmp/mixed.dns"

# ---------------------------------------------------------------- load
expect "load: framed file" 0 "$bin" load "$tmp/s.snap" "$tmp/valid.dns" --now $T &&
	same_as_expected "load output" load.txt && err_has "load report" "12 DNS messages"
expect "verify the loaded snapshot" 0 "$bin" verify "$tmp/s.snap"
expect "load: stdin, into the same snapshot, later" 0 sh -c \
	"'$bin' load '$tmp/s.snap' - --now $((T + 60)) < '$tmp/mixed.dns'" &&
	same_as_expected "load merge output" load-merge.txt &&
	err_has "queries counted" "4 responses (2 loaded, 2 refused), 2 distinct questions, 1 query skipped; 1 truncated (TC=1); 1 bad label (over 63 bytes or bad label type)" &&
	err_has "TC counted" "1 truncated (TC=1)" && err_has "malformed counted" "1 bad label (over 63 bytes or bad label type)"
frame spec/vectors/invalid/213-msg-query-not-response.msg spec/vectors/invalid/214-msg-truncated-tc.msg > "$tmp/unusable.dns"
expect "load: nothing usable" 1 "$bin" load "$tmp/none.snap" "$tmp/unusable.dns" &&
	err_has "nothing usable" "no usable response; no snapshot written"
ok_if "load: nothing usable writes nothing" [ ! -e "$tmp/none.snap" ]
expect "load: a missing input" 2 "$bin" load "$tmp/m.snap" "$tmp/valid.dns" "$tmp/nosuch.pcap" &&
	err_has "missing input named" "nosuch.pcap"
ok_if "load: a missing input writes nothing" [ ! -e "$tmp/m.snap" ]
echo "not a snapshot" > "$tmp/text"
expect "load: the target is not a snapshot" 2 "$bin" load "$tmp/text" "$tmp/valid.dns" &&
	err_has "target named" "$tmp/text"
ok_if "load: a target that is not a snapshot is left alone" grep -q "not a snapshot" "$tmp/text"
expect "load: bad --port" 2 "$bin" load "$tmp/p.snap" "$tmp/valid.dns" --port 70000
expect "load: no input" 2 "$bin" load "$tmp/p.snap"
expect "load: stdin twice" 2 "$bin" load "$tmp/p.snap" - -
if [ -x "$build/mkcaptures" ]; then
	"$build/mkcaptures" "$tmp/cap" > /dev/null
	# every link type and format; each file's responses are answers of
	# www.example.com A, AAAA or nx.example.com (see mkcaptures' list)
	for c in en10mb-vlan.pcap raw-ns-be.pcap sll2.pcapng sll.pcap null.pcap loop.pcap \
		ipv4.pcap ipv6.pcap tcp.pcap framed.bin; do
		rm -f "$tmp/c.snap"
		expect "load: $c" 0 "$bin" load "$tmp/c.snap" "$tmp/cap/$c" --now $T &&
			ok_if "load: $c reported" grep -q "dnsnap load: $tmp/cap/$c: " "$tmp/err"
	done
	expect "load: the TCP capture, reassembled" 0 "$bin" load "$tmp/tcp.snap" "$tmp/cap/tcp.pcap" --now $T &&
		same_as_expected "tcp capture" load-tcp.txt
	expect "load: a capture with malformed packets" 0 "$bin" load "$tmp/bad.snap" "$tmp/cap/malformed.pcap" \
		--now $T && same_as_expected "malformed capture" load-malformed.txt
	sed "s|$tmp|TMP|g" "$tmp/err" > "$tmp/out" && same_as_expected "malformed capture report" load-malformed.err
	expect "load: a capture cut short" 0 "$bin" load "$tmp/cut.snap" "$tmp/cap/cut.pcap" --now $T &&
		err_has "cut capture" "cut.pcap: truncated dump file"
	expect "load: a framed file cut short" 0 "$bin" load "$tmp/fc.snap" "$tmp/cap/framed-cut.bin" --now $T &&
		err_has "cut framed" "message cut by the end of the file at offset"
	expect "load: --port 5353 finds the other port's packet" 0 "$bin" load "$tmp/p5353.snap" \
		"$tmp/cap/malformed.pcap" --port 5353 --now $T
	expect "load: a bad pcap header" 2 "$bin" load "$tmp/x.snap" "$tmp/cap/bad-header.pcap" &&
		err_has "bad header" "bad-header.pcap: bad capture file header"
	expect "load: an unsupported link type" 2 "$bin" load "$tmp/x.snap" "$tmp/cap/wifi.pcap" &&
		err_has "link type" "wifi.pcap: unsupported link type 105"
	expect "load: not a capture" 2 "$bin" load "$tmp/x.snap" "$tmp/cap/not-dns.txt" &&
		err_has "not a capture" "neither a pcap"
	ok_if "load: refused inputs write nothing" [ ! -e "$tmp/x.snap" ]
else
	echo "not ok - $build/mkcaptures not built"; fails=$((fails + 1))
fi

# Unbound's dump_cache text (a real one, tests/fixtures), told by its first line
dump=tests/fixtures/unbound-dump_cache.txt
nmsg=$(grep -c '^msg ' $dump)
expect "load: an Unbound cache dump" 0 "$bin" load "$tmp/u.snap" $dump --now $T &&
	err_has "dump recognised" "Unbound cache dump: " && err_has "all rebuilt" " $nmsg responses rebuilt"
expect "load: the dump from stdin" 0 sh -c "'$bin' load '$tmp/u2.snap' - --now $T < $dump"
expect "export --format unbound" 0 "$bin" export "$tmp/u.snap" --format unbound --now $T -o "$tmp/u.txt" &&
	err_has "export counts" "left out: 0 expired"
ok_if "export --format unbound: load_cache's frame" \
	sh -c "head -1 '$tmp/u.txt' | grep -qx START_RRSET_CACHE && tail -1 '$tmp/u.txt' | grep -qx EOF"
expect "load of our own export" 0 "$bin" load "$tmp/u3.snap" "$tmp/u.txt" --now $T
# records without TTLs: an RRset two messages share is written once, at the
# lower of their TTLs (the SOA of the zone and of its negative answers)
records() { sed '/^;/d' "$1" | awk '{ $2 = ""; print }'; }
expect "dump of both" 0 "$bin" dump "$tmp/u.snap" --now $T && records "$tmp/out" > "$tmp/u.dump"
expect "dump of the reloaded" 0 "$bin" dump "$tmp/u3.snap" --now $T && records "$tmp/out" > "$tmp/u3.dump"
ok_if "Unbound text round trip: the same records" cmp -s "$tmp/u3.dump" "$tmp/u.dump"
expect "export --format: unknown" 2 "$bin" export "$tmp/u.snap" --format bind -o "$tmp/x.txt"
expect "export --format unbound --top" 2 "$bin" export "$tmp/u.snap" --format unbound --top 3 -o "$tmp/x.txt"
echo keep > "$tmp/keep.txt"
expect "export of a file that is not a snapshot" 2 "$bin" export "$tmp/text" -o "$tmp/keep.txt"
ok_if "a failed export leaves OUT as it was" grep -qx keep "$tmp/keep.txt"
ok_if "and no temporary" not sh -c "ls '$tmp' | grep -q 'keep.txt.tmp'"

# ---------------------------------------------------------------- stats, dump
cp "$tmp/s.snap" "$tmp/keep.snap"
expect "stats" 0 "$bin" stats "$tmp/s.snap" --now $((T + 60)) && same_as_expected stats stats.txt
expect "stats --json" 0 "$bin" stats "$tmp/s.snap" --json --top 2 --now $((T + 60)) &&
	same_as_expected "stats --json" stats.json
expect "stats --top 0" 0 "$bin" stats "$tmp/s.snap" --top 0 --now $((T + 60))
ok_if "stats --top 0 lists none" not grep -q "by hits" "$tmp/out"
expect "stats: bad --top" 2 "$bin" stats "$tmp/s.snap" --top many
expect "dump" 0 "$bin" dump "$tmp/s.snap" --now $((T + 60)) && same_as_expected dump dump.txt
expect "dump --json" 0 "$bin" dump "$tmp/s.snap" --json --now $((T + 60)) &&
	same_as_expected "dump --json" dump.json
expect "dump --zone example.com --type A" 0 "$bin" dump "$tmp/s.snap" --zone example.com \
	--type A --json --now $((T + 60)) && same_as_expected "dump zone+type" dump-zone-a.json

# tags: loads cache under no tag; an empty --tag means "no tag"
expect "dump --tag '' (untagged)" 0 "$bin" dump "$tmp/s.snap" --tag '' --json --now $((T + 60)) &&
	ok_if "dump --tag '': every entry" [ "$(wc -l < "$tmp/out")" -eq 10 ]
expect "dump --tag 0a0b: none" 1 "$bin" dump "$tmp/s.snap" --tag 0a0b --now $((T + 60))
expect "dump --tag: not hex" 2 "$bin" dump "$tmp/s.snap" --tag 0g && err_has "tag" "--tag: not hex"
expect "get --tag 0a0b: a miss" 1 "$bin" get "$tmp/s.snap" www.example.com A --tag 0a0b --now $((T + 60))
expect "get --class IN: a hit" 0 "$bin" get "$tmp/s.snap" www.example.com A --class IN --now $((T + 60))
expect "get --class CH: a miss" 1 "$bin" get "$tmp/s.snap" www.example.com A --class CH --now $((T + 60))
expect "get --class: unknown" 2 "$bin" get "$tmp/s.snap" www.example.com A --class NOSUCH

# ---------------------------------------------------------------- purge
expect "purge --tag 0a0b: nothing matched" 1 "$bin" purge "$tmp/s.snap" --tag 0a0b
expect "purge: needs a filter" 2 "$bin" purge "$tmp/s.snap" && err_has "filter" "needs at least one"
expect "purge: unknown type" 2 "$bin" purge "$tmp/s.snap" --type NOSUCH && err_has type "unknown type name"
expect "purge: invalid name" 2 "$bin" purge "$tmp/s.snap" --name "a..b" && err_has name "not a valid domain name"
expect "purge --dry-run" 0 "$bin" purge "$tmp/s.snap" --type A --dry-run &&
	same_as_expected "purge --dry-run" purge-dry.txt
ok_if "purge --dry-run leaves the file" cmp -s "$tmp/s.snap" "$tmp/keep.snap"
expect "purge: nothing matched" 1 "$bin" purge "$tmp/s.snap" --name nothere.example
ok_if "purge: nothing matched leaves the file" cmp -s "$tmp/s.snap" "$tmp/keep.snap"
expect "purge --name --type" 0 "$bin" purge "$tmp/s.snap" --name www.example.com --type A &&
	same_as_expected "purge --name" purge-name.txt
expect "purged name is gone" 1 "$bin" get "$tmp/s.snap" www.example.com A --now $((T + 60))
expect "purge --zone" 0 "$bin" purge "$tmp/s.snap" --zone example.org
expect "purged zone is gone" 1 "$bin" dump "$tmp/s.snap" --zone example.org --expired
expect "verify after purges" 0 "$bin" verify "$tmp/s.snap"
expect "purge --expired" 0 "$bin" purge "$tmp/s.snap" --expired --now 1900000000 &&
	grep -q "left 0\|, 0 left" "$tmp/out"
expect "an empty snapshot verifies" 0 "$bin" verify "$tmp/s.snap"
expect "stats of an empty snapshot" 0 "$bin" stats "$tmp/s.snap"

# ---------------------------------------------------------------- round trip
expect "export | import" 0 sh -c "'$bin' export '$tmp/keep.snap' -o - | '$bin' import - -o '$tmp/rt.snap' --now $T"
expect "dump of the source" 0 "$bin" dump "$tmp/keep.snap" --json --now $((T + 60)) && cp "$tmp/out" "$tmp/a.json"
expect "dump of the copy" 0 "$bin" dump "$tmp/rt.snap" --json --now $((T + 60))
ok_if "export | import: dump identical" cmp -s "$tmp/out" "$tmp/a.json"
d1=$("$bin" info "$tmp/keep.snap" --json | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
d2=$("$bin" info "$tmp/rt.snap" --json | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
ok_if "export | import: digests equal ($d1)" [ -n "$d1" ] && [ "$d1" = "$d2" ]
expect "export --top 3" 0 "$bin" export "$tmp/keep.snap" -o "$tmp/top.dnsx" --top 3
cp "$tmp/text" "$tmp/text2"
expect "import: the target is not a snapshot" 2 "$bin" import "$tmp/top.dnsx" -o "$tmp/text2" \
	--now $T && err_has "target named" "$tmp/text2: not a snapshot"
ok_if "import: a target that is not a snapshot is left alone" cmp -s "$tmp/text" "$tmp/text2"
expect "import --top 3" 0 "$bin" import "$tmp/top.dnsx" -o "$tmp/top.snap" --now $T
expect "info --top 3" 0 "$bin" info "$tmp/top.snap" --json --now $T &&
	grep -q '"entries":3,' "$tmp/out"
expect "import: expired entries left out" 0 "$bin" import "$tmp/top.dnsx" -o "$tmp/late.snap" --now 1900000000 &&
	err_has "expired left out" "3 entries expired at --now, left out"

# ---------------------------------------------------------------- progress
# on a terminal (script(1) gives one) long operations report progress on
# stderr; otherwise they are silent (every expect above checked stdout only)
if command -v script > /dev/null; then
	script -qec "'$bin' verify '$tmp/keep.snap'" /dev/null > "$tmp/tty" 2>&1
	ok_if "verify shows progress on a terminal" grep -q "verify: 10 of 10 entries (100%)" "$tmp/tty"
	"$bin" verify "$tmp/keep.snap" > /dev/null 2> "$tmp/err"
	ok_if "and is silent otherwise" [ ! -s "$tmp/err" ]
	script -qec "'$bin' export '$tmp/keep.snap' -o '$tmp/p.dnsx'" /dev/null > "$tmp/tty" 2>&1
	ok_if "export shows progress on a terminal" grep -q "export: 10 of 10 entries" "$tmp/tty"
	script -qec "'$bin' import '$tmp/p.dnsx' -o '$tmp/p.snap' --now $T" /dev/null > "$tmp/tty" 2>&1
	ok_if "import shows progress on a terminal" grep -q "import: 10 of 10 entries" "$tmp/tty"
	script -qec "'$bin' purge '$tmp/p.snap' --type MX" /dev/null > "$tmp/tty" 2>&1
	ok_if "purge shows progress on a terminal" grep -q "purge: 10 of 10 entries" "$tmp/tty"
else
	echo "not ok - script(1) not found"; fails=$((fails + 1))
fi

[ "$fails" -eq 0 ]
