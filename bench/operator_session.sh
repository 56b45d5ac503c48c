#!/bin/sh
# An operator's session on a large snapshot, timed: inspect, trim, export,
# copy, import, check. Usage: bench/operator_session.sh BUILD ENTRIES DIR
# (the issue 5 closing note's transcript; not a test).
set -eu
build=${1:-build}
n=${2:-1000000}
dir=${3:-/tmp/dnsnap-session}
bin=$build/dnsnap
mkdir -p "$dir"
run() { # show the command, run it, show its wall time
	echo "\$ $*"
	s=$(date +%s.%N)
	rc=0
	"$@" || rc=$?
	e=$(date +%s.%N)
	echo "  (exit $rc, $(echo "$e - $s" | bc | sed 's/^\./0./' | cut -c1-5) s)"
}
echo "# a resolver fills $n entries and writes its shutdown snapshot"
"$build/resolver_demo" fill "$dir/cache.snap" "$n" | grep '^shutdown'
q=$("$build/resolver_demo" fill "$dir/tmp.snap" 10 | sed -n 's/^  query 0 (\(.*\)):.*/\1/p')
rm -f "$dir/tmp.snap"
zone=$(echo "$q" | sed 's/^[^.]*\.//')
run "$bin" info "$dir/cache.snap"
run "$bin" stats "$dir/cache.snap" --top 3
run "$bin" verify "$dir/cache.snap"
run "$bin" dump "$dir/cache.snap" --name "$q" --json
run "$bin" get "$dir/cache.snap" "$q" A
echo "\$ $bin dump $dir/cache.snap --zone $zone | head -8"
"$bin" dump "$dir/cache.snap" --zone "$zone" | head -8
run sh -c "'$bin' dump '$dir/cache.snap' --zone '$zone' --json | wc -l"
run "$bin" purge "$dir/cache.snap" --type TXT
run "$bin" purge "$dir/cache.snap" --expired
if [ -x "$build/mkcaptures" ]; then
	"$build/mkcaptures" "$dir/caps" > /dev/null
	run "$bin" load "$dir/cache.snap" "$dir/caps/tcp.pcap" "$dir/caps/sll2.pcapng" "$dir/caps/malformed.pcap"
fi
run "$bin" export "$dir/cache.snap" -o "$dir/cache.dnsx"
ls -l "$dir/cache.dnsx" | awk '{print "  stream: " $5 " bytes"}'
run "$bin" import "$dir/cache.dnsx" -o "$dir/new.snap"
run "$bin" verify "$dir/new.snap"
a=$("$bin" info "$dir/cache.snap" --json | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
b=$("$bin" info "$dir/new.snap" --json | sed 's/.*"digest":"\([0-9a-f]*\)".*/\1/')
echo "digests: $a $b $([ "$a" = "$b" ] && echo equal || echo DIFFER)"
run sh -c "'$bin' export '$dir/cache.snap' -o - --level 1 | '$bin' import - -o '$dir/piped.snap'"
