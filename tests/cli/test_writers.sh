#!/bin/sh
# CLI tests of the commands that write files: load, purge and import -o
# (snapshots) and export -o (a stream or text). Usage: test_writers.sh BUILD
# - writers of one snapshot at once never lose one's changes (the writers'
#   lock, dnsnap_snap_lock()); --wait 0 fails at once while it is held;
# - a rewritten snapshot keeps its mode, owner and group; a symbolic link
#   stays a link, its target replaced;
# - an output that is not a regular file (/dev/null, a FIFO, /dev/stdout) is
#   written in place, never replaced; a snapshot there is refused;
# - an output that is an input is refused; the binary stream is not written
#   to a terminal, text is.
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
chmod 755 "$tmp" # root's files handed to nobody below stay in reach
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
T=1700000000

# dump_of PREFIX N: Unbound's dump_cache text of N answers, PREFIX-1.w.example
# A 192.0.2.1 to PREFIX-N.w.example (dnsnap load reads it; live at $T)
dump_of() {
	echo START_RRSET_CACHE
	i=1
	while [ "$i" -le "$2" ]; do
		printf ';rrset 3600 1 0 8 0\n%s-%d.w.example.\t3600\tIN\tA\t192.0.2.%d\n' "$1" "$i" "$i"
		i=$((i + 1))
	done
	printf 'END_RRSET_CACHE\nSTART_MSG_CACHE\n'
	i=1
	while [ "$i" -le "$2" ]; do
		printf 'msg %s-%d.w.example. IN A 32896 1 3600 0 1 0 0\n%s-%d.w.example. IN A 0\n' \
			"$1" "$i" "$1" "$i"
		i=$((i + 1))
	done
	printf 'END_MSG_CACHE\nEOF\n'
}
# names FILE: the owner names a snapshot holds at $T, one a line
names() { "$bin" dump "$1" --now $T | sed -n 's/^\([a-z0-9-]*\.w\.example\.\).*/\1/p' | sort -u; }
has() { grep -qx "$2" "$1"; }

dump_of base 8 > "$tmp/base.txt"
for k in 1 2 3 4 5 6; do dump_of "l$k" 5 > "$tmp/l$k.txt"; done
expect "the starting snapshot" 0 "$bin" load "$tmp/c.snap" "$tmp/base.txt" --now $T
names "$tmp/c.snap" > "$tmp/names"
ok_if "it holds the 8 base names" [ "$(wc -l < "$tmp/names")" -eq 8 ]

# ------------------------------------------------------------ concurrency
# 4 loads (each adds 5 names no other adds) and 4 purges (each removes a
# base name no load adds), all at once on one file; every change whose
# command exited 0 must be in the final file
run_bg() { # ID COMMAND...: run in the background, exit code to $tmp/rc.ID
	id=$1
	shift
	("$@" > "$tmp/out.$id" 2> "$tmp/err.$id"; echo $? > "$tmp/rc.$id") &
}
for round in 1 2 3; do
	cp "$tmp/c.snap" "$tmp/r.snap"
	for k in 1 2 3 4; do
		run_bg "load$k" "$bin" load "$tmp/r.snap" "$tmp/l$k.txt" --now $T
		run_bg "purge$k" "$bin" purge "$tmp/r.snap" --name "base-$k.w.example" --now $T
	done
	wait
	names "$tmp/r.snap" > "$tmp/names"
	lost=""
	done_n=0
	for k in 1 2 3 4; do
		if [ "$(cat "$tmp/rc.load$k")" -eq 0 ]; then
			done_n=$((done_n + 1))
			for i in 1 2 3 4 5; do has "$tmp/names" "l$k-$i.w.example." || lost="$lost l$k-$i"; done
		fi
		if [ "$(cat "$tmp/rc.purge$k")" -eq 0 ]; then
			done_n=$((done_n + 1))
			has "$tmp/names" "base-$k.w.example." && lost="$lost purge-of-base-$k"
		fi
	done
	for k in 5 6 7 8; do has "$tmp/names" "base-$k.w.example." || lost="$lost base-$k"; done
	ok_if "round $round: 4 loads and 4 purges at once: no change lost ($done_n of 8 done;$lost)" \
		[ -z "$lost" ]
	# the default --wait (60 s) outlasts 7 others' writes: all must be done
	ok_if "round $round: every one of them waited its turn and succeeded" [ "$done_n" -eq 8 ]
	cat "$tmp"/err.* | grep -v "^dnsnap load: .*\(Unbound cache dump\|responses\)" |
		sed 's/^/#   /'
	expect "round $round: the result verifies" 0 "$bin" verify "$tmp/r.snap"
