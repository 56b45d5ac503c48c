# lib.sh: what the CLI test scripts share. Source it with bin and tmp set.
# expect() sets the global "name": don't use that name in a calling script.
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
# says NAME LINE: the last stderr is exactly LINE
says() {
	if [ "$(cat "$tmp/err")" != "$2" ]; then
		echo "not ok - $1: stderr is not exactly:"; echo "#   $2"; sed 's/^/# got /' "$tmp/err"
		fails=$((fails + 1))
	else
		echo "ok - $1: the message"
	fi
}
# err_has NAME TEXT: the last stderr holds TEXT
err_has() {
	if ! grep -qF -- "$2" "$tmp/err"; then
		echo "not ok - $1: stderr lacks '$2':"; cat "$tmp/err"
		fails=$((fails + 1))
	fi
}

# ok_if NAME CONDITION...: a check of its own
ok_if() {
	n=$1
	shift
	if "$@"; then echo "ok - $n"; else echo "not ok - $n"; fails=$((fails + 1)); fi
}
# not COMMAND...: succeeds when COMMAND fails (for ok_if)
not() { ! "$@"; }
# frame FILE...: each file as a TCP-framed message (2-byte big-endian length)
frame() {
	for f in "$@"; do
		n=$(wc -c < "$f")
		printf "\\$(printf %03o $((n >> 8)))\\$(printf %03o $((n & 255)))"
		cat "$f"
	done
}
# lines_ok NAME PYTHON-ASSERTION: the last stdout is JSON lines (list l)
lines_ok() {
	if python3 -c "import json, sys
l = [json.loads(x) for x in open(sys.argv[1])]
assert $2, l" "$tmp/out" 2>"$tmp/py"; then
		echo "ok - $1"
	else
		echo "not ok - $1"; sed 's/^/#   /' "$tmp/py" | tail -3; fails=$((fails + 1))
	fi
}
# noid: the message ID out of printed replies (get asks with a random one)
noid() { sed 's/^\(;; ->>HEADER<<- .*, id: \)[0-9]*$/\1ID/'; }
