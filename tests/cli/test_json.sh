#!/bin/sh
# --json of info, verify, stats and purge: each parsed by Python's json with
# its members checked, also for a snapshot whose path holds '"', '\', a TAB
# and a byte that is not UTF-8; several files for info and verify (a bad one
# named, the others still printed, exit 2); the top by hits without entries
# never hit; counts with their singular; every --now form.
# Usage (from the repository root): tests/cli/test_json.sh BUILD
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

for need in "$bin" "$build/mksnapseeds" "$build/resolver_demo"; do
	[ -x "$need" ] || { echo "not ok - $need is not built"; exit 1; }
done

# json_ok NAME PYTHON-ASSERTION [ARG]: the last stdout is one JSON value (d)
# for which the assertion holds; ARG is sys.argv[0]
json_ok() {
	n=$1 a=$2
	shift 2
	if python3 -c "import json, os, sys
d = json.load(open(sys.argv[1]))
sys.argv = sys.argv[2:]
assert $a, d" "$tmp/out" "$@" 2>"$tmp/py"; then
		echo "ok - $n"
	else
		echo "not ok - $n"; sed 's/^/#   /' "$tmp/py" | tail -3; fails=$((fails + 1))
	fi
}
# the name as the JSON writer gives it: ASCII as is, the byte 0xff as U+00FF
WANT='os.fsencode(sys.argv[0]).decode("latin-1")'

# ------------------------------------------------ a path that needs escaping
odd=$tmp/$(printf 'q"b\\c\td\377.snap')
cp "$one" "$odd"
expect "info --json: an odd path" 0 "$bin" info --json --now $T "$odd" &&
	json_ok "info --json: valid, file is the path" "d['file'] == $WANT" "$odd"
json_ok "info --json: members" "d['entries'] == 1 and d['live'] == 1 and d['expired'] == 0 and \
d['damaged'] == 0 and d['format'] == '2.1' and d['digest'] == 'b356f0ba257ceed9' and \
d['file_size'] == os.path.getsize(sys.argv[0]) and isinstance(d['bytes_per_entry'], float) and \
d['created_at'].endswith('Z') and d['writer'].startswith('dnsnap ')" "$odd"
expect "verify --json: an odd path" 0 "$bin" verify --json "$odd" &&
	json_ok "verify --json: valid, good" "d['file'] == $WANT and d['ok'] is True and \
d['entries'] == 1 and d['good'] == 1 and d['damaged'] == 0 and d['bad_pages'] == 0 and \
d['errors'] == [] and d['digest'] == 'b356f0ba257ceed9'" "$odd"
expect "stats --json: an odd path" 0 "$bin" stats --json --now $T "$odd" &&
	json_ok "stats --json: valid" "d['file'] == $WANT and d['entries'] == 1 and \
d['by_type'] == {'A': 1} and d['top'] == []" "$odd"
expect "purge --json --dry-run: an odd path" 0 "$bin" purge --json --dry-run --type A "$odd" &&
	json_ok "purge --json --dry-run: valid" "d == {'file': $WANT, 'dry_run': True, \
'matched': 1, 'total': 1, 'left': 0, 'damaged': 0}" "$odd"
expect "purge --json: nothing matched, exit 1" 1 "$bin" purge --json --type AAAA "$odd" &&
	json_ok "purge --json: nothing matched" "d['matched'] == 0 and d['left'] == 1 and \
d['dry_run'] is False" "$odd"
expect "purge --json: purged" 0 "$bin" purge --json --type A --now $T "$odd" &&
	json_ok "purge --json: purged" "d['matched'] == 1 and d['total'] == 1 and \
d['left'] == 0 and d['dry_run'] is False" "$odd"

