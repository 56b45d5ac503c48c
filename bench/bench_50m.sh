#!/bin/sh
# bench/bench_50m.sh BUILD [DIR [ENTRIES]]: the cache and its snapshot at
# 50,000,000 entries (ENTRIES to run the same figures at another size: the
# table of doc/BENCHMARKS.md has 1M, 10M and 50M from it). `make bench-50m`.
#
# 1. build/bench_snap --entries ENTRIES --rounds 1 --insert-rounds 1 --keep: the
#    fill (insert rate; jemalloc's bytes per entry, all-in), the memory lookups
#    (p50, p99), a snapshot write, a second one with a thread inserting (the
#    slowest insert) and one looking up (the slowest lookup), opens, first
#    answers, the map's lookups (p50, p99). The responses are made one at a
#    time (bench_cache prebuilds them all: 7 GB more at 50M, so it is not run).
# 2. On the file it kept (DIR/bench_snap.PID.mdb): the wall time and peak memory
#    of `dnsnap info`, `dnsnap verify`, `dnsnap dump --zone` (the zone of the
#    first key: a range scan) and `dnsnap export -o` (zstd level 3, to DIR).
# 3. build/serve_start on it: `dnsnap serve`, exec to first answer (10 runs).
# Prints a table, then one JSON object ("bench":"50m"); the files are removed.
#
# Memory at 50M (measured, peak resident set): bench_snap about 11 GB (the
# cache 7.8 GB, the write's references 1.2 GB, the index's slots 0.8 GB); the
# snapshot takes 8.8 GB in DIR and the export 5 GB. About 25 minutes on this
# 2-core VM (each write of 50M about 2 minutes, the export 6).
set -eu

