#!/bin/sh
# bench/hostile/auth.sh: a Redis AUTH file of mode 0600 owned by another user (issue
# 22, item 3), as root: old binary against new.
#   bench/hostile/auth.sh OLD_DNSNAP NEW_DNSNAP
# Prints for each binary the exit status and first line of `import --from` with the
# file (redis://127.0.0.1:1: nothing listens, so a binary that accepted the file goes
# on to connect and fails there instead).
set -u
[ "$(id -u)" = 0 ] || { echo "run as root (chown)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'hunter2\n' >"$tmp/auth"
chmod 0600 "$tmp/auth"
chown nobody "$tmp/auth"
for bin in "$@"; do
	"$bin" import --from redis://127.0.0.1:1 --l2-auth-file "$tmp/auth" -o "$tmp/i.snap" \
		>/dev/null 2>"$tmp/err"
	echo "$bin: exit $?: $(head -1 "$tmp/err")"
done
