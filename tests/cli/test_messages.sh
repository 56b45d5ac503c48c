#!/bin/sh
# CLI tests of the messages of bad input and output files (issue 11, item 10)
# and of export's and import's summaries. Usage: test_messages.sh BUILD
# Each failure is exactly one line, "dnsnap CMD: FILE: what is wrong", with
# no second prefix, no temporary file's name and no stream offset for what is
# not a stream's fault; and exit code 2.
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
V=spec/vectors/valid
I=spec/vectors/invalid

# json_is NAME PYTHON-EXPRESSION: the last stdout is one JSON object j for
# which the expression holds
json_is() {
	if python3 -c 'import json, sys
j = json.loads(open(sys.argv[1]).read())
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out" "$2"; then
		echo "ok - $1"
	else
		echo "not ok - $1: not ($2):"; sed 's/^/#   /' "$tmp/out"; fails=$((fails + 1))
	fi
}

"$build"/resolver_demo fill "$tmp/x.snap" 300 > /dev/null 2>&1 ||
	{ echo "not ok - resolver_demo fill"; exit 1; }
"$bin" export "$tmp/x.snap" -o "$tmp/x.dnsx" || { echo "not ok - export"; exit 1; }
mkdir "$tmp/d"
: > "$tmp/empty"
printf 'not a stream, not a snapshot either\n' > "$tmp/text"
size() { wc -c < "$1" | tr -d ' '; }

# ------------------------------------------------------------ output files
expect "import -o in a directory that does not exist" 2 \
	"$bin" import "$tmp/x.dnsx" -o "$tmp/no/dir/x.snap"
says "import -o no/dir" \
	"dnsnap import: $tmp/no/dir/x.snap: cannot create: directory $tmp/no/dir does not exist"
expect "export -o in a directory that does not exist" 2 \
	"$bin" export "$tmp/x.snap" -o "$tmp/no/dir/x.dnsx"
says "export -o no/dir" \
	"dnsnap export: $tmp/no/dir/x.dnsx: cannot create: directory $tmp/no/dir does not exist"
expect "import -o under a file" 2 "$bin" import "$tmp/x.dnsx" -o "$tmp/x.snap/y.snap"
says "import -o under a file" "dnsnap import: $tmp/x.snap/y.snap: cannot create: $tmp/x.snap is not a directory"
expect "export -o under a file" 2 "$bin" export "$tmp/x.snap" -o "$tmp/x.snap/y.dnsx"
says "export -o under a file" "dnsnap export: $tmp/x.snap/y.dnsx: cannot create: $tmp/x.snap is not a directory"
expect "export -o a directory" 2 "$bin" export "$tmp/x.snap" -o "$tmp/d"
says "export -o a directory" "dnsnap export: $tmp/d: is a directory"
expect "purge in a directory that does not exist" 2 "$bin" purge --type A "$tmp/no/x.snap"
says "purge no/dir" "dnsnap purge: $tmp/no/x.snap: cannot create: directory $tmp/no does not exist"
ok_if "no temporary left behind" [ "$(ls "$tmp" | grep -c tmp)" -eq 0 ]

# ------------------------------------------------- what import is given
expect "import a snapshot" 2 "$bin" import "$tmp/x.snap" -o "$tmp/y.snap"
says "import a snapshot" "dnsnap import: $tmp/x.snap: not an export stream (it is an LMDB file, a dnsnap snapshot, which dnsnap export turns into a stream)"
expect "import text" 2 "$bin" import "$tmp/text" -o "$tmp/y.snap"
says "import text" "dnsnap import: $tmp/text: not an export stream (its first bytes are not a zstd frame's)"
expect "import a decompressed stream" 2 "$bin" import $I/312-stream-not-compressed.dnsx -o "$tmp/y.snap"
says "import a decompressed stream" "dnsnap import: $I/312-stream-not-compressed.dnsx: not an export stream (it is an export stream decompressed; dnsnap import takes it zstd-compressed, as dnsnap export writes it)"
expect "import an empty file" 2 "$bin" import "$tmp/empty" -o "$tmp/y.snap"
says "import an empty file" "dnsnap import: $tmp/empty: an empty file, not an export stream"
expect "import empty standard input" 2 "$bin" import - -o "$tmp/y.snap" < /dev/null
says "import empty stdin" "dnsnap import: standard input: empty, not an export stream"
expect "import a directory" 2 "$bin" import "$tmp/d" -o "$tmp/y.snap"
says "import a directory" "dnsnap import: $tmp/d: a directory, not an export stream"
expect "import a missing file" 2 "$bin" import "$tmp/nope.dnsx" -o "$tmp/y.snap"
says "import a missing file" "dnsnap import: $tmp/nope.dnsx: No such file or directory"
ok_if "nothing written" not test -e "$tmp/y.snap"