done
# loads into a file that does not exist yet (the lock is then the directory's)
rm -f "$tmp/n.snap"
for k in 1 2 3 4 5 6; do run_bg "new$k" "$bin" load "$tmp/n.snap" "$tmp/l$k.txt" --now $T; done
wait
names "$tmp/n.snap" > "$tmp/names"
lost=""
for k in 1 2 3 4 5 6; do
	[ "$(cat "$tmp/rc.new$k")" -eq 0 ] || lost="$lost load-$k-failed"
	for i in 1 2 3 4 5; do has "$tmp/names" "l$k-$i.w.example." || lost="$lost l$k-$i"; done
done
ok_if "6 loads at once creating one file: all 30 names there ($lost)" [ -z "$lost" ]
ok_if "and no temporary left" not sh -c "ls '$tmp' | grep -q '\\.tmp\\.'"

# --wait 0 while another holds the lock (flock(1) on the file, as a
# resolver's dnsnap_snap_lock() would): exit 2, one line naming the file
cp "$tmp/c.snap" "$tmp/keep.snap"
expect "purge --wait 0 while the lock is held" 2 flock "$tmp/c.snap" \
	"$bin" purge "$tmp/c.snap" --name base-1.w.example --wait 0 &&
	err_has "purge: the message" "dnsnap purge: $tmp/c.snap: another dnsnap is writing it" &&
	ok_if "purge: one line" [ "$(wc -l < "$tmp/err")" -eq 1 ]
ok_if "purge --wait 0: the file unchanged" cmp -s "$tmp/c.snap" "$tmp/keep.snap"
expect "load --wait 0 while the lock is held" 2 flock "$tmp/c.snap" \
	"$bin" load "$tmp/c.snap" "$tmp/l1.txt" --now $T --wait 0 &&
	err_has "load: the message" "dnsnap load: $tmp/c.snap: another dnsnap is writing it"
ok_if "load --wait 0: the file unchanged" cmp -s "$tmp/c.snap" "$tmp/keep.snap"
"$bin" export "$tmp/c.snap" -o "$tmp/c.dnsx"
expect "import -o --wait 0 while the lock is held" 2 flock "$tmp/c.snap" \
	"$bin" import "$tmp/c.dnsx" -o "$tmp/c.snap" --now $T --wait 0 &&
	err_has "import: the message" "dnsnap import: $tmp/c.snap: another dnsnap is writing it"
mkdir "$tmp/d"
expect "load of a new file --wait 0 while its directory is locked" 2 flock "$tmp/d" \
	"$bin" load "$tmp/d/new.snap" "$tmp/l1.txt" --now $T --wait 0 &&
	err_has "new file: the message" "$tmp/d/new.snap: another dnsnap is writing it"
ok_if "and nothing written" [ ! -e "$tmp/d/new.snap" ]
expect "readers do not lock: dump while the lock is held" 0 flock "$tmp/c.snap" \
	"$bin" dump "$tmp/c.snap" --now $T
expect "readers do not lock: get while the lock is held" 0 flock "$tmp/c.snap" \
	"$bin" get "$tmp/c.snap" base-1.w.example --now $T
expect "readers do not lock: export while the lock is held" 0 flock "$tmp/c.snap" \
	"$bin" export "$tmp/c.snap" -o "$tmp/during.dnsx"
expect "readers do not lock: purge --dry-run while the lock is held" 0 flock "$tmp/c.snap" \
	"$bin" purge "$tmp/c.snap" --name base-1.w.example --dry-run --wait 0
expect "the lock goes with its holder: purge --wait 0 now" 0 \
	"$bin" purge "$tmp/c.snap" --name base-1.w.example --wait 0 --now $T
expect "--wait: not a number" 2 "$bin" purge "$tmp/c.snap" --name x.example --wait soon &&
	err_has "--wait named" "--wait: not a number"

# ------------------------------------------------------ mode, owner, links
# owner and group are kept only where the writer may chown: as root
if [ "$(id -u)" -eq 0 ]; then
	owner=nobody:nogroup
	id nobody > /dev/null 2>&1 && getent group nogroup > /dev/null || owner=""
else
	owner=""
	echo "# not root: the owner and group part is skipped (mode only)"
fi
attrs() { stat -c '%a %U:%G' "$1"; }
for cmd in purge load import; do
	cp "$tmp/keep.snap" "$tmp/m.snap"
	chmod 0640 "$tmp/m.snap"
	[ -n "$owner" ] && chown "$owner" "$tmp/m.snap"
	before=$(attrs "$tmp/m.snap")
	case $cmd in
	purge) expect "purge of a 0640 snapshot" 0 "$bin" purge "$tmp/m.snap" --name base-2.w.example
		;;
	load) expect "load into a 0640 snapshot" 0 "$bin" load "$tmp/m.snap" "$tmp/l2.txt" --now $T ;;
	import) expect "import -o over a 0640 snapshot" 0 "$bin" import "$tmp/c.dnsx" -o "$tmp/m.snap" \
		--now $T ;;
	esac
	ok_if "$cmd: the file was replaced" not cmp -s "$tmp/m.snap" "$tmp/keep.snap"
	ok_if "$cmd keeps mode${owner:+, owner and group} ($before -> $(attrs "$tmp/m.snap"))" \
		[ "$(attrs "$tmp/m.snap")" = "$before" ]
