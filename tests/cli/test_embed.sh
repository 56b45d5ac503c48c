#!/bin/sh
# contrib/embed/resolver.c, the embedding example, built as its README says:
# against `make install` into a scratch DESTDIR (tests/cli/stage.sh, shared
# with test_install.sh), through the installed pkg-config files alone, from a
# copy outside the source tree. gcc and clang compile it without a warning
# (-Wall -Wextra -Werror and the house's others); the build's compiler links
# it, and it needs exactly the two installed libraries of ours
# (libdnsnap.so.1, libdnsnap-l2.so.1), found in the staged lib/. Then it runs
# against a redis-server of the test's own (tests/e2e/lib.sh's start_redis: a
# free port, 127.0.0.1, stopped by PID), the same names each time, one asked
# twice:
# 1. cold: every name from the made-up upstream (the repeat from memory), a
#    value with an expiry written to Redis for each (redis-cli counts them);
# 2. a fresh snapshot path: every name from Redis (the repeat from memory);
# 3. run 1's snapshot: every name from the map, Redis not asked;
# 4. run 1's snapshot cut in half: a cold start, every name from Redis, and
#    the publish replaces the damaged file;
# 5. no -r, the built-in names: from upstream, Redis skipped;
# and a file that is not a snapshot is refused (exit 2) and left as it was.
# The tiers printed are checked exactly, every address against what `dnsnap
# get` reads from run 1's snapshot, and the build's `dnsnap info` and
# `dnsnap verify` take every published snapshot.
# Usage (from the repository root, as tests/run.sh runs it):
#   tests/cli/test_embed.sh BUILD
set -u
build=${1:-build}
. tests/e2e/lib.sh # tmp (removed on exit), ok, not_ok, bail, start_redis
. tests/cli/stage.sh
bin=$build/dnsnap

stage_install && ok "make install DESTDIR=... PREFIX=$prefix" ||
	bail "make install DESTDIR=... PREFIX=$prefix" "$tmp/log"
stage_pc libdnsnap
stage_pc libdnsnap-l2
flags=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs libdnsnap libdnsnap-l2 2>"$tmp/err") ||
	bail "pkg-config --cflags --libs libdnsnap libdnsnap-l2" "$tmp/err"
cp contrib/embed/resolver.c "$tmp/resolver.c"

# Both compilers, warnings as errors (compiled only: a sanitizer build's
# libraries take the runtime of the compiler that built them)
warn="-std=c11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
cflags=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags libdnsnap libdnsnap-l2)
for cc in gcc clang; do
	# shellcheck disable=SC2086 # flags are words
	if $cc $warn -c -o "$tmp/resolver-$cc.o" "$tmp/resolver.c" $cflags >"$tmp/err" 2>&1; then
		ok "$cc $warn: no warning"
	else
		not_ok "$cc compiles resolver.c with warnings as errors" "$tmp/err"
	fi
done
# Linked as the README builds it (the build's compiler, its sanitizer if any)
san=$(stage_san)
# shellcheck disable=SC2086 # flags are words
${CC:-cc} -Wall -Wextra -Werror $san -o "$tmp/resolver" "$tmp/resolver.c" $flags \
	>"$tmp/err" 2>&1 || bail "cc resolver.c \$(pkg-config --cflags --libs ...)" "$tmp/err"
ok "cc resolver.c \$(pkg-config --cflags --libs libdnsnap libdnsnap-l2): built, linked"

# Exactly our two installed libraries (besides libc and a sanitizer's runtime)
soname=libdnsnap.so.$(sed -n 's/^SOVERSION *= *//p' Makefile)
l2soname=libdnsnap-l2.so.$(sed -n 's/^L2_SOVERSION *= *//p' Makefile)
readelf -d "$tmp/resolver" >"$tmp/dyn"
sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' "$tmp/dyn" |
	grep -v -e '^libc\.so' -e '^libasan\.so' -e '^libubsan\.so' | LC_ALL=C sort >"$tmp/needed"
printf '%s\n' "$l2soname" "$soname" | LC_ALL=C sort | diff -u - "$tmp/needed" >"$tmp/diff" &&
	ok "it needs $soname and $l2soname, no other library of ours" ||
	not_ok "its NEEDED (+) are not $soname and $l2soname (-)" "$tmp/diff"