# ------------------------------------------------------ streams cut short
# the file cut inside the zstd frame: zstd hands out nothing of a block it
# has not whole, so nothing was decompressed
head -c 300 $V/302-stream-four-entries.dnsx > "$tmp/cut.dnsx"
expect "import a cut file" 2 "$bin" import "$tmp/cut.dnsx" -o "$tmp/y.snap"
says "import a cut file" "dnsnap import: $tmp/cut.dnsx: the stream ends at byte 0 of the decompressed data, before the stream header; the file's 300 bytes end inside a zstd frame (truncated?)"
expect "import a stream cut in an entry" 2 "$bin" import $I/322-stream-cut-in-record.dnsx -o "$tmp/y.snap"
says "cut in an entry" "dnsnap import: $I/322-stream-cut-in-record.dnsx: entry 2 of 4, at byte 154 of the decompressed data, is cut: the stream ends 10 bytes into it (truncated?)"
expect "import a stream cut before its end record" 2 "$bin" import $I/323-stream-cut-before-end-record.dnsx -o "$tmp/y.snap"
says "cut before the end record" "dnsnap import: $I/323-stream-cut-before-end-record.dnsx: the stream ends at byte 572 of the decompressed data, after entry 4, before the end record (truncated?)"
expect "import a frame cut in an entry" 2 "$bin" import $I/327-stream-cut-in-zstd-frame.dnsx -o "$tmp/y.snap"
says "frame cut in an entry" "dnsnap import: $I/327-stream-cut-in-zstd-frame.dnsx: entry 2 of 4, at byte 154 of the decompressed data, is cut: the stream ends 10 bytes into it; the file's 318 bytes end inside a zstd frame (truncated?)"
expect "import a stream whose zstd checksum is cut" 2 "$bin" import $I/326-stream-cut-in-zstd-checksum.dnsx -o "$tmp/y.snap"
says "zstd checksum cut" "dnsnap import: $I/326-stream-cut-in-zstd-checksum.dnsx: the stream ends at byte 590 of the decompressed data, after the end record, but the file's 446 bytes end inside a zstd frame (its checksum or a next frame cut: truncated?)"
expect "import damaged compressed data" 2 "$bin" import $I/329-stream-zstd-block-flipped.dnsx -o "$tmp/y.snap"
says "damaged compressed data" "dnsnap import: $I/329-stream-zstd-block-flipped.dnsx: the compressed data is damaged (zstd: Restored data doesn't match checksum) within the file's first 448 bytes, at byte 0 of the decompressed data"
expect "import an entry out of order" 2 "$bin" import $I/335-stream-keys-out-of-order.dnsx -o "$tmp/y.snap"
says "entry out of order" "dnsnap import: $I/335-stream-keys-out-of-order.dnsx: entry 3 is out of key order (at byte 284)"

# ------------------------------------------------------------- snapshots
head -c 10000 "$tmp/x.snap" > "$tmp/tr.snap"
need=$(($(size "$tmp/x.snap") - 24)) # its pages: all but the trailer
for c in info verify dump stats; do
	expect "$c: a truncated snapshot" 2 "$bin" $c "$tmp/tr.snap"
	says "$c: truncated" "dnsnap $c: $tmp/tr.snap: truncated: 10000 bytes, its pages need $need"
