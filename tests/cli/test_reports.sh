#!/bin/sh
# What the reporting commands say at the edges: verify --json and info --json
# give an object for a file they cannot open (besides the message on
# stderr); stats before an entry's inception; stats in dump's words (kind,
# untagged); purge when nothing matched; dump when every entry is expired.
# Usage (from the repository root): tests/cli/test_reports.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
T=1700000000 # 2023-11-14T22:13:20Z: the one-entry vector is live then
one=spec/vectors/valid/401-snapshot-one-entry.snap

[ -x "$bin" ] || { echo "not ok - $bin is not built"; exit 1; }

# lines_ok NAME PYTHON-ASSERTION: the last stdout is JSON lines (list l)
lines_ok() {
	if python3 -c "import json, sys
l = [json.loads(x) for x in open(sys.argv[1])]
assert $2, l" "$tmp/out" 2>"$tmp/py"; then
		echo "ok - $1"
	else
		echo "not ok - $1"; sed 's/^/#   /' "$tmp/py" | tail -3; fails=$((fails + 1))
	fi
}

# ------------------------------------------------ files that cannot be opened
head -c 5000 /dev/urandom >"$tmp/random"
: >"$tmp/empty"
mkdir "$tmp/dir"
expect "verify --json: a good file and three that cannot be opened: exit 2" 2 \
	"$bin" verify --json "$one" "$tmp/random" "$tmp/dir" "$tmp/none"
lines_ok "verify --json: one object per file, in order" \
	"[x['file'] for x in l] == ['$one', '$tmp/random', '$tmp/dir', '$tmp/none'] and \
l[0]['ok'] is True"
lines_ok "verify --json: not a snapshot" "l[1] == {'file': '$tmp/random', 'ok': False, \
'entries': None, 'good': None, 'damaged': None, 'bad_pages': None, 'digest': None, \
'errors': [{'check': 'open', 'code': 'DNSNAP_EMAGIC', 'offset': 16, \
'reason': 'not a snapshot (no LMDB magic)'}]}"
lines_ok "verify --json: a directory" "l[2]['ok'] is False and l[2]['errors'] == \
[{'check': 'open', 'code': 'DNSNAP_EMAGIC', 'offset': 0, \
'reason': 'a directory, not a snapshot'}]"
lines_ok "verify --json: no such file: the errno's name" "l[3]['ok'] is False and \
l[3]['errors'] == [{'check': 'open', 'code': 'ENOENT', 'offset': 0, \
'reason': 'No such file or directory'}]"
err_has "verify: still named on stderr" "dnsnap verify: $tmp/random: not a snapshot (no LMDB magic)"
err_has "verify: each" "dnsnap verify: $tmp/none: No such file or directory"
expect "verify: text: nothing on stdout for an unreadable file" 2 "$bin" verify "$tmp/empty"
ok_if "verify: text: stdout empty" [ ! -s "$tmp/out" ]
err_has "verify: text: stderr" "dnsnap verify: $tmp/empty: an empty file, not a snapshot"

expect "info --json: an empty file between two good ones: exit 2" 2 \
	"$bin" info --json --now $T "$one" "$tmp/empty" "$one"
lines_ok "info --json: the empty file's object" "len(l) == 3 and l[0] == l[2] and \
l[0]['live'] == 1 and l[1] == {'file': '$tmp/empty', \
'error': 'an empty file, not a snapshot', 'code': 'DNSNAP_EMAGIC'}"
err_has "info: still named on stderr" "dnsnap info: $tmp/empty: an empty file, not a snapshot"
expect "info --json: no such file" 2 "$bin" info --json "$tmp/none"
lines_ok "info --json: ENOENT" "l == [{'file': '$tmp/none', \
'error': 'No such file or directory', 'code': 'ENOENT'}]"

[ "$fails" -eq 0 ]
