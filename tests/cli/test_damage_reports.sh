#!/bin/sh
# How damage is reported (spec/FORMAT.md, "Reporting damage"), three ways:
# 1. a reader written from the spec alone (tests/helpers/specread.py) gives
#    every vector's .err (snapshots, L2 values, streams, keys and entries);
# 2. it agrees with the library, line for line, on single-bit flips of two
#    generated snapshots and one dnsnap wrote, of an L2 value (every bit) and
#    of an export stream's content (mkreport gives the library's lines);
# 3. the command line says what the library says: dnsnap verify --json and
#    dnsnap import --json give each vector's code and offset, and every byte
#    position the message names is that offset.
# Usage (from the repository root): tests/cli/test_damage_reports.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/cli/lib.sh
V=spec/vectors

# 1. the spec's reader against the vectors
expect "the spec's reader gives every vector's .err" 0 python3 tests/helpers/specread.py vectors $V
sed 's/^/#   /' "$tmp/out"

# 2. ... and against the library, flip by flip (bounded: about 1600 flips, seconds)
if [ -x "$build/mkreport" ]; then
	expect "the spec's reader and the library agree on single-bit flips" 0 \
		python3 tests/helpers/specread.py sweep "$build/mkreport" 150 1 \
		$V/valid/409-snapshot-format-2-0.snap $V/valid/410-snapshot-format-2-1.snap \
		$V/valid/405-snapshot-index.snap $V/valid/501-l2-worked-example.l2 \
		$V/valid/302-stream-four-entries.dnsx
	sed 's/^/#   /' "$tmp/out"
else
	echo "ok - # skip: $build/mkreport not built (the flip sweep)"
fi

# 3. the command line: verify --json on every snapshot vector, import --json on
# every stream vector, against the .err; the messages name only the offset
"$bin" verify --json $V/valid/409-snapshot-format-2-0.snap >"$tmp/le" 2>&1
little=1
grep -q "other byte order" "$tmp/le" && little=0 # a big-endian dnsnap refuses them all

# each command's stdout, stderr and exit status, then one check of them all
i=0
for f in $V/valid/*.snap $V/invalid/*.snap; do
	i=$((i + 1))
	"$bin" verify --json "$f" >"$tmp/v$i.out" 2>"$tmp/v$i.err"
	echo "$? $f" >>"$tmp/verify.list"
done
i=0
for f in $V/valid/*.dnsx $V/invalid/*.dnsx; do
	i=$((i + 1))
	rm -f "$tmp/i.snap"
	"$bin" import "$f" -o "$tmp/i.snap" --now 1700000000 --json >"$tmp/i$i.out" 2>"$tmp/i$i.err"
	echo "$? $f" >>"$tmp/import.list"
done

python3 - "$tmp" "$little" <<'EOF'
import json, re, sys
tmp, little = sys.argv[1], sys.argv[2] == "1"
bad = 0


def report(what, f, why):
    global bad
    if why:
        bad += 1
        print("not ok - %s %s: %s" % (what, f, "; ".join(why)))
    else:
        print("ok - %s %s" % (what, f))


def verify_one(f, j, err, rc):
    errs = [(e["check"], e["code"], e["offset"]) for e in j["errors"]]
    why = []
    if not little:
        if errs[:1] != [("open", "DNSNAP_EMAGIC", 16)]:
            why.append("not refused for its byte order: %s" % errs)
        return why
    if "/valid/" in f:
        if not j["ok"] or errs or rc != 0:
            why.append("valid, verify says %s (exit %d)" % (errs, rc))
        return why
    lines = dict((l.split()[0], l.split()) for l in open(f[:-5] + ".err")
                 if not l.startswith("get "))
    o = lines["open"]
    if o[1] != "DNSNAP_OK":
        if errs[:1] != [("open", o[1], int(o[2]))] or rc != 2:
            why.append("expected open %s %s, got %s (exit %d)" % (o[1], o[2], errs, rc))
    else:
        v, s = lines["verify"], lines["scan"]
        if v[1] == "DNSNAP_OK":
            if not j["ok"] or errs or rc != 0:
                why.append("expected good, got %s" % errs)
        else:
            if errs[:1] != [("file", v[1], int(v[2]))] or rc != 2:
                why.append("expected verify %s %s, got %s (exit %d)" % (v[1], v[2], errs, rc))
            if s[1] != "DNSNAP_OK" and not any(e[1:] == (s[1], int(s[2])) for e in errs):
                why.append("expected the scan's %s %s among %s" % (s[1], s[2], errs))
            if (j["good"], j["damaged"]) != (int(s[-3]), int(s[-1])):
                why.append("good %s damaged %s, the scan %s" % (j["good"], j["damaged"], s))
            if errs and errs[0][1] not in err:
                why.append("the message does not name %s: %s" % (errs[0][1], err))
    named = [int(x, 16) for x in re.findall(r"\bat 0x([0-9a-f]+)", err)]
    if any(n not in [e[2] for e in errs] for n in named):
        why.append("the message names %s, the offsets are %s: %s" % (
            named, [e[2] for e in errs], err))
    return why


def import_one(f, out, err, rc):
    why = []
    if "/valid/" in f:
        j = json.loads(out)
        if rc != 0 or "error" in j:
            why.append("valid, import says %s (exit %d)" % (out.strip() or err.strip(), rc))
        return why
    want = open(f[:-5] + ".err").read().split()
    e = json.loads(out).get("error", {}) if out else {}
    if rc != 2 or e.get("code") != want[0] or (want[1] != "zstd" and
                                               e.get("offset") != int(want[1])):
        why.append("expected %s %s, got %s (exit %d)" % (want[0], want[1], e, rc))
    named = [int(x) for x in re.findall(r"\bbyte (\d+)", err)]
    if any(n != e.get("offset") for n in named):
        why.append("the message names bytes %s, the offset is %s: %s" % (
            named, e.get("offset"), err))
    return why


for kind, prefix in (("verify", "v"), ("import", "i")):
    for n, line in enumerate(open("%s/%s.list" % (tmp, kind)), 1):
        rc, f = line.rstrip("\n").split(" ", 1)
        out = open("%s/%s%d.out" % (tmp, prefix, n)).read()
        err = open("%s/%s%d.err" % (tmp, prefix, n)).read()
        if kind == "verify":
            report("verify --json", f, verify_one(f, json.loads(out), err, int(rc)))
        else:
            report("import --json", f, import_one(f, out, err, int(rc)))
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] || fails=$((fails + 1))

[ $fails -eq 0 ]