grep -q -e RPATH -e RUNPATH "$tmp/dyn" && not_ok "it has a run path" "$tmp/dyn"
LD_LIBRARY_PATH=$lib ldd "$tmp/resolver" >"$tmp/ldd" 2>&1
grep -q "^[[:space:]]*$soname => $lib/$soname " "$tmp/ldd" &&
	grep -q "^[[:space:]]*$l2soname => $lib/$l2soname " "$tmp/ldd" &&
	ok "ldd: both from DESTDIR$prefix/lib" || not_ok "ldd does not find both in $lib" "$tmp/ldd"

start_redis redis 0
url=redis://127.0.0.1:$redis_port
set -- www.example.com mail.example.org ns1.example.net www.example.com
printf '%s\n' "$@" >"$tmp/names"
# The addresses (the made-up upstream's) as `dnsnap get` reads them from SNAP
addresses() {
	for _n in www.example.com mail.example.org ns1.example.net; do
		"$bin" get "$1" "$_n" A | awk -F'\t' -v n="$_n" '!/^;/ && $4 == "A" { print n, $5 }'
	done
}
# run RUN WHAT TIER... -- ARG...: the resolver with ARGs, exit 0 and nothing on
# stderr (with $complaint set: that, and only that, on every line of it); its
# answers are the names, in order, each from its TIER, with the address in
# $tmp/addr
complaint=
run() {
	_r=$1 _what=$2
	shift 2
	: >"$tmp/tiers"
	while [ "$1" != -- ]; do
		echo "$1" >>"$tmp/tiers"
		shift
	done
	shift
	LD_LIBRARY_PATH=$lib "$tmp/resolver" "$@" >"$tmp/$_r.out" 2>"$tmp/$_r.err"
	_rc=$?
	paste -d ' ' "$tmp/names" "$tmp/tiers" >"$tmp/$_r.want"
	grep -v '^;;' "$tmp/$_r.out" | awk '{ print $1, $2 }' >"$tmp/$_r.got"
	cat "$tmp/$_r.out" "$tmp/$_r.err" >"$tmp/log"
	if [ $_rc -ne 0 ]; then
		not_ok "run $_r: exit $_rc" "$tmp/log"
	elif [ -z "$complaint" ] && [ -s "$tmp/$_r.err" ]; then
		not_ok "run $_r: a message on stderr" "$tmp/log"
	elif [ -n "$complaint" ] && { [ ! -s "$tmp/$_r.err" ] ||
		grep -vqF -- "$complaint" "$tmp/$_r.err"; }; then
		not_ok "run $_r: stderr is not '$complaint'" "$tmp/log"
	elif ! diff -u "$tmp/$_r.want" "$tmp/$_r.got" >"$tmp/diff"; then
		cat "$tmp/log" >>"$tmp/diff"
		not_ok "run $_r: the tiers (+ got, - want)" "$tmp/diff"
	else
		ok "run $_r: $_what"
	fi
	grep -v '^;;' "$tmp/$_r.out" | awk '{ print $1, $4 }' | sort -u >"$tmp/$_r.addr"
	[ ! -f "$tmp/addr" ] || cmp -s "$tmp/addr" "$tmp/$_r.addr" ||
		not_ok "run $_r: its addresses are not run 1's" "$tmp/log"
}
# says RUN TEXT: the run printed TEXT
says() { grep -qF -- "$2" "$tmp/$1.out" || not_ok "run $1 does not say '$2'" "$tmp/$1.out"; }
# published SNAP: dnsnap info counts 3 entries in SNAP, dnsnap verify takes it
published() {
	"$bin" info "$1" --json >"$tmp/info" 2>&1 && grep -q '"entries":3,' "$tmp/info" &&
		"$bin" verify "$1" >"$tmp/verify" 2>&1 &&
		ok "dnsnap info and verify: ${1#"$tmp"/}, 3 entries, good" ||
		{ cat "$tmp/verify" >>"$tmp/info"; not_ok "dnsnap info or verify: $1" "$tmp/info"; }
}
# keys: the keys in our Redis (hex), each with its expiry, PTTL in ms
keys() {
	resp "$redis_port" scan '*' | LC_ALL=C sort | while read -r _k; do
		echo "$_k $(resp "$redis_port" call PTTL "x:$_k")"
	done
}
# The keys run 1 must write: the prefix, then the cache key of each name, as
# spec/FORMAT.md lays it out (the labels reversed, QTYPE A, QCLASS IN, no
# flag, no tag)
python3 -c 'import sys
for n in sys.argv[1:]:
    k = b"".join(bytes([len(l)]) + l.encode() for l in reversed(n.split(".")))
    print((b"dnsnap:" + k + bytes([0, 0, 1, 0, 1, 0, 0])).hex())' \
	www.example.com mail.example.org ns1.example.net | LC_ALL=C sort >"$tmp/keys.want"