done
head -c 5000 "$tmp/x.snap" > "$tmp/tr2.snap"
expect "a snapshot shorter than two pages" 2 "$bin" info "$tmp/tr2.snap"
says "shorter than two pages" "dnsnap info: $tmp/tr2.snap: truncated: 5000 bytes, less than LMDB's two meta pages (8192)"
head -c "$need" "$tmp/x.snap" > "$tmp/tr3.snap"
expect "a snapshot without its trailer" 2 "$bin" info "$tmp/tr3.snap"
says "without its trailer" "dnsnap info: $tmp/tr3.snap: truncated: $need bytes, without the trailer every snapshot ends with"
expect "export a truncated snapshot" 2 "$bin" export "$tmp/tr.snap" -o "$tmp/tr.dnsx"
says "export: truncated" "dnsnap export: $tmp/tr.snap: truncated: 10000 bytes, its pages need $need"
expect "info of an empty file" 2 "$bin" info "$tmp/empty"
says "info: empty" "dnsnap info: $tmp/empty: an empty file, not a snapshot"
expect "info of a directory" 2 "$bin" info "$tmp/d"
says "info: directory" "dnsnap info: $tmp/d: a directory, not a snapshot"
expect "info of a stream" 2 "$bin" info "$tmp/x.dnsx"
says "info: a stream" "dnsnap info: $tmp/x.dnsx: not a snapshot (it is zstd-compressed, like an export stream, which dnsnap import turns into a snapshot)"
printf '\324\303\262\241\002\000\004\000' > "$tmp/c.pcap"
head -c 16 /dev/zero >> "$tmp/c.pcap"
expect "dump of a capture" 2 "$bin" dump "$tmp/c.pcap"
says "dump: a capture" "dnsnap dump: $tmp/c.pcap: not a snapshot (it is a packet capture, which dnsnap load reads into a snapshot)"
printf 'START_RRSET_CACHE\nEND_RRSET_CACHE\n' > "$tmp/u.txt"
expect "verify of Unbound's text" 2 "$bin" verify "$tmp/u.txt"
says "verify: Unbound's text" "dnsnap verify: $tmp/u.txt: not a snapshot (it is Unbound's cache text, which dnsnap load reads into a snapshot)"
expect "load of a stream" 2 "$bin" load "$tmp/l.snap" "$tmp/x.dnsx"
says "load: a stream" "dnsnap load: $tmp/x.dnsx: not a capture, framed messages or Unbound's text (it is zstd-compressed, like an export stream, which dnsnap import turns into a snapshot); nothing was written"
expect "load -o in a directory that does not exist" 2 "$bin" load "$tmp/no/l.snap" \
	tests/fixtures/unbound-dump_cache.txt
grep -v "Unbound cache dump\|responses (" "$tmp/err" > "$tmp/err2"; mv "$tmp/err2" "$tmp/err"
says "load: no directory" "dnsnap load: $tmp/no/l.snap: cannot create: directory $tmp/no does not exist"
expect "load of a snapshot" 2 "$bin" load "$tmp/l.snap" "$tmp/x.snap"
says "load: a snapshot" "dnsnap load: $tmp/x.snap: not a capture, framed messages or Unbound's text (it is an LMDB file, a dnsnap snapshot, which dnsnap export turns into a stream); nothing was written"
expect "decode of a snapshot" 2 "$bin" decode "$tmp/x.snap"
says "decode: a snapshot" "dnsnap decode: $tmp/x.snap: not a key+entry file (it is an LMDB file, a dnsnap snapshot, which dnsnap export turns into a stream)"
expect "decode of a stream" 2 "$bin" decode "$tmp/x.dnsx"
says "decode: a stream" "dnsnap decode: $tmp/x.dnsx: not a key+entry file (it is zstd-compressed, like an export stream, which dnsnap import turns into a snapshot)"
expect "get from text" 2 "$bin" get "$tmp/text" www.example.com A
says "get: text" "dnsnap get: $tmp/text: not a snapshot (no LMDB magic)"

# writing fails: the output is named, once
if [ -w /dev/full ]; then
	expect "export to a full device" 2 "$bin" export "$tmp/x.snap" -o /dev/full
	says "export: device full" "dnsnap export: /dev/full: writing: No space left on device"
	expect "export --top to a full device" 2 "$bin" export "$tmp/x.snap" --top 5 -o /dev/full
	says "export --top: device full" "dnsnap export: /dev/full: writing: No space left on device"
fi
# a damaged entry: the snapshot is named, once (test_damage.sh does the rest)
if "$build"/mksnapseeds "$tmp/seeds" > /dev/null 2>&1; then
	cp "$tmp/seeds/big.snap" "$tmp/bad.snap"
	off=$(grep -abo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "$tmp/bad.snap" | head -1 | cut -d: -f1)
	printf 'b' | dd of="$tmp/bad.snap" bs=1 seek=$((off + 100)) conv=notrunc 2>/dev/null
	expect "export of a damaged snapshot" 2 "$bin" export "$tmp/bad.snap" -o "$tmp/bad.dnsx"
	sed -i 's/(at 0x[0-9a-f]*)/(at 0xN)/' "$tmp/err" # where depends on the page size
	says "export: damaged" "dnsnap export: $tmp/bad.snap: 1 damaged entry skipped; $tmp/bad.dnsx not written; the first: entry 3 (at 0xN): Value_Check mismatch"
	ok_if "export: damaged: no output left" not test -e "$tmp/bad.dnsx"
	expect "export of a damaged snapshot to standard output" 2 sh -c \
		"'$bin' export '$tmp/bad.snap' -o - > '$tmp/bad-piped.dnsx'"
	sed -i 's/(at 0x[0-9a-f]*)/(at 0xN)/' "$tmp/err"
	says "export: damaged, piped" "dnsnap export: $tmp/bad.snap: 1 damaged entry skipped, no end record written (the stream will not import); the first: entry 3 (at 0xN): Value_Check mismatch"
else
	echo "not ok - mksnapseeds"; fails=$((fails + 1))
