#!/bin/sh
# CLI tests: expected stdout, stderr and exit codes. Usage: test_cli.sh BUILD
set -u
bin=${1:-build}/dnsnap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect NAME CODE COMMAND...: runs COMMAND, checks its exit code
expect() {
	name=$1 code=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$code" ]; then
		echo "not ok - $name: exit $got, expected $code"; sed 's/^/#   /' "$tmp/err"
		fails=$((fails + 1))
		return 1
	fi
	echo "ok - $name"
}
# same_as NAME FILE: the last stdout equals FILE
same_as() {
	if ! cmp -s "$tmp/out" "$2"; then
		echo "not ok - $1: output differs from $2"; diff "$2" "$tmp/out" | head -20
		fails=$((fails + 1))
	fi
}
# err_has NAME TEXT: the last stderr holds TEXT
err_has() {
	if ! grep -qF -- "$2" "$tmp/err"; then
		echo "not ok - $1: stderr lacks '$2':"; cat "$tmp/err"
		fails=$((fails + 1))
	fi
}

expect "--version" 0 "$bin" --version && grep -q '^dnsnap .* (format 1\.0)$' "$tmp/out" ||
	{ echo "not ok - version line"; fails=$((fails + 1)); }
expect "--help" 0 "$bin" --help
expect "no command is bad usage" 2 "$bin"
expect "unknown command is bad usage" 2 "$bin" frobnicate && err_has unknown "unknown command 'frobnicate'"
expect "decode: missing file" 2 "$bin" decode "$tmp/none.bin" && err_has missing "$tmp/none.bin: No such file"

# every valid vector decodes to its expected text; encode reproduces its bytes
for m in spec/vectors/valid/*.msg; do
	v=${m%.msg}
	expect "decode $(basename "$v")" 0 "$bin" decode "$v.bin" && same_as "decode $v" "$v.txt"
	expect "encode $(basename "$v")" 0 "$bin" encode "$m" --now 1700000000 -o "$tmp/e.bin" &&
		{ cmp -s "$tmp/e.bin" "$v.bin" || { echo "not ok - encode $v: bytes differ"; fails=$((fails + 1)); }; }
done
# stdin and stdout as -
expect "encode from stdin to stdout" 0 sh -c "'$bin' encode - --now 1700000000 < spec/vectors/valid/001-a.msg"
same_as "encode stdin" spec/vectors/valid/001-a.bin

# bad data: exit 2, the file, the code and the offset named
expect "decode: invalid entry" 2 "$bin" decode spec/vectors/invalid/107-auth-off-not-on-a-record.bin &&
	err_has "invalid entry" "107-auth-off-not-on-a-record.bin: DNSNAP_EFIELD in the entry at offset 14"
expect "decode: invalid key" 2 "$bin" decode spec/vectors/invalid/131-key-upper-case.bin &&
	err_has "invalid key" "DNSNAP_EFIELD in the key at offset 1"
expect "encode: malformed message" 2 "$bin" encode spec/vectors/invalid/202-msg-label-over-63.msg &&
	err_has "malformed message" "202-msg-label-over-63.msg: DNSNAP_ELABEL at offset 12"
printf 'x' > "$tmp/short.bin"
expect "decode: one byte" 2 "$bin" decode "$tmp/short.bin" && err_has short "DNSNAP_ETRUNC"
expect "encode: bad --now" 2 "$bin" encode spec/vectors/valid/001-a.msg --now soon && err_has now "--now"

# the demo runs over the worked examples
expect "demo" 0 "$bin" demo spec/vectors/valid/*.msg && grep -q '^11 responses: ' "$tmp/out" ||
	{ echo "not ok - demo summary"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ]
