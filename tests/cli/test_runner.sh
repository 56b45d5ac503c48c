#!/bin/sh
# tests/run.sh, the runner of make test, on a tree of its own with made-up
# steps: a line per step as it ends, numbered in order; steps run TEST_JOBS at
# once (two steps that each wait for the other both pass); a failed step's log
# at the end, whole; with TEST_VERBOSE=1 each step's output whole, never mixed
# with another's; the fuzz smoke's runs per target; a bad TEST_JOBS refused;
# the last line "N passed, N failed", exit 1 on a failure and 0 without.
# Usage (from the repository root): tests/cli/test_runner.sh BUILD
# (BUILD is not used: the steps here are scripts.)
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

ok() { echo "ok - $1"; }
not_ok() { # NAME [FILE of details]
	echo "not ok - $1"
	[ $# -gt 1 ] && sed 's/^/#   /' "$2"
	fails=$((fails + 1))
}

# The tree: the runner, two CLI steps that meet (each leaves a mark, then
# waits up to 20 s for the other's: run one after the other, both fail), a
# unit step that fails, one that passes, and fuzz targets that print their
# arguments.
t=$tmp/tree
mkdir -p "$t/tests/cli" "$t/b/bin" "$t/b/fuzz" "$t/spec/vectors/valid" "$t/spec/vectors/invalid" \
	"$t/sync"
cp tests/run.sh "$t/tests/"
for me in a b; do
	other=a
	[ $me = a ] && other=b
	cat >"$t/tests/cli/test_$me.sh" <<EOF
touch "\$SYNC/$me"
i=0
while [ ! -e "\$SYNC/$other" ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done
echo "$me: one"
sleep 0.2
echo "$me: two"
[ -e "\$SYNC/$other" ]
EOF
done
printf '#!/bin/sh\necho "boom: expected 1, got 2"\necho "second line" >&2\nexit 1\n' \
	>"$t/b/bin/test_fail"
printf '#!/bin/sh\necho fine\n' >"$t/b/bin/test_ok"
printf '#!/bin/sh\nmkdir -p "$1"\n' >"$t/b/mkcorpus"
printf '#!/bin/sh\nmkdir -p "$1"\n' >"$t/b/mksnapseeds"
for f in fuzz_entry fuzz_import; do
	printf '#!/bin/sh\necho "$(basename "$0") $1 $2"\n' >"$t/b/fuzz/$f"
done
chmod +x "$t/b/bin/"* "$t/b/mkcorpus" "$t/b/mksnapseeds" "$t/b/fuzz/"*

# run NAME ENV...: tests/run.sh b 100 in the tree; out, err and rc in $tmp
run() {
	n=$1
	shift
	rm -f "$t/sync/"*
	(cd "$t" && env SYNC="$t/sync" "$@" sh tests/run.sh b 100 >"$tmp/$n.out" 2>"$tmp/$n.err")
	echo $? >"$tmp/$n.rc"
}

run par TEST_JOBS=2
# The progress lines, numbered 1 to 6 in order: their steps in any order.
sed -n 's/^\[\([0-9]\)\/6\] \(.*\) ([0-9.]* s)$/\1 \2/p' "$tmp/par.out" >"$tmp/lines"
cut -d' ' -f1 "$tmp/lines" | tr '\n' ' ' >"$tmp/nums"
[ "$(cat "$tmp/nums")" = "1 2 3 4 5 6 " ] && ok "six progress lines, numbered 1 to 6" ||
	not_ok "the progress lines" "$tmp/par.out"
cut -d' ' -f2- "$tmp/lines" | LC_ALL=C sort >"$tmp/got"
cat >"$tmp/want" <<'EOF'
FAIL test_fail
ok   fuzz_entry 100 runs
ok   fuzz_import 10 runs
ok   test_a.sh
ok   test_b.sh
ok   test_ok
EOF
diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" &&
	ok "each step's line: two CLI steps that wait for each other pass, 2 at a time" ||
	not_ok "the steps' lines (+ got, - want)" "$tmp/diff"
# The end: the failed step's log whole (stdout and stderr), the summary.
sed -n '/^---- /,$p' "$tmp/par.out" | sed 's/^6 steps in [0-9]* s, /6 steps in N s, /;
	s/(their own times add up to [0-9]* s)$/(...)/' >"$tmp/got"
cat >"$tmp/want" <<'EOF'
---- test_fail failed (b/test-logs/test_fail.log)
boom: expected 1, got 2
second line

6 steps in N s, 2 at a time (...)
failed: test_fail
5 passed, 1 failed
EOF
diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" && ok "the failed step's log, then the summary" ||
	not_ok "the end of the output (+ got, - want)" "$tmp/diff"
[ "$(cat "$tmp/par.rc")" = 1 ] && ok "exit 1 with a failed step" ||
	not_ok "exit $(cat "$tmp/par.rc") with a failed step"
grep -q '^running 6 steps, 2 at a time (TEST_JOBS), logs in b/test-logs/$' "$tmp/par.out" &&
	ok "it says how many steps, how many at once, where the logs are" ||
	not_ok "no 'running 6 steps' line" "$tmp/par.out"
# The fuzz targets got their runs and the scratch corpus first
grep -q '^fuzz_import -runs=10 -seed=1$' "$t/b/test-logs/fuzz_import.log" &&
	ok "fuzz_import ran with -runs=10 -seed=1" ||
	not_ok "fuzz_import's arguments" "$t/b/test-logs/fuzz_import.log"

# Every step's output whole: a's two lines together, b's together.
run verbose TEST_JOBS=2 TEST_VERBOSE=1
grep '^[ab]: ' "$tmp/verbose.out" | cut -c1 | tr -d '\n' >"$tmp/order"
case $(cat "$tmp/order") in
aabb | bbaa) ok "TEST_VERBOSE=1: each step's output whole, not mixed" ;;
*) not_ok "TEST_VERBOSE=1: the steps' output is mixed: $(cat "$tmp/order")" "$tmp/verbose.out" ;;
esac

# Without the failing step: exit 0, and the same last line.
rm "$t/b/bin/test_fail"
run good TEST_JOBS=3
[ "$(cat "$tmp/good.rc")" = 0 ] && [ "$(tail -1 "$tmp/good.out")" = "5 passed, 0 failed" ] &&
	ok "exit 0 and '5 passed, 0 failed' when all pass" ||
	not_ok "all pass: exit $(cat "$tmp/good.rc")" "$tmp/good.out"

for bad in 0 x 1.5; do
	run bad TEST_JOBS="$bad"
	echo "tests/run.sh: TEST_JOBS is '$bad', not a number of steps at once (1 or more)" >"$tmp/want"
	[ "$(cat "$tmp/bad.rc")" = 2 ] && cmp -s "$tmp/want" "$tmp/bad.err" &&
		ok "TEST_JOBS='$bad' refused, exit 2" ||
		not_ok "TEST_JOBS='$bad': exit $(cat "$tmp/bad.rc")" "$tmp/bad.err"
done

[ "$fails" -eq 0 ]
