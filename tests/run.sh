#!/bin/sh
# Run every test: unit and vector tests (cmocka), CLI tests, and a fixed-run
# smoke of each fuzz target over its seed corpus.
# Usage: tests/run.sh BUILD FUZZ_RUNS (0: no fuzzing)
#
# TEST_JOBS steps run at once (default: the CPUs; 1 runs them one by one).
# Each step's output goes to BUILD/test-logs/STEP.log; a line reports each
# step as it ends ("[ 7/35] ok   test_cache (0.3 s)"), the failed steps' logs
# follow at the end, whole, and never mixed with another step's output.
# TEST_VERBOSE=1 prints every step's log when it ends. The steps are
# independent: each makes its own temporary directory, and the servers the
# CLI tests start listen on ports the kernel picks.
# Ends with one line "N passed, N failed" and exits non-zero on any failure.
set -u
build=${1:-build}
runs=${2:-0}
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
verbose=${TEST_VERBOSE:-0}
case $jobs in
'' | *[!0-9]* | 0*)
	echo "tests/run.sh: TEST_JOBS is '$jobs', not a number of steps at once (1 or more)" >&2
	exit 2
	;;
esac
case $runs in
'' | *[!0-9]*)
	echo "tests/run.sh: FUZZ_RUNS is '$runs', not a number of runs" >&2
	exit 2
	;;
esac

logs=$build/test-logs
rm -rf "$logs"
mkdir -p "$logs" || exit 2
work=$(mktemp -d) || exit 2
next=1
trap 'rm -rf "$work"' EXIT
# Interrupted: stop the steps still running (pid_INDEX is set while one runs).
stop_steps() {
	j=1
	while [ "$j" -lt "$next" ]; do
		eval "p=\${pid_$j:-}"
		[ -n "$p" ] && kill "$p" 2>/dev/null
		j=$((j + 1))
	done
	exit 130
}
trap stop_steps INT TERM

now() { date +%s.%N; }
t_start=$(now)

# The fuzz smoke's seeds: made once, before the steps that read them.
seeds_failed=0
if [ "$runs" -gt 0 ]; then
	echo "making the fuzz seeds (mkcorpus, mksnapseeds)"
	if ! { "$build"/mkcorpus "$work/corpus" && "$build"/mksnapseeds "$work/snaps"; } \
		>"$logs/fuzz-seeds.log" 2>&1; then
		echo "FAIL making the fuzz seeds: no fuzz smoke ($logs/fuzz-seeds.log)"
		seeds_failed=1
	fi
fi

# The steps, one word each, KIND:NAME; the longest first (the fuzz smoke), so
# that the last to end are short.
set --
if [ "$runs" -gt 0 ] && [ "$seeds_failed" -eq 0 ]; then
	for f in "$build"/fuzz/fuzz_*; do
		[ -x "$f" ] && set -- "$@" "fuzz:$(basename "$f")"
	done
fi
for t in "$build"/bin/test_*; do
	[ -x "$t" ] && set -- "$@" "unit:$(basename "$t")"
done
for t in tests/cli/test_*.sh; do
	[ -f "$t" ] && set -- "$@" "cli:$(basename "$t")"
done
total=$#
# step_1 ... step_N: positional parameters are a function's own inside one
i=0
for step; do
	i=$((i + 1))
	eval "step_$i=\$step"
done

# fuzz_runs NAME: the runs a fuzz target gets of FUZZ_RUNS
fuzz_runs() {
	case $1 in
	# fuzz_import builds a cache and may publish a snapshot per input: about
	# 100x slower a run than the in-memory decoders, so a tenth.
	# fuzz_unbound parses each line with ldns: about 50x slower a run.
	# fuzz_capture reads whole captures (the vectors, up to 64 KB) through
	# libpcap: about 60x slower a run (800 a second; 200000 took 4 minutes,
	# the longest step of make test by far).
	fuzz_capture | fuzz_import | fuzz_unbound) echo $((runs / 10)) ;;
	# fuzz_snapshot opens, walks and verifies a whole file a run
	fuzz_snapshot) echo $((runs / 20)) ;;
	*) echo "$runs" ;;
	esac
}