fi

for c in decode encode; do
	expect "$c of a directory" 2 "$bin" $c "$tmp/d"
	says "$c: directory" "dnsnap $c: $tmp/d: Is a directory"
done

# ------------------------------------------------- export's summary, --json
n=$(python3 -c 'print(1)' >/dev/null 2>&1 && "$bin" info "$tmp/x.snap" --json |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
expect "export --json" 0 "$bin" export "$tmp/x.snap" -o "$tmp/e.dnsx" --json --level=5
json_is "export --json: entries, bytes in and out, files" \
	"j == {'snapshot': '$tmp/x.snap', 'output': '$tmp/e.dnsx', 'format': 'dnsnap', \
'entries': $n, 'snapshot_entries': $n, 'bytes_in': $(size "$tmp/x.snap"), \
'bytes_out': $(size "$tmp/e.dnsx")}"
expect "export --top 7 --json" 0 "$bin" export --top=7 --json -o "$tmp/e7.dnsx" -- "$tmp/x.snap"
json_is "export --top 7: 7 entries" "j['entries'] == 7 and j['snapshot_entries'] == $n"
expect "export --json -o - is refused" 2 "$bin" export "$tmp/x.snap" -o - --json
says "export --json -o -" "dnsnap export: --json writes the summary to standard output, which -o - gives to the export: write it to a file"
expect "export --format unbound --json" 0 "$bin" export "$tmp/x.snap" --format unbound \
	--now 2023-11-14T22:13:20Z -o "$tmp/u.txt" --json
json_is "export unbound --json" "j['format'] == 'unbound' and j['entries'] == $n and \
j['left_out']['expired'] >= 0 and j['bytes_out'] == $(size "$tmp/u.txt")"
expect "export: --now not a time" 2 "$bin" export "$tmp/x.snap" --format unbound --now soon -o "$tmp/u.txt"
says "export --now soon" "dnsnap export: --now: not a time: soon (Unix seconds, 2026-11-30T12:00:00Z, or relative: +1h, -30m)"
expect "export: --level without a value" 2 "$bin" export "$tmp/x.snap" -o "$tmp/u.dnsx" --level
says "export --level" "dnsnap export: --level needs a value (dnsnap help export)"

# ------------------------------------------------- import's summary, --json
s=$V/302-stream-four-entries.dnsx
expect "import --json" 0 "$bin" import "$s" -o "$tmp/i.snap" --now 1700000000 --json
json_is "import --json: entries, expired, bytes in and out, files" \
	"j == {'input': '$s', 'snapshot': '$tmp/i.snap', 'entries_read': 4, 'entries': 4, \
'expired': 0, 'now': '2023-11-14T22:13:20Z', 'bytes_in': $(size "$s"), 'bytes_out': $(size "$tmp/i.snap")}"
expect "import - --json (bytes counted from a pipe)" 0 sh -c \
	"cat '$s' | '$bin' import - -o '$tmp/i2.snap' --now=2023-11-14T22:13:20Z --json"
json_is "import -: bytes in" "j['input'] == '-' and j['bytes_in'] == $(size "$s") and \
j['now'] == '2023-11-14T22:13:20Z' and j['entries'] == 4"
# its entries expire at 1700000300, 1700000900, 1700003600 (two)
expect "import: all expired at --now" 0 "$bin" import "$s" -o "$tmp/i3.snap" --now 2030-01-01 --json
json_is "import: 4 expired" "j['entries_read'] == 4 and j['entries'] == 0 and j['expired'] == 4"
expect "import: 2 expired" 0 "$bin" import "$s" -o "$tmp/i3.snap" --now 1700001000 --json
json_is "import: 2 expired" "j['entries_read'] == 4 and j['entries'] == 2 and j['expired'] == 2"
expect "import: 2 expired, text" 0 "$bin" import "$s" -o "$tmp/i3.snap" --now 1700001000
says "import: expired, plural" "dnsnap import: $s: 2 entries expired at --now, left out"
expect "import: 1 expired, text" 0 "$bin" import "$s" -o "$tmp/i3.snap" --now 1700000400
says "import: expired, singular" "dnsnap import: $s: 1 entry expired at --now, left out"
expect "import: none expired, text" 0 "$bin" import "$s" -o "$tmp/i3.snap" --now 1700000000
says "import: silent" ""
expect "import: -o missing" 2 "$bin" import "$s"
says "import needs -o" "dnsnap import: needs -o SNAP, the snapshot to write"
expect "import: two streams" 2 "$bin" import "$s" "$s" -o "$tmp/i4.snap"
says "import: two streams" "dnsnap import: unexpected argument: $s (dnsnap help import)"

[ "$fails" -eq 0 ]
