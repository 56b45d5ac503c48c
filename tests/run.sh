#!/bin/sh
# Run every test: unit and vector tests (cmocka), CLI tests, and a fixed-run
# smoke of each fuzz target over its seed corpus. Usage: tests/run.sh BUILD FUZZ_RUNS
# Ends with one line "N passed, N failed" and exits non-zero on any failure.
set -u
build=${1:-build}
runs=${2:-0}
pass=0
fail=0
failed=""

check() { # name, command...
	name=$1; shift
	if "$@"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAILED: $name" >&2
	fi
}

for t in "$build"/bin/test_*; do
	[ -x "$t" ] || continue
	check "$(basename "$t")" "$t"
done

for t in tests/cli/test_*.sh; do
	[ -f "$t" ] || continue
	check "$(basename "$t")" sh "$t" "$build"
done

if [ "$runs" -gt 0 ]; then
	seeds=$(mktemp -d)
	trap 'rm -rf "$seeds"' EXIT
	"$build"/mkcorpus "$seeds/corpus" >/dev/null
	"$build"/mksnapseeds "$seeds/snaps"
	for f in "$build"/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		mkdir -p "$seeds/new"
		# fuzz_import builds a cache and may publish a snapshot per input:
		# about 100x slower a run than the in-memory decoders, so a tenth
		n=$runs
		[ "$(basename "$f")" = fuzz_import ] && n=$((runs / 10))
		# fuzz_unbound parses each line with ldns: about 50x slower a run
		[ "$(basename "$f")" = fuzz_unbound ] && n=$((runs / 10))
		# The first directory receives new inputs: a scratch one, so the
		# repository's vectors stay as they are. A target with seeds of its
		# own (text inputs) also reads tests/fuzz/seeds/TARGET.
		own=tests/fuzz/seeds/$(basename "$f")
		[ -d "$own" ] || own=
		# fuzz_snapshot opens, walks and verifies a whole file a run; its
		# seeds are real snapshots made here (mksnapseeds)
		[ "$(basename "$f")" = fuzz_snapshot ] && n=$((runs / 20)) && own="$seeds/snaps"
		check "$(basename "$f")" sh -c "'$f' -runs=$n -seed=1 '$seeds/new' \
			spec/vectors/valid spec/vectors/invalid '$seeds/corpus' $own >'$seeds/log' 2>&1 \
			|| { tail -40 '$seeds/log'; exit 1; }"
		rm -rf "$seeds/new"
	done
fi

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
