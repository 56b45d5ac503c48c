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
# the one-entry vector's entry (spec/vectors 401), made here from its stream (301):
# the committed .snap is little-endian, and make test-cross runs this on s390x
one=$tmp/one.snap
"$bin" import spec/vectors/valid/301-stream-worked-example.dnsx -o "$one" --now $T ||
	{ echo "not ok - import of the worked example's stream"; exit 1; }

[ -x "$bin" ] || { echo "not ok - $bin is not built"; exit 1; }

# json_ok NAME PYTHON-ASSERTION: the last stdout is one JSON value (d)
json_ok() {
	if python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
assert $2, d" "$tmp/out" 2>"$tmp/py"; then
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

# 10 entries cached at T (the worked examples 001-012; later vectors would
# change the counts below), 2 of them (001's and 005's) cached again at T + 60
frame $(ls spec/vectors/valid/*.msg | head -12) >"$tmp/valid.dns"
frame spec/vectors/valid/001-a.msg spec/vectors/valid/005-nxdomain.msg >"$tmp/later.dns"
"$bin" load "$tmp/s.snap" "$tmp/valid.dns" --now $T >/dev/null 2>&1 &&
	"$bin" load "$tmp/s.snap" "$tmp/later.dns" --now $((T + 60)) >/dev/null 2>&1 ||
	{ echo "not ok - load"; exit 1; }
# at T + 30 the two are not yet cached: their whole TTL (not the 30 s more
# from T + 30 to their expiry), the others what is left
expect "stats: two entries not yet cached" 0 "$bin" stats "$tmp/s.snap" --now $((T + 30))
sed -n '/^remaining TTL/,/^$/p' "$tmp/out" >"$tmp/ttl"
cat >"$tmp/ttl.want" <<'WANT'
remaining TTL:
       expired                0   0.0%  
          1-60 s              0   0.0%  
        61-300 s              4  40.0%  ################
      301-3600 s              6  60.0%  ########################
    3601-86400 s              0   0.0%  
  86401-604800 s              0   0.0%  
       604801+ s              0   0.0%  
  2 entries not yet cached at --now (counted with their whole TTL)

WANT
ok_if "stats: whole TTLs, and the count" cmp -s "$tmp/ttl" "$tmp/ttl.want"
ok_if "stats: none expired, all live" grep -q "^$tmp/s.snap: 10 entries (live 10, expired 0)" "$tmp/out"
expect "stats --json: two entries not yet cached" 0 "$bin" stats "$tmp/s.snap" --json \
	--now $((T + 30))
json_ok "stats --json: not_yet_cached and the histogram" "d['not_yet_cached'] == 2 and \
[(x['range'], x['entries']) for x in d['remaining_ttl'] if x['entries']] == \
[('61-300', 4), ('301-3600', 6)] and d['live'] == 10"
# a day before: every entry at its whole TTL, none beyond a day
expect "stats --now a day before: all not yet cached" 0 "$bin" stats "$tmp/s.snap" --json \
	--now $((T - 86400))
json_ok "stats --json: all ten at their whole TTL" "d['not_yet_cached'] == 10 and \
[(x['range'], x['entries']) for x in d['remaining_ttl'] if x['entries']] == \
[('61-300', 4), ('301-3600', 6)]"
expect "stats: one entry, ISO 8601 --now before it" 0 "$bin" stats "$one" --now 2023-11-13
ok_if "stats: the singular" grep -qx "  1 entry not yet cached at --now (counted with its whole TTL)" \
	"$tmp/out"
expect "stats: after the inception: no such line" 0 "$bin" stats "$tmp/s.snap" --now $((T + 60))
ok_if "stats: no line when none" not grep -q "not yet cached" "$tmp/out"

# ------------------------------------------------ stats in dump's words
expect "dump --json: kinds and tags" 0 "$bin" dump "$tmp/s.snap" --json --now $((T + 60))
mv "$tmp/out" "$tmp/dump.json"
expect "stats --json: kinds and tags" 0 "$bin" stats "$tmp/s.snap" --json --now $((T + 60))
json_ok "stats --json: by_kind and by_tag keyed as dump writes kind and tag" "(lambda l: \
{k: v for k, v in d['by_kind'].items() if v} == \
{k: sum(1 for x in l if x['kind'] == k) for k in set(x['kind'] for x in l)} and \
d['by_tag'] == {k: sum(1 for x in l if x['tag'] == k) for k in set(x['tag'] for x in l)} and \
set(d['by_kind']) == {'ANSWER', 'NXDOMAIN', 'NODATA', 'REFERRAL'} and d['by_tag'] == {'': 10})\
([json.loads(x) for x in open('$tmp/dump.json')])"
expect "stats: text words" 0 "$bin" stats "$tmp/s.snap" --now $((T + 60))
sed -n '/^by kind:/,/^$/p;/^by tag:/,/^$/p' "$tmp/out" >"$tmp/words"
cat >"$tmp/words.want" <<'WANT'
by kind:
  ANSWER                8  80.0%
  NXDOMAIN              1  10.0%
  NODATA                1  10.0%
  REFERRAL              0   0.0%
  with DNSSEC           1  10.0%

by tag:
  -                    10 100.0%

WANT
ok_if "stats: kinds as dump prints them, untagged '-' as dump's 'tag -'" \
	cmp -s "$tmp/words" "$tmp/words.want"
expect "dump: text" 0 "$bin" dump "$tmp/s.snap" --now $((T + 60))
ok_if "dump: the same words in its text ('tag -', kind NXDOMAIN)" \
	grep -q "^; nonexistent.example.com. IN A tag - rcode NXDOMAIN kind NXDOMAIN " "$tmp/out"

# ------------------------------------------------ purge: nothing matched
cp "$tmp/s.snap" "$tmp/p.snap"
expect "purge: nothing matched: exit 1" 1 "$bin" purge "$tmp/p.snap" --name nothing.example
ok_if "purge: says nothing matched, unchanged" \
	[ "$(cat "$tmp/out")" = "$tmp/p.snap: nothing matched; unchanged (10 entries)" ]
ok_if "purge: the file is unchanged" cmp -s "$tmp/p.snap" "$tmp/s.snap"
expect "purge --dry-run: nothing matched: exit 1" 1 "$bin" purge "$tmp/p.snap" --type NS \
	--dry-run
ok_if "purge --dry-run: the same words" \
	[ "$(cat "$tmp/out")" = "$tmp/p.snap: nothing matched; unchanged (10 entries)" ]
cp "$one" "$tmp/one.snap"
expect "purge: one entry, nothing matched" 1 "$bin" purge "$tmp/one.snap" --type AAAA
ok_if "purge: the singular" \
	[ "$(cat "$tmp/out")" = "$tmp/one.snap: nothing matched; unchanged (1 entry)" ]
expect "purge --json: nothing matched" 1 "$bin" purge "$tmp/p.snap" --json --name nothing.example
json_ok "purge --json: matched 0" "d == {'file': '$tmp/p.snap', 'dry_run': False, \
'matched': 0, 'total': 10, 'left': 10, 'damaged': 0}"
expect "purge: something matched: the counts" 0 "$bin" purge "$tmp/p.snap" --type MX
ok_if "purge: purged N of M" [ "$(cat "$tmp/out")" = "$tmp/p.snap: purged 1 of 10 entries, 9 left" ]

# ------------------------------------------------ dump: every match expired
expect "dump: all expired: exit 1" 1 "$bin" dump "$tmp/s.snap" --now 2030-01-01
ok_if "dump: nothing on stdout" [ ! -s "$tmp/out" ]
ok_if "dump: the hint, alone on stderr" [ "$(cat "$tmp/err")" = "dnsnap dump: $tmp/s.snap: no \
live entry matched (10 expired at --now; --expired shows them)" ]
expect "dump: a filter's one match expired" 1 "$bin" dump "$tmp/s.snap" --now 2030-01-01 \
	--name example.com --type MX
ok_if "dump: counts the matches only" [ "$(cat "$tmp/err")" = "dnsnap dump: $tmp/s.snap: no \
live entry matched (1 expired at --now; --expired shows them)" ]
expect "dump --expired: shown" 0 "$bin" dump "$tmp/s.snap" --now 2030-01-01 --expired
ok_if "dump --expired: no hint" [ ! -s "$tmp/err" ]
expect "dump: no match at all: exit 1, silent" 1 "$bin" dump "$tmp/s.snap" --now 2030-01-01 \
	--name nothing.example
ok_if "dump: no hint when nothing matched" [ ! -s "$tmp/err" ]
expect "dump: some live: exit 0, no hint" 0 "$bin" dump "$tmp/s.snap" --now $((T + 400))
ok_if "dump: some live: no hint" [ ! -s "$tmp/err" ]

[ "$fails" -eq 0 ]