build=${1:?usage: bench/bench_50m.sh BUILD [DIR [ENTRIES]]}
dir=${2:-/tmp}
n=${3:-50000000}
for p in bench_snap serve_start dnsnap; do
	[ -x "$build/$p" ] || { echo "bench_50m: $build/$p is not built" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "bench_50m: python3 is missing" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_50m.XXXXXX")
snap=
cleanup() {
	rm -rf "$tmp"
	[ -z "$snap" ] || rm -f "$snap" "$snap.export"
}
trap cleanup EXIT INT TERM

# timed NAME COMMAND...: stdout to $tmp/NAME.out; "seconds peak_kb rc" to $tmp/NAME.cost
timed() {
	tn=$1
	shift
	echo "bench_50m: $tn: $*" >&2
	t0=$(date +%s.%N)
	rc=0
	/usr/bin/time -f "%M" -o "$tmp/$tn.rss" "$@" >"$tmp/$tn.out" 2>"$tmp/$tn.err" || rc=$?
	t1=$(date +%s.%N)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') \
$(tail -1 "$tmp/$tn.rss" 2>/dev/null || echo 0) $rc" >"$tmp/$tn.cost"
	echo "bench_50m: $tn took $(cut -d' ' -f1 "$tmp/$tn.cost") s" >&2
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
timed snap "$build/bench_snap" --entries "$n" --lookups 1000000 --rounds 1 --insert-rounds 1 \
	--opens 3 --keep --dir "$dir" --json
[ "$(cut -d' ' -f3 "$tmp/snap.cost")" = 0 ] || { cat "$tmp/snap.err" >&2; exit 1; }
snap=$(ls -t "$dir"/bench_snap.*.mdb | head -1)

timed info "$build/dnsnap" info "$snap"
timed verify "$build/dnsnap" verify "$snap"
# the first key's zone: its name less the first label
first=$("$build/dnsnap" dump --expired "$snap" 2>/dev/null | head -1 || true)
name=$(echo "$first" | cut -d' ' -f2)
zone=${name#*.}
now=$(echo "$first" | sed -n 's/.* inception \([^ ]*\) .*/\1/p')
timed dump "$build/dnsnap" dump --zone "$zone" --now "$now" "$snap"
timed export "$build/dnsnap" export -o "$snap.export" "$snap"
export_bytes=$(stat -c %s "$snap.export" 2>/dev/null || echo 0)
rm -f "$snap.export"
type=$(echo "$first" | cut -d' ' -f4)
timed start "$build/serve_start" --runs 10 "$snap" "$name" "$type" -- "$build/dnsnap" --now "$now"
end=$(date +%s.%N)
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$tmp" "$start" "$end" "$load0" "$load1" "$zone" "$export_bytes" <<'EOF'
import json, re, sys
tmp, start, end, load0, load1, zone, export_bytes = sys.argv[1:8]
s = json.load(open(tmp + "/snap.out"))
cost = {}
for k in ("snap", "info", "verify", "dump", "export", "start"):
    sec, rss, rc = open(tmp + "/" + k + ".cost").read().split()
    cost[k] = {"seconds": float(sec), "peak_rss_kb": int(rss), "exit": int(rc)}
start_out = open(tmp + "/start.out").read()
m = re.search(r"exec to first answer, serve\s+median\s+([0-9.]+)\s+min\s+([0-9.]+)\s+max\s+([0-9.]+)",
              start_out)
serve_first = [float(x) for x in m.groups()] if m else None
dump_lines = sum(1 for _ in open(tmp + "/dump.out"))
n = s["entries"]
rows = [
    ("inserts, 1 thread (parse, encode, index)", "%.2fM/s" % (s["fill_per_s"] / 1e6)),
    ("all-in bytes per entry in memory (jemalloc)", "%.1f" % s["memory_bytes_per_entry"]),
    ("lookup + answer in memory, p50 / p99", "%.0f / %.0f ns" % (s["memory_lookup_ns_median"],
                                                               s["memory_lookup_ns_p99"])),
    ("lookup + answer from the map, p50 / p99", "%.0f / %.0f ns (%.2fx memory)" % (
        s["snapshot_lookup_ns_median"], s["snapshot_lookup_ns_p99"],
        s["snapshot_over_memory_lookup"])),
    ("snapshot write", "%.1f s, %.2fM entries/s (the disk floor: %.1f s)" % (
        s["snapshot_write_ms"] / 1e3, s["snapshot_write_per_s"] / 1e6, s["disk_floor_ms"] / 1e3)),
    ("slowest insert / lookup while writing", "%.1f ms / %.1f ms (%d inserts over 10 ms)" % (
        s["insert_wait_max_ms"], s["lookup_max_during_write_us"] / 1e3, s["inserts_over_10ms"])),
    ("snapshot on disk", "%.1f GB, %.1f bytes per entry" % (s["snapshot_file_bytes"] / 1e9,
                                                           s["snapshot_bytes_per_entry"])),
    ("open (fresh process)", "%.2f ms" % s["snapshot_open_ms"]),
    ("spawn to first answer (bench_snap)", "%.1f ms" % s["snapshot_first_answer_ms"]),
    ("`dnsnap serve`, exec to first answer (10 runs)",
     "%.1f ms (%.1f-%.1f)" % tuple(serve_first) if serve_first else "-"),
    ("`dnsnap info`", "%.2f s" % cost["info"]["seconds"]),
    ("`dnsnap verify`", "%.1f s" % cost["verify"]["seconds"]),
    ("`dnsnap dump --zone %s`" % zone, "%.2f s (%d lines)" % (cost["dump"]["seconds"], dump_lines)),
    ("`dnsnap export -o` (zstd 3)", "%.1f s, %.1f GB, peak %.0f MB" % (
        cost["export"]["seconds"], int(export_bytes) / 1e9, cost["export"]["peak_rss_kb"] / 1024)),
    ("bench_snap peak memory", "%.1f GB" % (cost["snap"]["peak_rss_kb"] / 1048576)),
]
print("%d entries, load average %s at the start, %s at the end\n" % (n, load0, load1))
print("| | %s |" % ("%dM" % (n // 1000000) if n >= 1000000 else "%dk" % (n // 1000)))
print("|---|---|")
for r in rows:
    print("| %s | %s |" % r)
print("\ntook %.0f s" % (float(end) - float(start)))
print(json.dumps({"bench": "50m", "entries": n, "seconds": round(float(end) - float(start), 1),
                  "loadavg": [load0, load1], "cost": cost, "serve_first_answer_ms": serve_first,
                  "dump_zone": zone, "dump_lines": dump_lines,
                  "export_bytes": int(export_bytes), "snap": s}, separators=(",", ":")))
EOF
