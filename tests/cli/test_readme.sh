#!/bin/sh
# The README's promises: the tour's commands run, the C example builds and
# works, and README.md and doc/*.md point only at files in the repository.
#
# - The tour is every ```sh block of README.md whose first line starts with
#   "# tour". Its commands run in order in one shell (so cd and variables carry
#   over), each exit code checked: 0, or N for a line ending in "# exit N".
#   Two substitutions keep the commands as a user types them: "$src/build"
#   becomes a directory of wrappers for BUILD's programs (the tests may run
#   against another build, such as build-asan), and the port of a
#   "dnsnap serve ... --listen 127.0.0.1:PORT 2> LOG &" line becomes a free one;
#   the script then waits for LOG to say "listening" before going on.
# - The ```c block is compiled against BUILD's library (when BUILD has one) with
#   a main of this test's that uses each function: cold start, an answer from
#   memory, the shutdown snapshot, a warm start, the same answer from the map.
# - Links: every relative Markdown link and every `path` in backquotes that
#   names a file or directory under one of the repository's top folders must
#   exist; nothing may point outside the repository.
# Usage (from the repository root): tests/cli/test_readme.sh BUILD
set -u
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
tmp=$(mktemp -d)
bgpid=
cleanup() {
	[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP
fails=0
readme=README.md

ok() { echo "ok - $1"; }
not_ok() { # NAME [FILE of details]
	echo "not ok - $1"
	[ $# -gt 1 ] && sed 's/^/#   /' "$2" | head -30
	fails=$((fails + 1))
}

for p in dnsnap resolver_demo; do
	[ -x "$build/$p" ] || { not_ok "$build/$p is not built (make test builds it)"; exit 1; }
done

# ---------------------------------------------------------------- the tour
mkdir "$tmp/bin" "$tmp/logs"
for p in dnsnap resolver_demo; do
	printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$build" "$p" >"$tmp/bin/$p"
	chmod +x "$tmp/bin/$p"
done
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])' 2>/dev/null) || port=$((20000 + $$ % 20000))

# The tour's lines, numbered as in README.md: "LINENO<TAB>COMMAND".
awk '
	/^```sh$/ { inblock = 1; first = 1; next }
	/^```/ { inblock = 0; tour = 0; next }
	inblock && first { first = 0; tour = ($0 ~ /^# tour/) }
	inblock && tour && $0 !~ /^[ \t]*#/ && $0 !~ /^[ \t]*$/ { print NR "\t" $0 }
' "$readme" >"$tmp/tour.txt"
n=$(wc -l <"$tmp/tour.txt")
if [ "$n" -lt 10 ]; then
	not_ok "the tour has only $n commands: are its blocks marked '# tour'?"
fi

# One script: each command, then its check. The command goes through eval, so
# quoting stays as written; stdout and stderr go to logs/LINENO unless the
# command sends them elsewhere itself.
{
	echo 'set -u'
	echo "logs='$tmp/logs' fails=0"
	echo 'check() { # LINENO WANT GOT COMMAND'
	echo '	if [ "$3" -eq "$2" ]; then echo "ok - README line $1: $4";'
	echo '	else echo "not ok - README line $1: exit $3, expected $2: $4";'
	echo '		sed "s/^/#   /" "$logs/$1" | head -20; fails=$((fails + 1)); fi; }'
	echo 'listening() { # LOG: wait up to 10 s for the server to listen'
	echo '	i=0; while [ $i -lt 200 ]; do grep -q "listening" "$1" 2>/dev/null && return 0;'
	echo '		sleep 0.05; i=$((i + 1)); done; return 1; }'
	tab=$(printf '\t')
	while IFS=$tab read -r line cmd; do
		want=0
		case $cmd in *"# exit "[0-9]*) want=${cmd##*# exit } ;; esac
		run=$(printf '%s' "$cmd" | sed -e "s|\\\$src/build|$tmp/bin|g" \
			-e "s|127\\.0\\.0\\.1:5354|127.0.0.1:$port|g" -e "s|-p 5354|-p $port|g")
		quoted=$(printf '%s' "$cmd" | sed "s/'/'\\\\''/g")
		runq=$(printf '%s' "$run" | sed "s/'/'\\\\''/g")
		case $run in
		*"&")
			echo "eval '$runq' >\"\$logs/$line\" 2>&1; bg=\$!; echo \"\$bg\" >'$tmp/bgpid'"
			slog=$(printf '%s' "$run" | sed -n 's/.* 2> *\([^ ]*\) *&$/\1/p')
			if [ -n "$slog" ]; then
				echo "listening '$slog'; check $line 0 \$? '$quoted'"
			else
				echo "check $line 0 0 '$quoted'"
			fi
			;;
		*)
			echo "eval '$runq' >\"\$logs/$line\" 2>&1; check $line $want \$? '$quoted'"
			;;
		esac
	done <"$tmp/tour.txt"
	echo 'exit $fails'
} >"$tmp/tour.sh"

TMPDIR=$tmp sh "$tmp/tour.sh" >"$tmp/tour.out" 2>&1
tour_fails=$?
cat "$tmp/tour.out"
fails=$((fails + tour_fails))
[ -s "$tmp/bgpid" ] && bgpid=$(cat "$tmp/bgpid")

# What the tour's key steps printed, beyond their exit codes.
# log_of TEXT: the log of the first tour line holding TEXT
log_of() { echo "$tmp/logs/$(grep -F -- "$1" "$tmp/tour.txt" | head -1 | cut -f1)"; }
l=$(log_of "dnsnap verify cache.snap")
grep -q "cache.snap: good: 1000 entries" "$l" 2>/dev/null &&
	ok "tour: verify finds 1000 good entries" ||
	not_ok "tour: verify did not print 'good: 1000 entries'" "$l"
l=$(log_of "resolver_demo start")
grep -q "1000 hits, 0 misses" "$l" 2>/dev/null && ok "tour: the warm start hits every name" ||
	not_ok "tour: the warm start missed" "$l"
l=$(log_of "dig @127.0.0.1")
[ "$(grep -cE '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' "$l" 2>/dev/null)" -eq 4 ] &&
	ok "tour: dig gets the 4 addresses from dnsnap serve" ||
	not_ok "tour: dig did not get 4 addresses" "$l"

# ---------------------------------------------------------------- the C example
awk '/^```c$/ { c = 1; next } /^```/ { c = 0 } c' "$readme" >"$tmp/example.c"
cat >"$tmp/main.c" <<'EOF'
/* Drives the README's example: tests/cli/test_readme.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dnsnap/dnsnap.h>

int answer(dnsnap_cache_t *cache, const uint8_t *query, size_t len,
	   uint8_t *out, size_t cap, size_t *out_len);
int cache_response(dnsnap_cache_t *cache, const uint8_t *msg, size_t len,
		   dnsnap_encoded_t *scratch);
int save(dnsnap_cache_t *cache, const char *path);
int start(const char *path, dnsnap_cache_t **cache, dnsnap_snap_t **snap);

static int no(const char *what)
{
	fprintf(stderr, "example: %s\n", what);
	return 1;
}

/* argv[1]: a DNS response for www.example.com A; argv[2]: the snapshot path */
int main(int argc, char **argv)
{
	static uint8_t msg[65536], out[65536], query[512];
	static dnsnap_encoded_t scratch;
	dnsnap_cache_t *c;
	dnsnap_snap_t *s;
	size_t len, out_len;
	FILE *f;

	if (argc != 3 || (f = fopen(argv[1], "rb")) == NULL)
		return no("usage: example RESPONSE SNAP");
	len = fread(msg, 1, sizeof msg, f);
	fclose(f);
	/* the query: the response's header and question, QR and counts cleared */
	size_t q_end = 12;
	while (q_end < len && msg[q_end] != 0)
		q_end += 1u + msg[q_end];
	q_end += 5;
	memcpy(query, msg, q_end);
	query[2] &= 0x7f;
	memset(query + 6, 0, 6);

	if (start(argv[2], &c, &s) != DNSNAP_OK || s != NULL)
		return no("a cold start without a snapshot");
	if (answer(c, query, q_end, out, sizeof out, &out_len) != DNSNAP_ENOTFOUND)
		return no("an empty cache answered");
	if (cache_response(c, msg, len, &scratch) != DNSNAP_OK)
		return no("cache_response");
	if (answer(c, query, q_end, out, sizeof out, &out_len) != DNSNAP_OK)
		return no("no answer from memory");
	if (save(c, argv[2]) != DNSNAP_OK)
		return no("save");
	dnsnap_cache_free(c);

	if (start(argv[2], &c, &s) != DNSNAP_OK || s == NULL)
		return no("no warm start from the snapshot");
	if (answer(c, query, q_end, out, sizeof out, &out_len) != DNSNAP_OK)
		return no("no answer from the map");
	if (out_len < q_end || memcmp(out + 12, query + 12, q_end - 12) != 0 ||
	    (out[7] | out[6] << 8) != 1)
		return no("the answer from the map is not the cached one");
	dnsnap_cache_free(c);
	dnsnap_snap_close(s);
	printf("cold start, cached, saved, warm start, answered from the map\n");
	return 0;
}
EOF
lib=$build/libdnsnap.a
if [ ! -f "$lib" ]; then
	ok "the C example: $lib is not here (a wrapped build), not compiled # skip"
else
	# <dnsnap/dnsnap.h>: the installed layout, from the tree as it is
	if [ -f include/dnsnap/dnsnap.h ]; then
		inc=-Iinclude
	else
		mkdir -p "$tmp/inc/dnsnap"
		ln -s "$PWD/engine/dnsnap.h" "$PWD/format/dnsnap_format.h" "$tmp/inc/dnsnap/"
		inc=-I$tmp/inc
	fi
	san=
	nm "$lib" 2>/dev/null | grep -q ' U __asan_' && san="-fsanitize=address,undefined"
	# shellcheck disable=SC2086 # words
	if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $san $inc -o "$tmp/example" "$tmp/example.c" \
		"$tmp/main.c" "$lib" -llmdb -lxxhash -lzstd -pthread >"$tmp/cc.err" 2>&1; then
		ok "the C example compiles with -Wall -Wextra -Werror"
		if "$tmp/example" spec/vectors/valid/001-a.msg "$tmp/example.snap" >"$tmp/ex.out" 2>&1
		then
			ok "the C example: $(cat "$tmp/ex.out")"
		else
			not_ok "the C example fails" "$tmp/ex.out"
		fi
	else
		not_ok "the C example does not compile" "$tmp/cc.err"
	fi
fi

# ---------------------------------------------------------------- links
root=$PWD
: >"$tmp/bad"
for doc in "$readme" doc/*.md; do
	[ -f "$doc" ] || continue
	dir=$(dirname "$doc")
	# Markdown links: relative to the document's folder
	grep -o '\]([^)]*)' "$doc" | sed 's/^](//; s/)$//; s/#.*//' | while read -r t; do
		case $t in http://* | https://* | mailto:* | "") continue ;; esac
		real=$(realpath -m "$dir/$t")
		case $real in "$root"/*) ;; *) echo "$doc: link outside the repository: $t" ;; esac
		[ -e "$real" ] || echo "$doc: broken link: $t"
	done >>"$tmp/bad"
	# `paths` in backquotes, relative to the repository's root
	grep -o '`[a-z]*/[A-Za-z0-9_./-]*`' "$doc" | tr -d '`' | while read -r t; do
		case $t in
		format/* | engine/* | cli/* | spec/* | tests/* | bench/* | doc/*) ;;
		*) continue ;;
		esac
		[ -e "$t" ] || echo "$doc: names a path that is not there: $t"
	done >>"$tmp/bad"
	grep -n '\.\./\|/work/\|DESIGN\.md' "$doc" | sed "s|^|$doc: points outside: |" |
		grep -v '](\.\./[a-zA-Z]' >>"$tmp/bad"
done
if [ -s "$tmp/bad" ]; then
	not_ok "links and paths in README.md and doc/*.md" "$tmp/bad"
else
	ok "every link and path in README.md and doc/*.md is in the repository"
fi

[ "$fails" -eq 0 ]
