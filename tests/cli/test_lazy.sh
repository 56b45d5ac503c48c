#!/bin/sh
# The libraries the tool opens only when a command needs them (cli/lazy.h):
# build/dnsnap records none of ldns, libpcap, libmicrohttpd (nor loads what
# they bring); serve, info and verify run with all three missing; a command
# that needs a missing one exits 2 naming it and writes nothing; load of
# Unbound's text needs no libpcap. "Missing" is the soname overridden with
# DNSNAP_SONAME_LDNS, _PCAP, _MICROHTTPD to one no system has.
# Usage (from the repository root): tests/cli/test_lazy.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
mkq=$build/mkquery
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
NOW=1700000000
T=$tmp
nope=libdnsnap-test-missing.so.0

for need in "$bin" "$mkq" "$build/mkcaptures"; do
	[ -x "$need" ] || { echo "not ok - $need is not built (make test builds it)"; exit 1; }
done

# ------------------------------------------------- what ld.so loads at exec
readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$T/needed"
ldd "$bin" >"$T/ldd"
for lib in libldns libpcap libmicrohttpd libssl libcrypto libgnutls libdbus libsystemd; do
	ok_if "dnsnap does not load $lib at exec" not grep -q "^[[:space:]]*$lib\." "$T/ldd"
done
ok_if "dnsnap's NEEDED libraries are found" not grep -q "not found" "$T/ldd"
ok_if "dnsnap records at most 8 libraries (NEEDED)" [ "$(wc -l <"$T/needed")" -le 8 ]

# ----------------------------------- with none of the three: what needs none
none="DNSNAP_SONAME_LDNS=$nope DNSNAP_SONAME_PCAP=$nope DNSNAP_SONAME_MICROHTTPD=$nope"
# shellcheck disable=SC2086 # $none is three words on purpose
missing() { env $none "$@"; }
expect "import without ldns, libpcap, libmicrohttpd" 0 missing "$bin" import \
	spec/vectors/valid/302-stream-four-entries.dnsx -o "$T/s.snap" --now $NOW
expect "info without them" 0 missing "$bin" info "$T/s.snap"
expect "verify without them" 0 missing "$bin" verify "$T/s.snap"
expect "get --help without them" 0 missing "$bin" get --help

# env execs serve: $! is the server's process, which the TERM below ends
# shellcheck disable=SC2086
env $none "$bin" serve "$T/s.snap" --listen 127.0.0.1:0 --threads 1 --now $NOW 2>"$T/log" &
pid=$!
i=0
while [ $i -lt 100 ] && ! grep -q "listening on 127.0.0.1:" "$T/log"; do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
	i=$((i + 1))
done
port=$(sed -n 's/^.* info: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/log")
ok_if "serve starts without them" [ -n "$port" ] || cat "$T/log"
if [ -n "$port" ]; then
	"$bin" get "$T/s.snap" www.example.com A --now $NOW 2>&1 | noid >"$T/get"
	"$mkq" udp "$port" --wait 1000 --print --now $NOW "$("$mkq" hex www.example.com A)" 2>&1 |
		noid >"$T/udp"
	ok_if "serve answers without them, as get prints it" cmp -s "$T/udp" "$T/get" ||
		diff "$T/get" "$T/udp" | head -10
	ok_if "the answer is www.example.com's A" grep -q "192\.0\.2\.1" "$T/udp"
fi
[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"
pid=
ok_if "serve never opened them: no message about them" not grep -q "cannot load" "$T/log"

# ------------------------------------ a command that needs one: exit 2, named
# msg WHAT: the message's start (the Debian package is named when dpkg knew it)
msg() { printf 'cannot load %s' "$1"; }
expect "get without ldns: exit 2" 2 env DNSNAP_SONAME_LDNS=$nope "$bin" get "$T/s.snap" \
	www.example.com A --now $NOW
err_has "get: the message names ldns" "dnsnap get: $(msg ldns)"
err_has "get: the message names the soname tried" "$nope"
ok_if "get without ldns prints nothing" [ ! -s "$T/out" ]
expect "dump without ldns: exit 2" 2 env DNSNAP_SONAME_LDNS=$nope "$bin" dump "$T/s.snap"
err_has "dump: the message names ldns" "dnsnap dump: $(msg ldns)"
ok_if "dump without ldns prints nothing" [ ! -s "$T/out" ]
expect "export --format unbound without ldns: exit 2" 2 env DNSNAP_SONAME_LDNS=$nope "$bin" \
	export "$T/s.snap" --format unbound -o "$T/u.txt"
err_has "export: the message names ldns" "dnsnap export: $(msg ldns)"
ok_if "export without ldns leaves no file" [ ! -e "$T/u.txt" ]
ok_if "export without ldns leaves no temporary" [ "$(ls "$T" | grep -c '^u\.txt')" -eq 0 ]

"$build"/mkcaptures "$T/cap" >/dev/null || { echo "not ok - mkcaptures"; exit 1; }
expect "load of a capture without libpcap: exit 2" 2 env DNSNAP_SONAME_PCAP=$nope "$bin" load \
	"$T/c.snap" "$T/cap/ipv4.pcap" --now $NOW
err_has "load: the message names libpcap" "dnsnap: $(msg libpcap)"
ok_if "load without libpcap writes no snapshot" [ ! -e "$T/c.snap" ]
expect "load of a capture with libpcap" 0 "$bin" load "$T/c.snap" "$T/cap/ipv4.pcap" --now $NOW
expect "load of Unbound's text without libpcap" 0 env DNSNAP_SONAME_PCAP=$nope "$bin" load \
	"$T/u.snap" tests/fixtures/unbound-dump_cache.txt --now $NOW

expect "serve --metrics without libmicrohttpd: exit 2" 2 env DNSNAP_SONAME_MICROHTTPD=$nope \
	"$bin" serve "$T/s.snap" --listen 127.0.0.1:0 --metrics 127.0.0.1:0 --now $NOW
err_has "serve --metrics: the message names libmicrohttpd" \
	"dnsnap serve: --metrics: $(msg libmicrohttpd)"

[ "$fails" -eq 0 ]
