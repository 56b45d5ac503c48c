#!/bin/sh
# CLI tests of how demo reads and encode, export and import write (issue 11
# review, items 7, 13, 20, 22): demo - reads standard input once; encode -o
# goes through out_open() as export does (one message naming OUT, written
# beside and renamed, never in place); an empty -o is refused; export --level
# is 1 to 19; a damaged export says what became of its output.
# Usage: test_outputs.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
V=spec/vectors/valid

inode() { ls -i "$1" | cut -d' ' -f1; }

# ------------------------------------------------------ demo -: read once
expect "demo of a file" 0 "$bin" demo $V/001-a.msg
cp "$tmp/out" "$tmp/demo-file"
expect "demo - (standard input)" 0 sh -c "'$bin' demo - < $V/001-a.msg"
sed "s|^=== $V/001-a.msg:|=== -:|" "$tmp/demo-file" > "$tmp/demo-want"
same_as "demo - prints what demo FILE does" "$tmp/demo-want"
ok_if "demo -: the wire size is the file's" grep -q "^=== -: DNS response $(wc -c < $V/001-a.msg | tr -d ' ') bytes" "$tmp/out"

# ------------------------------------------------------- encode -o OUT
mkdir "$tmp/d"
expect "encode -o in a directory that does not exist" 2 "$bin" encode $V/001-a.msg -o "$tmp/no/dir/x.out"
says "encode -o no/dir" "dnsnap encode: $tmp/no/dir/x.out: cannot create: directory $tmp/no/dir does not exist"
expect "encode -o a directory" 2 "$bin" encode $V/001-a.msg -o "$tmp/d"
says "encode -o a directory" "dnsnap encode: $tmp/d: is a directory"
if [ -w /dev/full ]; then
	expect "encode to a full device" 2 "$bin" encode $V/001-a.msg -o /dev/full
	says "encode: device full" "dnsnap encode: /dev/full: writing: No space left on device"
fi
expect "encode -o ''" 2 "$bin" encode $V/001-a.msg -o ''
says "encode: empty -o" "dnsnap encode: -o: an empty file name"
expect "encode -o FILE" 0 "$bin" encode --now 1700000000 $V/001-a.msg -o "$tmp/k.bin"
expect "encode to standard output" 0 sh -c "'$bin' encode --now 1700000000 $V/001-a.msg | cat"
same_as "encode -o FILE writes what goes to standard output" "$tmp/k.bin"
chmod 0640 "$tmp/k.bin"
i1=$(inode "$tmp/k.bin")
expect "encode -o an existing file" 0 "$bin" encode --now 1700000000 $V/001-a.msg -o "$tmp/k.bin"
ok_if "encode replaces OUT by a rename (a new inode), not in place" [ "$(inode "$tmp/k.bin")" != "$i1" ]
ok_if "encode keeps the replaced file's mode" [ "$(stat -c %a "$tmp/k.bin")" = 640 ]
ok_if "encode leaves no temporary" [ "$(ls "$tmp" | grep -c tmp)" -eq 0 ]
expect "decode of what encode wrote" 0 "$bin" decode "$tmp/k.bin"

# ------------------------------------------------------- export, import
"$build"/resolver_demo fill "$tmp/x.snap" 50 > /dev/null 2>&1 ||
	{ echo "not ok - resolver_demo fill"; exit 1; }
expect "export -o ''" 2 "$bin" export "$tmp/x.snap" -o ''
says "export: empty -o" "dnsnap export: -o: an empty file name"
"$bin" export "$tmp/x.snap" -o "$tmp/x.dnsx" || { echo "not ok - export"; exit 1; }
expect "import -o ''" 2 "$bin" import "$tmp/x.dnsx" -o ''
says "import: empty -o" "dnsnap import: -o: an empty file name"
for l in 0 20; do
	expect "export --level $l is refused" 2 "$bin" export "$tmp/x.snap" --level $l -o "$tmp/l.dnsx"
done
says "export --level 20" "dnsnap export: --level: not a number up to 19: 20"
"$bin" export "$tmp/x.snap" --level 0 -o "$tmp/l.dnsx" 2> "$tmp/err"
says "export --level 0" "dnsnap export: --level: 1 to 19, not 0"
ok_if "export --level 0: nothing written" not test -e "$tmp/l.dnsx"
for l in 1 19; do
	expect "export --level $l" 0 "$bin" export "$tmp/x.snap" --level $l -o "$tmp/l$l.dnsx"
done

[ "$fails" -eq 0 ]
