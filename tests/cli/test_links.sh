#!/bin/sh
# Planted links (issue 22, item 2; spec/DECISIONS.md, "Links in sticky
# directories"), as root (CI runs as root; skipped otherwise): in a sticky
# directory others may write (/tmp's mode 1777), a symbolic link that nobody
# owns, pointing at a root-owned file, is not followed by export -o, import -o,
# load, purge and serve (refused at its start, for a dangling link too): exit
# 2, the path named, the file it points at unchanged (or not created). A link
# root owns there is followed as before; a snapshot directory others may write
# without the sticky bit is refused.
# Usage (from the repository root): tests/cli/test_links.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
T=$tmp
fix=tests/fixtures/unbound-dump_cache.txt
if [ "$(id -u)" != 0 ]; then
	echo "ok - # skip planted links: not root (chown -h needs it)"
	exit 0
fi
chmod 0755 "$T"
expect "a snapshot" 0 "$bin" load "$T/s.snap" "$fix"
expect "its stream" 0 "$bin" export "$T/s.snap" -o "$T/s.dnsx"
mkdir -m 1777 "$T/sticky"
S=$T/sticky
printf 'precious\n' >"$T/victim.txt"
cp "$T/s.snap" "$T/victim.snap"
cp "$T/victim.txt" "$T/victim.txt.orig"
cp "$T/victim.snap" "$T/victim.snap.orig"
plant() { ln -s "$2" "$S/$1" && chown -h nobody "$S/$1"; }
plant out.txt "$T/victim.txt"
plant out.snap "$T/victim.snap"
plant dangling.snap "$T/nothere.snap"
unchanged() {
	ok_if "$1: the target unchanged" cmp -s "$T/victim.txt" "$T/victim.txt.orig" &&
		ok_if "$1: the snapshot unchanged" cmp -s "$T/victim.snap" "$T/victim.snap.orig"
}
why="is a symbolic link owned by uid $(id -u nobody) in $S, a sticky directory others may write"

expect "export -o a planted link: refused" 2 "$bin" export "$T/s.snap" -o "$S/out.txt" &&
	err_has "export: names the link" "$S/out.txt: $S/out.txt $why"
unchanged export
expect "import -o a planted link: refused" 2 "$bin" import "$T/s.dnsx" -o "$S/out.snap" &&
	err_has "import: names the link" "$S/out.snap $why"
unchanged import
expect "load into a planted link: refused" 2 "$bin" load "$S/out.snap" "$fix" &&
	err_has "load: names the link" "$S/out.snap $why"
unchanged load
expect "purge through a planted link: refused" 2 "$bin" purge "$S/out.snap" --expired &&
	err_has "purge: names the link" "$S/out.snap $why"
unchanged purge
expect "serve of a planted dangling link: refused at start" 2 "$bin" serve "$S/dangling.snap" \
	--upstream 127.0.0.1:9 --listen 127.0.0.1:0 &&
	err_has "serve: names the link" "$S/dangling.snap $why" &&
	ok_if "serve: nothing created where it points" [ ! -e "$T/nothere.snap" ]
expect "serve of a planted link: refused at start" 2 "$bin" serve "$S/out.snap" \
	--listen 127.0.0.1:0
unchanged serve

# a link root (the caller) owns there is followed, the link kept
ln -s "$T/victim.snap" "$S/mine.snap"
expect "load into root's own link: followed" 0 "$bin" load "$S/mine.snap" "$fix" --now +1m &&
	ok_if "root's link: still a link" [ -L "$S/mine.snap" ] &&
	ok_if "root's link: its target rewritten" not cmp -s "$T/victim.snap" "$T/victim.snap.orig"
# ... and so is one the directory's owner owns
mkdir -m 1777 "$T/nobodys" && chown nobody "$T/nobodys"
ln -s "$T/victim.txt" "$T/nobodys/out.txt" && chown -h nobody "$T/nobodys/out.txt"
expect "export -o a link the sticky directory's owner owns: followed" 0 \
	"$bin" export "$T/s.snap" -o "$T/nobodys/out.txt" --format unbound

# a directory anyone may write, without the sticky bit
mkdir -m 0777 "$T/open" && chmod 0777 "$T/open"
expect "load into a directory others may write, not sticky: refused" 2 \
	"$bin" load "$T/open/s.snap" "$fix" &&
	err_has "names the directory" "directory $T/open is writable by others and not sticky" &&
	ok_if "nothing written there" [ -z "$(ls -A "$T/open")" ]
expect "a sticky one is fine" 0 "$bin" load "$S/new.snap" "$fix"

[ "$fails" -eq 0 ]