done
rm -f "$tmp/new.snap"
expect "a new snapshot" 0 "$bin" load "$tmp/new.snap" "$tmp/l1.txt" --now $T
ok_if "is mode 0600" [ "$(stat -c %a "$tmp/new.snap")" = 600 ]

rm -f "$tmp/e.dnsx"
expect "export to a new file" 0 "$bin" export "$tmp/keep.snap" -o "$tmp/e.dnsx"
ok_if "is mode 0600" [ "$(stat -c %a "$tmp/e.dnsx")" = 600 ]
chmod 0644 "$tmp/e.dnsx"
expect "export over a 0644 file" 0 "$bin" export "$tmp/keep.snap" -o "$tmp/e.dnsx" --level 9
ok_if "keeps its mode" [ "$(stat -c %a "$tmp/e.dnsx")" = 644 ]

# a link in one directory to a snapshot in another: the temporary is
# written beside the target, renamed over it; the link stays
mkdir "$tmp/real" "$tmp/links"
cp "$tmp/keep.snap" "$tmp/real/s.snap"
ln -s ../real/s.snap "$tmp/links/s.snap"
expect "purge through a symbolic link" 0 "$bin" purge "$tmp/links/s.snap" --name base-3.w.example
ok_if "the link is still a link" [ -L "$tmp/links/s.snap" ]
names "$tmp/real/s.snap" > "$tmp/names"
ok_if "its target was updated" not has "$tmp/names" "base-3.w.example."
expect "load through the link" 0 "$bin" load "$tmp/links/s.snap" "$tmp/l3.txt" --now $T
names "$tmp/real/s.snap" > "$tmp/names"
ok_if "load: the link is still a link, the target has the names" \
	sh -c "[ -L '$tmp/links/s.snap' ] && grep -qx l3-1.w.example. '$tmp/names'"
expect "import -o through the link" 0 "$bin" import "$tmp/c.dnsx" -o "$tmp/links/s.snap" --now $T
ok_if "import: the link is still a link" [ -L "$tmp/links/s.snap" ]
names "$tmp/real/s.snap" > "$tmp/names"
ok_if "import: the target holds the import (the purged name is back, the loaded gone)" \
	sh -c "grep -qx base-3.w.example. '$tmp/names' && ! grep -qx l3-1.w.example. '$tmp/names'"
ok_if "no temporary beside the link or the target" \
	not sh -c "ls '$tmp/links' '$tmp/real' | grep -q '\\.tmp\\.'"
ok_if "nothing else beside the link" [ "$(ls "$tmp/links")" = s.snap ]

# ---------------------------------------------- outputs that are not files
expect "export -o /dev/stdout (a file)" 0 sh -c "'$bin' export '$tmp/keep.snap' -o /dev/stdout > '$tmp/so.dnsx'"
expect "the stream imports" 0 "$bin" import "$tmp/so.dnsx" -o "$tmp/so.snap" --now $T
ok_if "export to /dev/stdout: every entry" [ "$(names "$tmp/so.snap" | wc -l)" -eq 8 ]
expect "export -o /dev/stdout (a pipe)" 0 sh -c \
	"'$bin' export '$tmp/keep.snap' -o /dev/stdout | '$bin' import - -o '$tmp/sp.snap' --now $T"
ok_if "export to a pipe: every entry" [ "$(names "$tmp/sp.snap" | wc -l)" -eq 8 ]
mkfifo "$tmp/fifo" # (timeout: a writer that opened a FIFO to read would wait forever)
timeout 30 cat "$tmp/fifo" > "$tmp/fifo.dnsx" &
expect "export -o FIFO" 0 timeout 30 "$bin" export "$tmp/keep.snap" -o "$tmp/fifo"
wait
ok_if "the FIFO is still a FIFO" [ -p "$tmp/fifo" ]
expect "what went through the FIFO imports" 0 "$bin" import "$tmp/fifo.dnsx" -o "$tmp/fifo.snap" --now $T
ok_if "export to a FIFO: every entry" [ "$(names "$tmp/fifo.snap" | wc -l)" -eq 8 ]
expect "import -o FIFO: refused" 2 timeout 30 "$bin" import "$tmp/c.dnsx" -o "$tmp/fifo" --now $T &&
	err_has "import -o FIFO: why" "$tmp/fifo: not a regular file"
