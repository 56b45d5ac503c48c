#!/bin/sh
# Run each cross-built unit test under qemu-user, from the repository root (the
# tests read spec/vectors). Usage: tests/cross/run.sh BUILD QEMU SYSROOT
# One line per test binary, then one line "N passed, N failed"; exits non-zero on
# any failure. A failing test's output is kept in BUILD/log/TEST.log (its last
# lines are printed).
set -u
build=$1
qemu=$2
sysroot=$3
pass=0
fail=0
failed=""
mkdir -p "$build/log"
for t in "$build"/bin/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	log=$build/log/$name.log
	start=$(date +%s)
	if "$qemu" -L "$sysroot" "$t" >"$log" 2>&1; then
		pass=$((pass + 1))
		echo "ok     $name ($(($(date +%s) - start)) s)"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAILED $name ($(($(date +%s) - start)) s), $log:"
		grep -E '^\[  (FAILED|ERROR)|^\[  PASSED|Failure|rror' "$log" | head -20 | sed 's/^/    /'
	fi
done
echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