# ------------------------------------------------ several files, one bad
"$build"/mksnapseeds "$tmp/seeds" >/dev/null || { echo "not ok - mksnapseeds"; exit 1; }
good=$tmp/seeds/big.snap
cp "$good" "$tmp/bad.snap"
off=$(grep -abo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' "$good" | head -1 | cut -d: -f1)
printf 'b' | dd of="$tmp/bad.snap" bs=1 seek=$((off + 100)) conv=notrunc 2>/dev/null
printf 'not a snapshot' >"$tmp/text.snap"

expect "info: three files, one not a snapshot: exit 2" 2 "$bin" info --json --now $T \
	"$one" "$tmp/text.snap" "$good"
lines_ok "info: every file has its object, in order" "len(l) == 3 and \
l[0]['file'] == '$one' and l[2]['file'] == '$good' and l[2]['entries'] == 11 and \
l[1] == {'file': '$tmp/text.snap', 'error': 'not a snapshot (no LMDB magic)', \
'code': 'DNSNAP_EMAGIC'}"
err_has "info: the bad file named" "$tmp/text.snap"
expect "info: text, two files" 0 "$bin" info --now $T "$one" "$one"
ok_if "info: text, a blank line between the files" \
	[ "$(grep -c '^file: ' "$tmp/out")" -eq 2 ] && [ "$(grep -c '^$' "$tmp/out")" -eq 1 ] &&
	[ "$(sed -n 8p "$tmp/out")" = "file:            $one" ]
expect "info: a damaged snapshot: exit 2, still printed" 2 "$bin" info --json --now $T \
	"$tmp/bad.snap" &&
	json_ok "info: damaged counted" "d['damaged'] == 1 and d['live'] + d['expired'] == 10"

expect "verify --json: one good, one damaged: exit 2" 2 "$bin" verify --json "$good" "$tmp/bad.snap"
lines_ok "verify --json: the good file" "l[0]['ok'] is True and l[0]['good'] == 11 and \
l[0]['errors'] == []"
lines_ok "verify --json: the damaged file" "len(l) == 2 and l[1]['ok'] is False and \
l[1]['entries'] == 11 and l[1]['good'] == 10 and l[1]['damaged'] == 1 and \
l[1]['errors'][0]['check'] == 'file' and l[1]['errors'][0]['code'] == 'DNSNAP_ECHECKSUM' and \
'File_Hash' in l[1]['errors'][0]['reason'] and l[1]['errors'][1]['check'] == 'entries' and \
'Value_Check mismatch' in l[1]['errors'][1]['reason'] and \
isinstance(l[1]['errors'][1]['offset'], int) and 0 < l[1]['errors'][1]['offset'] <= $off + 100"
err_has "verify: the damaged file, counted" "$tmp/bad.snap: the file's bytes do not match \
the trailer's File_Hash: damaged (DNSNAP_ECHECKSUM); 1 damaged entry (10 good), 0 bad pages"
expect "verify: text, the good one still printed" 2 "$bin" verify "$tmp/bad.snap" "$good"
digest=$("$bin" info --json "$good" | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
ok_if "verify: text, the good line" \
	[ "$(cat "$tmp/out")" = "$good: good: 11 entries, digest $digest" ]
expect "verify: needs a snapshot" 2 "$bin" verify --json &&
	err_has "verify: needs" "needs a snapshot"

# ------------------------------------------------ the top by hits
# the resolver demo asks 4 of its names twice: those have one hit, the rest none
"$build"/resolver_demo fill "$tmp/d.snap" 20 >/dev/null
expect "stats: the top by hits" 0 "$bin" stats "$tmp/d.snap" --top 10
sed -n '/^top/,$p' "$tmp/out" >"$tmp/top"
printf '%s\n' "top 4 by hits:" "           1  re.fadi.de. A" "           1  peco.bodi.com. AAAA" \
	"           1  cdn.hedi.com. A" "           1  www.bidi.net. A" >"$tmp/top.want"
ok_if "stats: only the 4 entries with hits, ties in key order" cmp -s "$tmp/top" "$tmp/top.want"
expect "stats --json: the top by hits" 0 "$bin" stats "$tmp/d.snap" --json --top 2 &&
	json_ok "stats --json: top 2, hits > 0" \
	"[(t['hits'], t['name'], t['type'], t['cd'], t['tag']) for t in d['top']] == \
[(1, 're.fadi.de.', 'A', False, ''), (1, 'peco.bodi.com.', 'AAAA', False, '')]"
expect "stats: no entry has hits" 0 "$bin" stats "$one" --now $T
ok_if "stats: says so, and lists none" [ "$(tail -1 "$tmp/out")" = "no entry has hits" ]

# ------------------------------------------------ singular counts
expect "stats: one entry" 0 "$bin" stats "$one" --now $T
ok_if "stats: '1 entry', '1 record'" [ "$(head -1 "$tmp/out")" = "$one: 1 entry (live 1, \
expired 0), 1 record, 54 bytes of keys and entries (54.0 per entry)" ]
expect "verify: one entry" 0 "$bin" verify "$one"
ok_if "verify: 'good: 1 entry'" \
	[ "$(cat "$tmp/out")" = "$one: good: 1 entry, digest b356f0ba257ceed9" ]
cp "$one" "$tmp/p.snap"
expect "purge: one entry" 0 "$bin" purge "$tmp/p.snap" --type A --dry-run
ok_if "purge: 'of 1 entry'" \
	[ "$(cat "$tmp/out")" = "$tmp/p.snap: would purge 1 of 1 entry, 0 left" ]

# ------------------------------------------------ --now forms and options
expect "info --now ISO 8601" 0 "$bin" info --json --now 2023-11-14T22:13:20Z "$one" &&
	cp "$tmp/out" "$tmp/iso"
expect "info --now=Unix seconds" 0 "$bin" info --json "--now=$T" "$one"
ok_if "info: the same at both spellings of one time" cmp -s "$tmp/out" "$tmp/iso"
expect "info --now relative: the entry expired a while ago" 0 "$bin" info --json --now +1h "$one" &&
	json_ok "info --now +1h: expired" "d['live'] == 0 and d['expired'] == 1"
expect "stats --now with an offset" 0 "$bin" stats --json --now 2023-11-14T23:14:20+01:00 "$one" &&
	json_ok "stats: --now 23:14:20+01:00 is 60 s after T: TTL 240 left" \
	"d['remaining_ttl'][2] == {'range': '61-300', 'entries': 1}"
expect "info --now: not a time" 2 "$bin" info --now soon "$one" &&
	err_has "bad --now" "--now: not a time: soon"
expect "stats --top without a value" 2 "$bin" stats "$one" --top &&
	err_has "--top" "--top needs a value"
expect "info -- then a file" 0 "$bin" info --now $T -- "$one"
expect "verify: unknown option" 2 "$bin" verify --frob "$one" &&
	err_has "unknown" "unknown option --frob"

# ------------------------------------------------ load: SERVFAIL named as such
python3 - "$tmp/sf.dns" <<'EOF'
import struct, sys
def msg(i, flags, name, an=b'', ancount=0, ar=b'', arcount=0):
    q = b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0'
    head = struct.pack('>6H', i, flags, 1, ancount, 0, arcount)
    return head + q + struct.pack('>HH', 1, 1) + an + ar
a = lambda ttl: b'\xc0\x0c' + struct.pack('>HHIH', 1, 1, ttl, 4) + bytes([192, 0, 2, 1])
opt = b'\0' + struct.pack('>HHIH', 41, 1232, 0x01000000, 0)  # extended RCODE 16
ms = [msg(1, 0x8182, 'sf.example.com'), msg(2, 0x8182, 'sf2.example.com'),  # SERVFAIL
      msg(3, 0x8185, 'rf.example.com'),                                     # REFUSED
      msg(4, 0x8180, 'bv.example.com', ar=opt, arcount=1),
      msg(5, 0x8180, 'z.example.com', a(0), 1), msg(6, 0x8180, 'ok.example.com', a(300), 1)]
open(sys.argv[1], 'wb').write(b''.join(struct.pack('>H', len(m)) + m for m in ms))
EOF
expect "load: SERVFAIL, REFUSED, BADVERS, TTL 0 and one answer" 0 "$bin" load "$tmp/sf.snap" \
	"$tmp/sf.dns" --now $T &&
	err_has "SERVFAIL counted by name" "; 2 SERVFAIL (not cached); 1 REFUSED (not cached); \
1 extended RCODE (not cached); 1 TTL 0 (not cached)"
ok_if "no SERVFAIL taken for 'extended RCODE or TTL 0'" not grep -q "or TTL 0" "$tmp/err"

[ "$fails" -eq 0 ]
