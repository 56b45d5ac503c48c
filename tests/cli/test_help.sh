#!/bin/sh
# The help texts: `dnsnap --help` lists every command; `dnsnap help CMD` and
# `dnsnap CMD --help` print the same, exit 0, and begin with the command's
# usage; every option in a usage line is explained under it; every line fits
# in 80 columns; the man page, doc/dnsnap.1, covers every command and option.
# Usage (from the repository root): tests/cli/test_help.sh BUILD
set -u
bin=${1:-build}/dnsnap
man=doc/dnsnap.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# The command-line contract: every command, in the overview's order.
commands="demo encode decode info stats dump diff get verify load purge export import serve control help"

ok() { echo "ok - $1"; }
not_ok() { # NAME [FILE of details]
	echo "not ok - $1"
	[ $# -gt 1 ] && sed 's/^/#   /' "$2"
	fails=$((fails + 1))
}
# fits NAME FILE: no line over 80 columns, no tab
fits() {
	awk 'length > 80 || /\t/ { printf "line %d: %s\n", NR, $0 }' "$2" >"$tmp/wide"
	[ -s "$tmp/wide" ] && not_ok "$1: lines over 80 columns or with tabs" "$tmp/wide"
}

if "$bin" --help >"$tmp/overview" 2>"$tmp/err"; then
	ok "--help exits 0"
else
	not_ok "--help exits $?" "$tmp/err"
fi
fits "--help" "$tmp/overview"
grep -q '^usage: dnsnap ' "$tmp/overview" || not_ok "--help has no usage line" "$tmp/overview"
for word in "dnsnap help CMD" "dnsnap CMD --help" "Exit status" "Environment"; do
	grep -qF "$word" "$tmp/overview" || not_ok "--help does not mention $word"
done
"$bin" help >"$tmp/out" 2>&1 && cmp -s "$tmp/out" "$tmp/overview" && ok "help = --help" ||
	not_ok "dnsnap help differs from dnsnap --help" "$tmp/out"

# The commands the overview lists: the indented lines of its Commands block.
sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$tmp/overview" | tr '\n' ' ' |
	sed 's/ $//' >"$tmp/listed"
if [ "$(cat "$tmp/listed")" = "$commands" ]; then
	ok "--help lists every command: $commands"
else
	echo "expected: $commands" >>"$tmp/listed"
	not_ok "--help lists other commands" "$tmp/listed"
fi

for c in $commands; do
	if ! "$bin" help "$c" >"$tmp/help" 2>"$tmp/err"; then
		not_ok "help $c exits $?" "$tmp/err"
		continue
	fi
	"$bin" "$c" --help >"$tmp/opt" 2>"$tmp/err" || not_ok "$c --help exits $?" "$tmp/err"
	if ! cmp -s "$tmp/help" "$tmp/opt"; then
		diff "$tmp/help" "$tmp/opt" | head -20 >"$tmp/diff"
		not_ok "help $c differs from $c --help" "$tmp/diff"
		continue
	fi
	fits "help $c" "$tmp/help"
	head -1 "$tmp/help" | grep -q "^usage: dnsnap $c\\b" ||
		not_ok "help $c does not begin with its usage" "$tmp/help"
	# The usage lines: up to the first blank line. Each option there is
	# explained on an indented line of its own, and named in the man page.
	sed '/^$/q' "$tmp/help" | grep -o -- '-[-a-z0-9]*[a-z0-9]' | sort -u >"$tmp/opts"
	while read -r o; do
		grep -q -- "^  $o\\b" "$tmp/help" || not_ok "help $c does not explain $o"
		m=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
		grep -q -- "$m\\b" "$man" || not_ok "$man does not name $c's $o"
	done <"$tmp/opts"
	grep -q "^\\.SS $c\$" "$man" || not_ok "$man has no section for $c"
	ok "help $c = $c --help, $(wc -l <"$tmp/help") lines, options: $(tr '\n' ' ' <"$tmp/opts")"
done

"$bin" help frobnicate >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q frobnicate "$tmp/err" &&
	ok "help of an unknown command: exit 2, named on stderr" ||
	not_ok "help frobnicate: not exit 2 with a message" "$tmp/err"

[ "$fails" -eq 0 ]
