#!/bin/sh
# CLI tests of what every command shares (issue 11, items 9 and 10): a failed
# write to standard output is an error, -h is --help after any command, type
# and name arguments are refused with the reason (never wrapped to another
# type), --now names what is wrong. Usage: test_conventions.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
V=spec/vectors/valid

"$build"/resolver_demo fill "$tmp/x.snap" 300 > /dev/null 2>&1 ||
	{ echo "not ok - resolver_demo fill"; exit 1; }
name=$("$bin" dump "$tmp/x.snap" --type A | awk 'NR == 1 { print $2; exit }')

# ------------------------------------------------- standard output is the result
if [ -w /dev/full ]; then
	for c in "dump $tmp/x.snap" "info $tmp/x.snap" "stats $tmp/x.snap" "verify $tmp/x.snap" \
		 "get $tmp/x.snap $name A" "decode $V/001-a.bin" "help dump" "--help" \
		 "dump $tmp/x.snap --json" "diff $tmp/x.snap $tmp/x.snap --json"; do
		set -- $c
		cmd=$1
		[ "$cmd" = --help ] && cmd=""
		"$bin" "$@" > /dev/full 2> "$tmp/err"
		rc=$?
		# diff of a file with itself prints nothing: nothing to lose, exit 0
		want=2
		[ "$1" = diff ] && want=0
		if [ $rc -ne $want ]; then
			echo "not ok - $c > /dev/full: exit $rc, expected $want"; fails=$((fails + 1))
		elif [ $want -eq 2 ] && ! grep -q "^dnsnap${cmd:+ $cmd}: standard output: " "$tmp/err"; then
			echo "not ok - $c > /dev/full: not named"; sed 's/^/#   /' "$tmp/err"
			fails=$((fails + 1))
		else
			echo "ok - $c > /dev/full: exit $want"
		fi
	done
else
	echo "ok - /dev/full checks # SKIP no writable /dev/full"
fi

# ------------------------------------------------------------ help anywhere
for c in dump get purge load diff serve; do
	"$bin" $c --help > "$tmp/want" 2>&1
	expect "$c -h: exit 0" 0 "$bin" $c "$tmp/x.snap" -h && same_as "$c -h is $c --help" "$tmp/want"
done
expect "after --, -h is an operand" 2 "$bin" dump -- -h

# ------------------------------------------------- types and names, refused whole
cp "$tmp/x.snap" "$tmp/y.snap"
for t in TYPE65537 TYPE99999 TYPE0 TYPE65536 TYPE1x; do
	expect "purge --type $t: exit 2" 2 "$bin" purge "$tmp/y.snap" --type $t --dry-run &&
		says "purge --type $t" "dnsnap purge: --type $t: unknown type name (a mnemonic such as AAAA, or TYPE1 to TYPE65535)"
	expect "dump --type $t: exit 2" 2 "$bin" dump "$tmp/y.snap" --type $t
done
ok_if "the snapshot untouched" cmp -s "$tmp/x.snap" "$tmp/y.snap"
# one --now for both: TTLs left must not tick between the two (qemu is slow)
now=$(date +%s)
expect "dump --type type1 (any case): the A entries" 0 "$bin" dump "$tmp/x.snap" --type type1 \
	--now "$now"
"$bin" dump "$tmp/x.snap" --type A --now "$now" > "$tmp/a"
same_as "dump --type type1 = --type A" "$tmp/a"
expect "dump --type TYPE65535: nothing, exit 1" 1 "$bin" dump "$tmp/x.snap" --type TYPE65535
expect "dump --name '': exit 2" 2 "$bin" dump "$tmp/x.snap" --name '' &&
	says "dump --name ''" 'dnsnap dump: --name: an empty name (the root is ".")'
expect "dump --zone a..b: exit 2" 2 "$bin" dump "$tmp/x.snap" --zone a..b &&
	says "dump --zone a..b" "dnsnap dump: --zone a..b: not a valid domain name (Empty label)"
long=$(printf 'a%.0s' $(seq 64)).example
expect "dump --name with a 64-byte label: exit 2" 2 "$bin" dump "$tmp/x.snap" --name "$long" &&
	says "a 64-byte label" "dnsnap dump: --name $long: not a valid domain name (Label length overflow)"

# ----------------------------------------------------------------- --now
expect "--now without a zone: exit 2" 2 "$bin" dump "$tmp/x.snap" --now 2026-11-30T12:00 &&
	says "--now without a zone" "dnsnap dump: --now: 2026-11-30T12:00: a time of day needs its zone: 2026-11-30T12:00Z for UTC, or an offset such as 2026-11-30T12:00+01:00"
expect "--now 4294967296: exit 2" 2 "$bin" info "$tmp/x.snap" --now 4294967296 &&
	says "--now out of range" "dnsnap info: --now: 4294967296 is outside 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z (Unix time in 32 bits)"
"$bin" info "$tmp/x.snap" --now 2026-11-30T12:00:00Z > "$tmp/want"
expect "--now with +0100 and a fraction" 0 "$bin" info "$tmp/x.snap" --now 2026-11-30T13:00:00.5+0100 &&
	same_as "the same instant" "$tmp/want"

# ---------------------------------------------------- import of a tiny file
printf 'hi\n' > "$tmp/hi"
expect "import of 3 bytes of text: exit 2" 2 "$bin" import "$tmp/hi" -o "$tmp/n.snap" &&
	says "import of 3 bytes" "dnsnap import: $tmp/hi: not an export stream (its first bytes are not a zstd frame's)"
ok_if "nothing written" test ! -e "$tmp/n.snap"

# ------------------------------------ a file name with a newline: one line
nl="$tmp/new
line.snap"
expect "info of a missing file named with a newline: exit 2" 2 "$bin" info "$nl" &&
	says "the newline written in octal" "dnsnap info: $tmp/new\\012line.snap: No such file or directory"

echo
[ "$fails" -eq 0 ] && echo "all ok" || echo "$fails failed"
[ "$fails" -eq 0 ]