expect "load into a FIFO: refused" 2 timeout 30 "$bin" load "$tmp/fifo" "$tmp/l1.txt" --now $T &&
	err_has "load FIFO: why" "$tmp/fifo: not a regular file"
expect "purge of a FIFO: refused" 2 timeout 30 "$bin" purge "$tmp/fifo" --name base-1.w.example &&
	err_has "purge FIFO: why" "$tmp/fifo: not a regular file"
ok_if "the FIFO is still a FIFO after all" [ -p "$tmp/fifo" ]
if [ "$(id -u)" -eq 0 ]; then
	expect "export -o /dev/null as root" 0 "$bin" export "$tmp/keep.snap" -o /dev/null
	ok_if "/dev/null is still a character device" [ -c /dev/null ]
	expect "export --format unbound -o /dev/null as root" 0 "$bin" export "$tmp/keep.snap" \
		--format unbound -o /dev/null
	ok_if "/dev/null is still a character device" [ -c /dev/null ]
	expect "import -o /dev/null as root: refused" 2 "$bin" import "$tmp/c.dnsx" -o /dev/null &&
		err_has "import -o /dev/null: why" "/dev/null: not a regular file"
	ok_if "/dev/null is still a character device" [ -c /dev/null ]
else
	echo "# not root: the /dev/null tests are skipped (only root could replace it)"
fi

# ------------------------------------------------- outputs that are inputs
cp "$tmp/keep.snap" "$tmp/same.snap"
ln -s same.snap "$tmp/same-link.snap"
ln "$tmp/same.snap" "$tmp/same-hard.snap"
for o in same.snap same-link.snap same-hard.snap; do
	expect "export SNAP -o SNAP ($o): refused" 2 "$bin" export "$tmp/same.snap" -o "$tmp/$o" &&
		err_has "export onto itself: why" "is the snapshot being exported"
	ok_if "export onto itself: unchanged" cmp -s "$tmp/same.snap" "$tmp/keep.snap"
	expect "import S -o S ($o): refused" 2 "$bin" import "$tmp/same.snap" -o "$tmp/$o" &&
		err_has "import onto itself: why" "is the stream being imported"
	ok_if "import onto itself: unchanged" cmp -s "$tmp/same.snap" "$tmp/keep.snap"
done
expect "export -o - appended to SNAP itself: refused" 2 sh -c \
	"'$bin' export '$tmp/same.snap' -o - >> '$tmp/same.snap'" && err_has "export >> itself" "being exported"
ok_if "export >> itself: unchanged" cmp -s "$tmp/same.snap" "$tmp/keep.snap"
cp "$tmp/c.dnsx" "$tmp/s.dnsx"
expect "import S -o S (a stream): refused" 2 "$bin" import "$tmp/s.dnsx" -o "$tmp/s.dnsx"
ok_if "the stream unchanged" cmp -s "$tmp/s.dnsx" "$tmp/c.dnsx"
expect "import - -o S with S on stdin: refused" 2 sh -c "'$bin' import - -o '$tmp/s.dnsx' < '$tmp/s.dnsx'"
ok_if "the stream unchanged" cmp -s "$tmp/s.dnsx" "$tmp/c.dnsx"
expect "load SNAP SNAP: refused" 2 "$bin" load "$tmp/same.snap" "$tmp/same-link.snap" &&
	err_has "load onto itself: why" "is the snapshot being written"

# ------------------------------------------------------------ terminals
if command -v script > /dev/null; then
	script -qec "'$bin' export '$tmp/keep.snap' -o -; echo \"rc=\$?\"" /dev/null > "$tmp/tty" 2>&1
	ok_if "binary export to a terminal: refused, exit 2" grep -q "rc=2" "$tmp/tty"
	ok_if "with zstd's kind of message" \
		grep -q "dnsnap export: standard output is a terminal; not writing binary data to it" "$tmp/tty"
	ok_if "and no binary on the terminal" not grep -q "$(printf '\050\265\057\375')" "$tmp/tty"
	script -qec "'$bin' export '$tmp/keep.snap' -o /dev/stdout; echo \"rc=\$?\"" /dev/null \
		> "$tmp/tty" 2>&1
	ok_if "-o /dev/stdout on a terminal: refused too" \
		sh -c "grep -q 'rc=2' '$tmp/tty' && grep -q '/dev/stdout is a terminal' '$tmp/tty'"
	script -qec "'$bin' export '$tmp/keep.snap' --format unbound --now $T -o -; echo \"rc=\$?\"" \
		/dev/null > "$tmp/tty" 2>&1
	ok_if "text export to a terminal: allowed" \
		sh -c "grep -q 'rc=0' '$tmp/tty' && grep -q START_RRSET_CACHE '$tmp/tty'"
else
	echo "not ok - script(1) not found"; fails=$((fails + 1))
fi

[ "$fails" -eq 0 ]