label() { # KIND:NAME
	case $1 in
	fuzz:*) echo "${1#*:} $(fuzz_runs "${1#*:}") runs" ;;
	*) echo "${1#*:}" ;;
	esac
}

# run_step KIND:NAME: the step itself, its output to stdout and stderr; it
# replaces the shell it runs in (exec), so that its process id is the step's
run_step() {
	name=${1#*:}
	case $1 in
	unit:*) exec "$build/bin/$name" ;;
	cli:*) exec sh "tests/cli/$name" "$build" ;;
	fuzz:*)
		# The first directory receives new inputs: a scratch one, so the
		# repository's vectors stay as they are. A target with seeds of its
		# own (text inputs) also reads tests/fuzz/seeds/TARGET; fuzz_snapshot's
		# seeds are real snapshots made here (mksnapseeds).
		own=tests/fuzz/seeds/$name
		[ -d "$own" ] || own=
		[ "$name" = fuzz_snapshot ] && own=$work/snaps
		mkdir -p "$work/new.$name"
		# shellcheck disable=SC2086 # $own is one directory or nothing
		exec "$build/fuzz/$name" -runs="$(fuzz_runs "$name")" -seed=1 "$work/new.$name" \
			spec/vectors/valid spec/vectors/invalid "$work/corpus" $own
		;;
	esac
}

echo "running $total steps, $jobs at a time (TEST_JOBS), logs in $logs/"

# Each step runs in the background and, when it ends, writes "INDEX STATUS
# START END" to a FIFO (one short write: whole); this loop reads those lines,
# so it learns which step ended without polling.
mkfifo "$work/ended" || exit 2
exec 3<>"$work/ended"
start() { # INDEX
	eval "step=\$step_$1"
	(
		t0=$(now)
		run_step "$step" </dev/null >"$logs/${step#*:}.log" 2>&1 3>&- &
		child=$!
		trap 'kill "$child" 2>/dev/null; exit 143' TERM
		wait "$child"
		rc=$?
		echo "$1 $rc $t0 $(now)" >&3
	) &
	eval "pid_$1=$!"
}

pass=0
fail=$seeds_failed
failed=
[ "$seeds_failed" -eq 1 ] && failed=" fuzz-seeds"
sum=0
running=0
ended=0
width=${#total}
while [ "$ended" -lt "$total" ]; do
	while [ "$running" -lt "$jobs" ] && [ "$next" -le "$total" ]; do
		start "$next"
		next=$((next + 1))
		running=$((running + 1))
	done
	read -r i rc t0 t1 <&3 || break
	running=$((running - 1))
	ended=$((ended + 1))
	unset "pid_$i"
	eval "step=\$step_$i"
	log=$logs/${step#*:}.log
	secs=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
	sum=$(echo "$sum $secs" | awk '{ print $1 + $2 }')
	[ "$verbose" = 1 ] && cat "$log"
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		status="ok  "
	else
		fail=$((fail + 1))
		failed="$failed ${step#*:}"
		status="FAIL"
	fi
	printf "[%${width}d/%d] %s %s (%s s)\n" "$ended" "$total" "$status" "$(label "$step")" "$secs"
done
exec 3>&-
wait

for name in $failed; do
	log=$logs/$name.log
	n=$(wc -l <"$log")
	echo
	if [ "$n" -gt 200 ]; then
		echo "---- $name failed: the last 200 lines of $n ($log)"
		tail -200 "$log"
	else
		echo "---- $name failed ($log)"
		cat "$log"
	fi
done
echo
wall=$(echo "$t_start $(now)" | awk '{ printf "%.0f", $2 - $1 }')
echo "$total steps in $wall s, $jobs at a time (their own times add up to $(echo "$sum" | awk '{ printf "%.0f", $1 }') s)"
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