w="-r $url -w 5000"
# (the addresses of the next runs are checked against run 1's, and those
# against what dnsnap get reads from its snapshot)
# shellcheck disable=SC2086 # $w: words
run 1 "cold: upstream, then memory" upstream upstream upstream memory -- $w "$tmp/one.snap" "$@"
addresses "$tmp/one.snap" | sort -u >"$tmp/addr"
cmp -s "$tmp/addr" "$tmp/1.addr" && [ "$(wc -l <"$tmp/addr")" -eq 3 ] &&
	ok "its addresses are those dnsnap get reads from its snapshot" ||
	{
		cat "$tmp/1.addr" >>"$tmp/addr"
		not_ok "dnsnap get's addresses, then run 1's" "$tmp/addr"
	}
says 1 ";; redis: 0 hits, 3 misses, 3 values written"
says 1 ";; published $tmp/one.snap: 3 entries written (0 of them from the file before)"
keys >"$tmp/keys"
cut -d ' ' -f 1 "$tmp/keys" | cmp -s - "$tmp/keys.want" &&
	awk '$2 <= 0 || $2 > 300000 { exit 1 }' "$tmp/keys" &&
	ok "Redis holds a value under each name's key, expiring within 300 s" ||
	{
		cat "$tmp/keys.want" >>"$tmp/keys"
		not_ok "Redis's keys and PTTLs, then the keys wanted" "$tmp/keys"
	}
published "$tmp/one.snap"

# shellcheck disable=SC2086 # $w: words
run 2 "a fresh snapshot path: Redis, then memory" redis redis redis memory -- $w \
	"$tmp/two.snap" "$@"
says 2 ";; redis: 3 hits, 0 misses, 0 values written"
published "$tmp/two.snap"

# shellcheck disable=SC2086 # $w: words
run 3 "run 1's snapshot: the map (Redis not asked)" map map map map -- $w "$tmp/one.snap" "$@"
says 3 ";; $tmp/one.snap: 3 entries mapped"
says 3 ";; redis: 0 hits, 0 misses, 0 values written"
says 3 "3 entries written (3 of them from the file before)"
published "$tmp/one.snap"

size=$(wc -c <"$tmp/one.snap")
head -c $((size / 2)) "$tmp/one.snap" >"$tmp/cut.snap"
# shellcheck disable=SC2086 # $w: words
run 4 "a snapshot cut short: a cold start, Redis" redis redis redis memory -- $w \
	"$tmp/cut.snap" "$@"
says 4 ";; a cold start: $tmp/cut.snap: truncated"
says 4 ";; the file before was damaged, replaced"
published "$tmp/cut.snap"

# A value changed in Redis (one byte of its entry): refused, asked upstream
mail=$(sed -n 3p "$tmp/keys.want")
resp "$redis_port" get "$mail" "$tmp/val" &&
	python3 -c 'import sys
v = bytearray(open(sys.argv[1], "rb").read())
v[len(v) // 2] ^= 1
open(sys.argv[1], "wb").write(v)' "$tmp/val" && resp "$redis_port" call SET "x:$mail" "@$tmp/val" \
	>/dev/null || bail "a value in Redis changed"
complaint="resolver: a Redis value refused: "
# shellcheck disable=SC2086 # $w: words
run 6 "a value changed in Redis: refused, that name upstream" redis upstream redis memory -- $w \
	"$tmp/six.snap" "$@"
complaint=
grep -q "L2_Check" "$tmp/6.err" || not_ok "run 6 does not name the L2_Check" "$tmp/6.err"
says 6 ";; redis: 3 hits, 0 misses, 1 values written"

run 5 "no -r, the built-in names: upstream (Redis skipped)" upstream upstream upstream memory \
	-- "$tmp/five.snap"
grep -q 'redis' "$tmp/5.out" && not_ok "run 5 speaks of Redis" "$tmp/5.out"
published "$tmp/five.snap"

printf 'notes\n' >"$tmp/notes"
LD_LIBRARY_PATH=$lib "$tmp/resolver" "$tmp/notes" www.example.com >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -qF "$tmp/notes: not a snapshot" "$tmp/err" && [ ! -s "$tmp/out" ] &&
	[ "$(cat "$tmp/notes")" = notes ] &&
	ok "a file that is not a snapshot: exit 2, named, left as it was" ||
	{ cat "$tmp/out" >>"$tmp/err"; not_ok "not a snapshot: exit $rc" "$tmp/err"; }

stop_redis "$redis_pid"
finish
