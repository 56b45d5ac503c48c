#!/bin/sh
# bench/instr.sh BUILD [bench_instr options]: instructions per lookup, insert and
# snapshot lookup on the Big Pineapple mix, counted by valgrind's callgrind
# around build/bench_instr's measured calls (bench/instr.c says what each
# operation is). Prints one JSON object on stdout; on stderr, a line per
# figure with issue 13's target. Repeatable: two runs print the same counts, or within 0.2%.
# `make bench-instr` runs it (INSTR_ARGS="--entries N --ops M").
set -eu

build=${1:?usage: bench/instr.sh BUILD [--entries N] [--ops M] [--seed S]}
shift
command -v valgrind >/dev/null || { echo "bench/instr.sh: valgrind is missing" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_instr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# Instrumentation off until the driver switches it on around a measured loop;
# collection on only inside the instr_op_* calls; one dump per loop (cg.1...).
valgrind --tool=callgrind -q --instr-atstart=no --collect-atstart=no \
	--toggle-collect='instr_op_*' --callgrind-out-file="$tmp/cg" \
	"$build/bench_instr" --dir "$tmp" "$@" >"$tmp/driver.txt" ||
	{ echo "bench/instr.sh: bench_instr failed under callgrind" >&2; exit 1; }

# "PHASE TOTAL" for each dump, from its trigger line and its totals line.
for f in "$tmp"/cg.[0-9]*; do
	awk '/^desc: Trigger: Client Request: / { p = $NF } /^totals: / { t = $2 }
	     END { if (p != "" && t != "") print p, t }' "$f"
done >"$tmp/totals.txt"

awk -v vg="$(valgrind --version)" '
	FNR == NR { total[$1] = $2; next }
	$1 == "entries" { entries = $2; ops = $4; seed = $6; next }
	$1 == "getrandom" { fixed = $2 > 0; next }
	{ n[$1] = $2; miss[$1] = $3 }
	END {
		split("lookup insert snapshot_lookup", ph, " ")
		for (k = 1; k <= 3; k++) {
			p = ph[k]
			if (!(p in total) || !(p in n) || n[p] == 0) {
				print "bench/instr.sh: no count for " p > "/dev/stderr"
				exit 1
			}
			per[p] = total[p] / n[p]
		}
		if (!fixed)
			print("bench/instr.sh: warning: the cache did not call getrandom(): its " \
			      "index seed was not fixed, counts may differ between runs") > "/dev/stderr"
		printf "{\"bench\":\"instr\",\"mix\":\"big-pineapple\",\"entries\":%d," \
		       "\"operations\":%d,\"seed\":%s,", entries, ops, seed
		printf "\"lookup_instructions\":%.0f,\"insert_instructions\":%.0f," \
		       "\"snapshot_lookup_instructions\":%.0f,", per["lookup"], per["insert"],
		       per["snapshot_lookup"]
		printf "\"misses\":%d,\"counter\":\"%s callgrind Ir\"}\n",
		       miss["lookup"] + miss["snapshot_lookup"], vg
		err = "/dev/stderr"
		printf("lookup + answer, memory: %6.0f instructions   target <= 1000   %s\n",
		       per["lookup"], per["lookup"] <= 1000 ? "ok" : "MISSED") > err
		printf("insert:                  %6.0f instructions   target <= 1200   %s\n",
		       per["insert"], per["insert"] <= 1200 ? "ok" : "MISSED") > err
		printf("lookup + answer, map:    %6.0f instructions   (%.2fx the memory lookup)\n",
		       per["snapshot_lookup"], per["snapshot_lookup"] / per["lookup"]) > err
	}' "$tmp/totals.txt" "$tmp/driver.txt"
