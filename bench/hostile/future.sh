#!/bin/sh
# bench/hostile/future.sh: a future-dated entry (issue 22, item 1) on every path,
# old binary against new: run from the repository root after `make build/mkfuture`
#   bench/hostile/future.sh OLD_DNSNAP NEW_DNSNAP
# (the old one e.g. from `git worktree add /tmp/oldtree 96ec388 && make -C /tmp/oldtree`).
# For each binary: the snapshot of build/mkfuture (future.example cached ten years
# ahead, good.example now), then get, verify, info, a load onto it, the import of its
# export, and load --now +3650d, each line "STEP: exit N" plus what it says.
set -u
fix=tests/fixtures/unbound-dump_cache.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for bin in "$@"; do
	echo "== $bin"
	build/mkfuture "$tmp/f.snap" 315360000 || exit 1
	"$bin" get "$tmp/f.snap" future.example >"$tmp/out" 2>&1
	echo "get future.example: exit $? answer: $(grep -c '^future.example\.' "$tmp/out") record(s)"
	"$bin" verify "$tmp/f.snap" >/dev/null 2>&1
	echo "verify: exit $?"
	"$bin" info "$tmp/f.snap" --json 2>/dev/null >"$tmp/out"
	echo "info: exit $? $(python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print("live", o["live"], "refused", o.get("refused", "-"))' "$tmp/out")"
	"$bin" load "$tmp/f.snap" "$fix" >/dev/null 2>&1
	"$bin" get "$tmp/f.snap" future.example --now +3650d >/dev/null 2>&1
	echo "after a load onto it, future.example (asked at +3650d): exit $? (0: kept)"
	build/mkfuture "$tmp/f.snap" 315360000
	"$bin" export "$tmp/f.snap" -o "$tmp/f.dnsx" 2>/dev/null
	rm -f "$tmp/i.snap"
	"$bin" import "$tmp/f.dnsx" -o "$tmp/i.snap" >/dev/null 2>&1
	echo "import of its export: exit $? written: $([ -e "$tmp/i.snap" ] && echo yes || echo no)"
	rm -f "$tmp/l.snap"
	"$bin" load "$tmp/l.snap" "$fix" --now +3650d >/dev/null 2>&1
	echo "load --now +3650d: exit $? written: $([ -e "$tmp/l.snap" ] && echo yes || echo no)"
done
