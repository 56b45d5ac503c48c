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
