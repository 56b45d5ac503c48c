#!/bin/sh
# A snapshot with one damaged entry, through every command that reads it:
# the good entries are printed, the damaged one never is; each command says
# how many it skipped and exits 2; export writes nothing that imports; purge
# and load leave the file unless --drop-damaged; verify exits 2. Also a 1.0
# snapshot, refused with both versions named.
# Usage (from the repository root): tests/cli/test_damage.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh

"$build"/mksnapseeds "$tmp/seeds" || { echo "not ok - mksnapseeds"; exit 1; }
good=$tmp/seeds/big.snap
now=1700000001
# TXT answers of t2, t4, t6, t8 (3 KB to 60 KB, on overflow pages); A for the rest
txt="t2 t4 t6 t8"

# one byte changed inside the first run of 255 'a's: one TXT entry's rdata
cp "$good" "$tmp/bad.snap"
off=$(grep -abo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "$good" | head -1 | cut -d: -f1)
printf 'b' | dd of="$tmp/bad.snap" bs=1 seek=$((off + 100)) conv=notrunc 2>/dev/null
cp "$tmp/bad.snap" "$tmp/bad.orig"

expect "dump of the good file" 0 "$bin" dump --now $now "$good"
ok_if "the good file has 4 TXT answers" [ "$(grep -c '	IN	TXT	' "$tmp/out")" -gt 0 ]
good_txt_names=$(awk '$1 !~ /^;/ && $3 == "IN" && $4 == "TXT" {print $1}' "$tmp/out" | sort -u | wc -l)
ok_if "4 names with TXT" [ "$good_txt_names" -eq 4 ]

expect "dump: damage exits 2" 2 "$bin" dump --now $now "$tmp/bad.snap"
err_has "dump names the count" "dnsnap dump: $tmp/bad.snap: 1 damaged entry skipped (the first: entry"
err_has "dump names the check" "Value_Check mismatch"
bad_txt_names=$(awk '$1 !~ /^;/ && $3 == "IN" && $4 == "TXT" {print $1}' "$tmp/out" | sort -u | wc -l)
ok_if "dump prints the 3 good TXT answers, not the damaged one" [ "$bad_txt_names" -eq 3 ]
ok_if "no changed byte printed" not grep -q 'ab\{0,1\}aaaaaaaaaaaaaaab' "$tmp/out"

damaged=0
for n in $txt; do
	"$bin" get --now $now "$tmp/bad.snap" $n.big.example TXT >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q "the entry is damaged" "$tmp/err"; then
		damaged=$((damaged + 1))
	elif [ $rc -ne 0 ]; then
		echo "not ok - get $n: exit $rc"; fails=$((fails + 1))
	fi
done
ok_if "get: exactly one TXT name is damaged (exit 2), three answer" [ $damaged -eq 1 ]
expect "get of an A name answers" 0 "$bin" get --now $now "$tmp/bad.snap" t0.big.example A

expect "stats: exit 2" 2 "$bin" stats --now $now "$tmp/bad.snap"
err_has "stats names the count" "1 damaged entry skipped"
expect "info: exit 2" 2 "$bin" info --now $now "$tmp/bad.snap"
expect "verify: exit 2" 2 "$bin" verify "$tmp/bad.snap"
err_has "verify names the file hash" "do not match the trailer's File_Hash"

expect "export: exit 2" 2 "$bin" export "$tmp/bad.snap" -o "$tmp/bad.dnsx"
err_has "export says its output was not written" "$tmp/bad.dnsx not written"
ok_if "export leaves no file" not test -e "$tmp/bad.dnsx"
"$bin" export "$tmp/bad.snap" -o - >"$tmp/piped.dnsx" 2>/dev/null
expect "what export piped out does not import" 2 "$bin" import "$tmp/piped.dnsx" -o "$tmp/p.snap"
ok_if "and leaves no snapshot" not test -e "$tmp/p.snap"

expect "purge --dry-run: exit 2" 2 "$bin" purge --dry-run --type A "$tmp/bad.snap"
expect "purge: refused on damage" 2 "$bin" purge --type A "$tmp/bad.snap"
err_has "purge says why and how" "1 damaged entry: the snapshot is unchanged (--drop-damaged"
ok_if "purge left the file as it was" cmp -s "$tmp/bad.snap" "$tmp/bad.orig"
expect "purge --drop-damaged: published, exit 2" 2 "$bin" purge --type A --drop-damaged \
	"$tmp/bad.snap"
err_has "purge --drop-damaged counts" "1 damaged entry left out of the new file"
expect "the purged file verifies" 0 "$bin" verify "$tmp/bad.snap"
expect "and holds the 3 good TXT answers" 0 "$bin" dump --now $now --type TXT "$tmp/bad.snap"
ok_if "3 TXT names" [ "$(awk '$1 !~ /^;/ && $3 == "IN" && $4 == "TXT" {print $1}' "$tmp/out" | sort -u |
	wc -l)" -eq 3 ]

# load onto a damaged snapshot: one captured response (framed)
cp "$tmp/bad.orig" "$tmp/bad.snap"
"$build"/mkcaptures "$tmp/caps" >/dev/null 2>&1
cap=$tmp/caps/ipv4.pcap
if [ -f "$cap" ]; then
	expect "load onto a damaged snapshot: refused" 2 "$bin" load --now $now "$tmp/bad.snap" "$cap"
	ok_if "load left the file as it was" cmp -s "$tmp/bad.snap" "$tmp/bad.orig"
	expect "load --drop-damaged: published, exit 2" 2 "$bin" load --now $now --drop-damaged \
		"$tmp/bad.snap" "$cap"
	err_has "load counts what it left out" "1 damaged entry of the old snapshot left out"
	expect "the loaded file verifies" 0 "$bin" verify "$tmp/bad.snap"
else
	echo "not ok - mkcaptures wrote no pcap"; fails=$((fails + 1))
fi

# a 1.0 snapshot (dnsnap 0.3): refused, both versions named, the way over. The
# vector was written on a little-endian host: where dnsnap writes LMDB's magic
# (offset 16) the other way round, the file is refused for its byte order.
expect "a format 1.0 snapshot is refused" 2 "$bin" info spec/vectors/invalid/403-snapshot-format-1.snap
if [ "$(od -A n -t x1 -j 16 -N 4 "$good" | tr -d ' ')" = dec0efbe ]; then
	err_has "naming both versions" "snapshot format 1.0, this dnsnap reads 2.x (export it with the dnsnap that wrote it"
else
	err_has "naming the byte order" "an LMDB file of a host with the other byte order"
fi

[ $fails -eq 0 ]
