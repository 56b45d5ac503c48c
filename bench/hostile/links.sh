#!/bin/sh
# bench/hostile/links.sh: planted links (issue 22, item 2), as root, old binary
# against new:  bench/hostile/links.sh OLD_DNSNAP NEW_DNSNAP
# In a directory of mode 1777, a link nobody owns points at a root-owned file; each
# command is run through it and the line says its exit status and whether the file
# it points at changed (or, for serve's dangling link, was created at SIGTERM).
set -u
[ "$(id -u)" = 0 ] || { echo "run as root (chown -h)"; exit 1; }
fix=tests/fixtures/unbound-dump_cache.txt
for bin in "$@"; do
	T=$(mktemp -d)
	chmod 0755 "$T"
	mkdir -m 1777 "$T/sticky"
	"$bin" load "$T/s.snap" "$fix" 2>/dev/null >/dev/null
	"$bin" export "$T/s.snap" -o "$T/s.dnsx" 2>/dev/null
	echo "== $bin"
	for cmd in export import load purge; do
		printf 'precious\n' >"$T/victim.txt"
		"$bin" load "$T/victim.snap" "$fix" --now -1h >/dev/null 2>&1
		cp "$T/victim.txt" "$T/t.orig"; cp "$T/victim.snap" "$T/s.orig"
		rm -f "$T/sticky/l"
		case $cmd in export) ln -s "$T/victim.txt" "$T/sticky/l" ;; *) ln -s "$T/victim.snap" "$T/sticky/l" ;; esac
		chown -h nobody "$T/sticky/l"
		case $cmd in
		export) "$bin" export "$T/s.snap" -o "$T/sticky/l" ;;
		import) "$bin" import "$T/s.dnsx" -o "$T/sticky/l" ;;
		load) "$bin" load "$T/sticky/l" "$fix" ;;
		purge) "$bin" purge "$T/sticky/l" --expired --now +2d ;;
		esac >/dev/null 2>&1
		rc=$?
		changed=no
		cmp -s "$T/victim.txt" "$T/t.orig" && cmp -s "$T/victim.snap" "$T/s.orig" || changed=yes
		echo "$cmd -o/through the link: exit $rc, root's file replaced: $changed"
	done
	rm -f "$T/sticky/d" "$T/nothere.snap"
	ln -s "$T/nothere.snap" "$T/sticky/d" && chown -h nobody "$T/sticky/d"
	"$bin" serve "$T/sticky/d" --upstream 127.0.0.1:9 --listen 127.0.0.1:0 >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	echo "serve of a dangling link, SIGTERM after 1 s: exit $rc, file created where it points: $([ -e "$T/nothere.snap" ] && echo "yes ($(stat -c %U "$T/nothere.snap"))" || echo no)"
	rm -rf "$T"
done
